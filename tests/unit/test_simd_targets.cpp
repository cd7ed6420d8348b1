// simd_rows picks its Highway target with a CPU check of its own
// (simd_rows.cpp says why): held here to the kernel's view of the CPU and,
// where the build links Highway's library, to Highway's own check. A
// target picked wrongly would either run instructions the CPU lacks or
// leave the vector units it has unused.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <hwy/highway.h>

#include "cpu/simd_rows.hpp"

namespace cudaconv {
namespace {

// The "flags" of /proc/cpuinfo's first processor: the features the kernel
// reports and has enabled (it leaves out those whose registers it does not
// save). Empty where there is no such file.
std::set<std::string> cpuinfo_flags() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        std::set<std::string> flags;
        for (std::string word; words >> word;) flags.insert(word);
        return flags;
    }
    return {};
}

bool has_all(const std::set<std::string>& flags, std::initializer_list<const char*> wanted) {
    for (const char* flag : wanted) {
        if (flags.count(flag) == 0) return false;
    }
    return true;
}

}  // namespace

TEST_CASE("simd_rows' targets are those the kernel reports the CPU runs", "[simd]") {
    const std::set<std::string> flags = cpuinfo_flags();
    REQUIRE(!flags.empty());  // Linux has it
    // Each target's features, in /proc/cpuinfo's names (sse3 is "pni", bmi
    // "bmi1"), each target needing the one below too. Not lzcnt ("abm"),
    // which virtual machines' kernels may leave out of the list though the
    // CPU runs it (as this project's development machine's does).
    const bool ssse3 = has_all(flags, {"sse2", "pni", "ssse3"});
    const bool sse4 = ssse3 && has_all(flags, {"sse4_1", "sse4_2", "pclmulqdq", "aes"});
    const bool avx2 = sse4 && has_all(flags, {"avx", "avx2", "fma", "f16c", "bmi1", "bmi2"});
    const bool avx3 = avx2 && has_all(flags, {"avx512f", "avx512vl", "avx512dq", "avx512bw"});
    const std::int64_t targets = simd_targets();
    CHECK(((targets & HWY_SSSE3) != 0) == ssse3);
    CHECK(((targets & HWY_SSE4) != 0) == sse4);
    CHECK(((targets & HWY_AVX2) != 0) == avx2);
    CHECK(((targets & HWY_AVX3) != 0) == avx3);
    // Nothing else: the targets past AVX3 (AVX3_DL, ...) are not picked.
    CHECK((targets & ~(HWY_SSSE3 | HWY_SSE4 | HWY_AVX2 | HWY_AVX3)) == 0);
}

#ifdef CUDACONV_HWY_LIBRARY
TEST_CASE("simd_rows' targets are those Highway's own check finds", "[simd]") {
    const std::int64_t ours = HWY_SSSE3 | HWY_SSE4 | HWY_AVX2 | HWY_AVX3;
    CHECK(simd_targets() == (static_cast<std::int64_t>(hwy::SupportedTargets()) & ours));
}
#endif

}  // namespace cudaconv
