// The figures from /proc, the cgroup file system (v2, else v1) and the
// resource limits; the verdict from them alone.
#include "io/memory_check.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string_view>

namespace cudaconv {
namespace {

constexpr std::uint64_t kKiB = 1024;
// cgroup v1 says "no limit" with a huge number (LONG_MAX rounded to pages).
constexpr std::uint64_t kNoCgroupLimit = std::uint64_t{1} << 60;

std::optional<std::uint64_t> parse_number(std::string_view text) {
    std::uint64_t value = 0;
    std::size_t digits = 0;
    for (; digits < text.size() && text[digits] >= '0' && text[digits] <= '9'; ++digits) {
        if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
        value = value * 10 + static_cast<std::uint64_t>(text[digits] - '0');
    }
    if (digits == 0) return std::nullopt;
    return value;
}

std::optional<std::string> first_line(const std::string& path) {
    std::ifstream file(path);
    std::string line;
    if (!std::getline(file, line)) return std::nullopt;
    return line;
}

std::optional<std::uint64_t> number_in(const std::string& path) {
    const std::optional<std::string> line = first_line(path);
    return line ? parse_number(*line) : std::nullopt;
}

// The value after "key" on the line that starts with it, in files such as
// /proc/meminfo ("MemAvailable:   2048 kB") and memory.stat ("inactive_file 4096").
std::optional<std::uint64_t> keyed_number(const std::string& path, std::string_view key) {
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) {
        if (line.compare(0, key.size(), key) != 0) continue;
        std::string_view rest = std::string_view(line).substr(key.size());
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
            rest.remove_prefix(1);
        return parse_number(rest);
    }
    return std::nullopt;
}

// This process's cgroup path for the memory controller: "0::/x" (v2) or
// "4:memory:/x" (v1).
std::optional<std::string> cgroup_path(bool v2) {
    std::ifstream file("/proc/self/cgroup");
    std::string line;
    while (std::getline(file, line)) {
        const std::size_t first = line.find(':');
        const std::size_t second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        if (v2 ? line.compare(0, first, "0") == 0 && controllers.empty()
               : ("," + controllers + ",").find(",memory,") != std::string::npos) {
            return line.substr(second + 1);
        }
    }
    return std::nullopt;
}

struct CgroupRoom {
    std::uint64_t limit = 0;
    std::uint64_t usage = 0;
    std::uint64_t room() const { return limit > usage ? limit - usage : 0; }
};

void keep_tighter(std::optional<CgroupRoom>& tightest, CgroupRoom candidate) {
    if (!tightest || candidate.room() < tightest->room()) tightest = candidate;
}

std::uint64_t less_reclaimable(std::uint64_t usage, std::optional<std::uint64_t> inactive_file) {
    const std::uint64_t reclaimable = inactive_file.value_or(0);
    return usage > reclaimable ? usage - reclaimable : 0;
}

// v2: every cgroup from this process's up to the root may set memory.max.
// In a container the path may not exist under the mount (its root is the
// container's cgroup): then the mount's root is the one to read.
std::optional<CgroupRoom> cgroup_v2_room() {
    const std::string mount = "/sys/fs/cgroup";
    const std::optional<std::string> path = cgroup_path(true);
    if (!path || !first_line(mount + "/cgroup.controllers")) return std::nullopt;
    std::string dir = mount + *path;
    if (!first_line(dir + "/memory.current")) dir = mount;
    std::optional<CgroupRoom> tightest;
    for (;;) {
        const std::optional<std::string> max = first_line(dir + "/memory.max");
        const std::optional<std::uint64_t> limit = max ? parse_number(*max) : std::nullopt;
        const std::optional<std::uint64_t> usage = number_in(dir + "/memory.current");
        if (limit && usage) {
            keep_tighter(tightest,
                         {*limit, less_reclaimable(*usage, keyed_number(dir + "/memory.stat",
                                                                        "inactive_file "))});
        }
        if (dir.size() <= mount.size()) break;
        dir = dir.substr(0, dir.find_last_of('/'));
    }
    return tightest;
}

// v1: hierarchical_memory_limit already takes the ancestors' limits in.
std::optional<CgroupRoom> cgroup_v1_room() {
    const std::string mount = "/sys/fs/cgroup/memory";
    const std::optional<std::string> path = cgroup_path(false);
    if (!path) return std::nullopt;
    std::string dir = mount + *path;
    if (!first_line(dir + "/memory.usage_in_bytes")) dir = mount;
    const std::string stat = dir + "/memory.stat";
    std::optional<std::uint64_t> limit = keyed_number(stat, "hierarchical_memory_limit ");
    if (!limit) limit = number_in(dir + "/memory.limit_in_bytes");
    const std::optional<std::uint64_t> usage = number_in(dir + "/memory.usage_in_bytes");
    if (!limit || *limit >= kNoCgroupLimit || !usage) return std::nullopt;
    return CgroupRoom{*limit, less_reclaimable(*usage, keyed_number(stat, "total_inactive_file "))};
}

std::optional<std::uint64_t> resource_limit(int resource) {
    rlimit limit{};
    if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return static_cast<std::uint64_t>(limit.rlim_cur);
}

std::uint64_t room(std::uint64_t limit, std::uint64_t used) {
    return limit > used ? limit - used : 0;
}

}  // namespace

MemoryFigures read_memory_figures() {
    MemoryFigures figures;
    if (const auto kib = keyed_number("/proc/meminfo", "MemAvailable:")) {
        figures.mem_available = *kib * kKiB;
    }
    std::optional<CgroupRoom> cgroup = cgroup_v2_room();
    if (!cgroup) cgroup = cgroup_v1_room();
    if (cgroup) {
        figures.cgroup_limit = cgroup->limit;
        figures.cgroup_usage = cgroup->usage;
    }
    figures.address_space_limit = resource_limit(RLIMIT_AS);
    figures.data_limit = resource_limit(RLIMIT_DATA);
    figures.address_space_used = keyed_number("/proc/self/status", "VmSize:").value_or(0) * kKiB;
    figures.data_used = keyed_number("/proc/self/status", "VmData:").value_or(0) * kKiB;
    return figures;
}

std::optional<std::uint64_t> available_memory(const MemoryFigures& f) {
    std::optional<std::uint64_t> least;
    const auto consider = [&least](std::uint64_t bytes) {
        least = least ? std::min(*least, bytes) : bytes;
    };
    if (f.mem_available) consider(*f.mem_available);
    if (f.cgroup_limit) consider(room(*f.cgroup_limit, f.cgroup_usage));
    if (f.address_space_limit) consider(room(*f.address_space_limit, f.address_space_used));
    if (f.data_limit) consider(room(*f.data_limit, f.data_used));
    return least;
}

std::string memory_shortfall(std::uint64_t needed, const MemoryFigures& figures) {
    const std::optional<std::uint64_t> available = available_memory(figures);
    if (!available || needed <= *available) return "";
    return "needs about " + approximate_bytes(needed) + ", " + approximate_bytes(*available) +
           " available";
}

std::string approximate_bytes(std::uint64_t bytes) {
    static constexpr const char* kUnits[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 999.5 && unit + 1 < std::size(kUnits)) {
        value /= 1000;
        ++unit;
    }
    char text[32];
    if (unit == 0 || value >= 9.95) {
        std::snprintf(text, sizeof text, "%.0f %s", value, kUnits[unit]);
    } else {
        std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
    }
    return text;
}

}  // namespace cudaconv
