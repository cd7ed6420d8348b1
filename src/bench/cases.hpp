#pragma once
// What `cudaconv bench` measures: image sizes, filters, depths and
// variants, parsed from the command line's lists. Pure functions; every
// bad entry is a UsageError (exit 2) that names it.
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/types.hpp"
#include "filters/filter.hpp"

namespace cudaconv {

// The sizes of the convolution-test tables the project grew from (RGB),
// plus 4000x3000 gray; the filters; one integer and the float depth.
constexpr const char* kDefaultBenchSizes = "780x585x3,2000x1000x3,4000x3000x3,4000x3000x1";
constexpr const char* kDefaultBenchFilters = "edge,gaussian:5,random:7,random:15,random:31";
constexpr const char* kDefaultBenchDepths = "u8,f32";

// Far beyond any photograph, small enough that a typo (`40000x30000`)
// fails at once instead of allocating gigabytes of random input.
constexpr std::int64_t kMaxBenchSide = 32768;

struct BenchSize {
    std::int64_t width = 0;
    std::int64_t height = 0;
    int channels = 3;  // WxH means RGB, as in the seeds' tables

    std::string label() const;  // "4000x3000x3"
    friend bool operator==(const BenchSize& a, const BenchSize& b) {
        return a.width == b.width && a.height == b.height && a.channels == b.channels;
    }
};

// "WxH" (3 channels) or "WxHxC" with C 1, 3 or 4.
BenchSize parse_bench_size(const std::string& text);

// Each entry a comma list; duplicates dropped, order kept.
std::vector<BenchSize> parse_bench_sizes(const std::vector<std::string>& lists);

// Splits a comma list of filter specs. An inline spec's values have commas
// too: a field that is a number joins the inline spec before it, so
// "edge,3x3:1,2,1,2,4,2,1,2,1,box:3" is three specs.
std::vector<std::string> split_filter_list(const std::string& list);

// Anything `-f` accepts (filters/spec.hpp), plus `random:N` or `random:WxH`:
// a dense random filter from a fixed seed (bench/random_data.hpp).
Filter make_bench_filter(const std::string& spec);

// Each entry a comma list (split_filter_list); duplicates dropped.
std::vector<Filter> parse_bench_filters(const std::vector<std::string>& lists);

// Each entry a comma list of u8, u16, f32.
std::vector<Depth> parse_bench_depths(const std::vector<std::string>& lists);

// "all": every registered variant, in registry order; else a comma list of
// names, each of which must be registered.
// "all" (every variant but the composites' named paths), or a comma list
// of names, NAME.* standing for the named paths of NAME (fast.*).
std::vector<Backend*> select_bench_variants(const std::string& list);
// --peer: a comma list of peers' names (opencv), each once; UsageError
// for another name. The peers live as long as the process.
std::vector<Backend*> select_bench_peers(const std::string& list);
// The values of `tuning` that `variant` reads.
Tuning tuning_for(const Backend& variant, const Tuning& tuning);
// Throws UsageError when some value of `tuning` is read by none of
// `variants`, or is out of range for one that reads it.
void check_bench_tuning(const Tuning& tuning, const std::vector<Backend*>& variants);

}  // namespace cudaconv
