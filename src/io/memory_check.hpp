#pragma once
// How much memory this process can still get, so that an image's buffers
// are weighed before they are allocated: a header claiming a huge image
// then ends in one clear line, not in std::bad_alloc, the OOM killer or
// swapping. The figures are read from the system; the verdict is a pure
// function of them.
#include <cstdint>
#include <optional>
#include <string>

namespace cudaconv {

// What limits this process's memory, in bytes; no value where nothing is
// set or it could not be read.
struct MemoryFigures {
    std::optional<std::uint64_t> mem_available;  // /proc/meminfo's MemAvailable
    // The cgroup (this process's or an ancestor's) that leaves the least
    // room: its limit, and its usage less the page cache it can drop
    // (inactive files), as the kernel would before failing an allocation.
    std::optional<std::uint64_t> cgroup_limit;
    std::uint64_t cgroup_usage = 0;
    std::optional<std::uint64_t> address_space_limit;  // RLIMIT_AS
    std::uint64_t address_space_used = 0;              // VmSize
    std::optional<std::uint64_t> data_limit;           // RLIMIT_DATA
    std::uint64_t data_used = 0;                       // VmData
};

// This process's figures, now.
MemoryFigures read_memory_figures();

// The least that any figure leaves; no value when none limits anything.
std::optional<std::uint64_t> available_memory(const MemoryFigures& figures);

// "" when `needed` bytes fit in what the figures leave, else the words for
// an error: "needs about 6.4 GB, 2.1 GB available".
std::string memory_shortfall(std::uint64_t needed, const MemoryFigures& figures);

// A size for messages, to two significant figures or so: "6.4 GB",
// "850 MB", "12 KB", "100 bytes".
std::string approximate_bytes(std::uint64_t bytes);

}  // namespace cudaconv
