// fast and its named paths. Each path is a variant of its own (`-k
// fast.strips`, `bench -k fast.tiles`), with its limits, its tuning
// parameters and its launch; `fast` is the composite that picks, for a job,
// the path measured fastest among those that can run it, and says which
// (RunTimings::path):
//
//   fast.registers  gray f32, 3x3: blocks of rows loaded into registers
//                   (kernels/fast/fast_registers.cu)
//   fast.walk-u8    u8, 3x3 integer taps: warps walk bands of rows, DP4A
//                   (kernels/fast/fast_registers_u8.cu)
//   fast.strips     3x3 to 7x7: a warp a band of rows, no block barriers;
//                   DP4A on integer taps (kernels/fast/fast_strips.cu)
//   fast.tiles      3x3 to 15x15: bulk-copied tiles taken as blocks free up
//                   (kernels/fast/fast.cu)
//   fast.mma        any filter up to 33x33 on the tensor cores, 3xTF32
//                   (kernels/fast/dense_mma.cu)
//   fast.separable  a rank-1 filter on fast-separable's kernels
//                   (kernels/fast_separable/fast_separable.hpp), where they
//                   are measured ahead of the others (core/auto_select.hpp,
//                   separable_ahead_of_fast)
//
// A chain of rank-1 steps runs as its one filter (core/chain_compose.hpp)
// where fast gives that filter to fast.separable or to a path of 3x3 to
// 7x7 filters, whose passes are bound by memory, not taps: on
// 4000x3000 gray u8 and f32 a 5x5 took 41 us, a 7x7 f32 57 us, where a
// 3x3 step took 28-32 us and a chain of them moves float32 between steps
// (docs/PERFORMANCE.md, "Filter chains"). A larger one filter on the dense
// paths costs its area, not its side, so those chains run their steps.
//
// All of them but fast.separable stage with Hopper's bulk copies or its
// tensor-core shapes, so fast needs compute capability 9.0.
#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/fast/dense_mma.hpp"
#include "kernels/fast/fast_registers.hpp"
#include "kernels/fast/fast_strips.hpp"
#include "kernels/fast/fast_tiles.hpp"
#include "kernels/fast_separable/fast_separable.hpp"

namespace cudaconv {
namespace {

enum class FastPath { registers, walk_u8, strips, tiles, mma, separable };

constexpr const char* path_name(FastPath path) {
    switch (path) {
        case FastPath::registers: return "fast.registers";
        case FastPath::walk_u8: return "fast.walk-u8";
        case FastPath::strips: return "fast.strips";
        case FastPath::tiles: return "fast.tiles";
        case FastPath::mma: return "fast.mma";
        case FastPath::separable: return "fast.separable";
    }
    return "fast";
}

// Why `path` cannot run the job on `device`, or empty when it can (the
// device's generation aside).
std::string path_refusal(FastPath path, const Job& job, const DeviceInfo& device) {
    const DeviceJob dj = device_job_of(job);
    switch (path) {
        case FastPath::registers: return registers_f32_refusal(dj);
        case FastPath::walk_u8: return walk_u8_refusal(dj, job.params.filter.taps);
        case FastPath::strips: return strips_refusal(dj);
        case FastPath::tiles: return tiles_refusal(job);
        case FastPath::mma: return dense_mma_refusal(job);
        case FastPath::separable: {
            const Support support = fast_separable_support(job, device);
            return support.ok ? std::string() : support.reason;
        }
    }
    return "no such path";
}

std::vector<TuningParam> path_params(FastPath path) {
    switch (path) {
        case FastPath::registers: return registers_f32_tuning_params();
        case FastPath::walk_u8: return walk_u8_tuning_params();
        case FastPath::strips: return strips_tuning_params();
        case FastPath::tiles: return tiles_tuning_params();
        case FastPath::mma: return dense_mma_tuning_params();
        case FastPath::separable: return fast_separable_tuning_params();
    }
    return {};
}

// Whether fast runs `job` with fast-separable's kernels.
bool rank1_on_fast_separable(const Job& job, const DeviceInfo& device) {
    return separable_ahead_of_fast(job) && fast_separable_support(job, device).ok;
}

// The path fast takes for a job one of its paths can run: fast.separable
// where fast-separable's kernels are ahead; the strip path's
// jobs (3x3 to 7x7) on the register paths where they can, else on the
// strips; larger filters on the tensor cores where measured faster or where
// the tiles cannot run them, else on the tiles (the measurements:
// kernels/fast/fast_registers.cu, kernels/fast/dense_mma.cu). dp4a=0 keeps u8 jobs
// off the walk, whose sums are DP4A's, as it keeps them off the strips'.
FastPath choose_fast_path(const Job& job, const Tuning& tuning, const DeviceInfo& device) {
    if (rank1_on_fast_separable(job, device)) return FastPath::separable;
    const DeviceJob dj = device_job_of(job);
    const bool tiles_can = tiles_refusal(job).empty();
    if (strips_refusal(dj).empty() && !dense_mma_preferred(job, true)) {
        if (registers_f32_refusal(dj).empty()) return FastPath::registers;
        if (walk_u8_refusal(dj, job.params.filter.taps).empty() && walk_u8_preferred(dj) &&
            tuning.get("dp4a").value_or(1) != 0) {
            return FastPath::walk_u8;
        }
        return FastPath::strips;
    }
    if (dense_mma_preferred(job, tiles_can) && dense_mma_refusal(job).empty()) return FastPath::mma;
    return FastPath::tiles;
}

// A path's run: `runs` its launches, reported under the path's name.
class FastRun final : public LaunchPlan {
public:
    FastRun(FastPath path, std::unique_ptr<LaunchPlan> runs)
        : path_(path), runs_(std::move(runs)) {}
    void launch(const DeviceJob& job, cudaStream_t stream) const override {
        if (job.dst_width <= 0 || job.dst_height <= 0) return;
        runs_->launch(job, stream);
    }
    std::string_view path() const override { return path_name(path_); }

private:
    FastPath path_;
    std::unique_ptr<LaunchPlan> runs_;
};

std::unique_ptr<LaunchPlan> plan_path(FastPath path, const Job& job, const DeviceJob& dj,
                                      const Tuning& tuning, cudaStream_t stream) {
    std::unique_ptr<LaunchPlan> runs;
    switch (path) {
        case FastPath::registers: {
            const int rows = tuning.get("block_rows")
                                 .value_or(registers_block_rows(dj.src_width, dj.src_height));
            if (rows != 4 && rows != 8) {
                throw std::invalid_argument("fast.registers: block_rows is 4 or 8");
            }
            runs = plan_with_constant_taps(stream, [&] {
                registers_f32_prepare(dj, stream);
                return [rows](const DeviceJob& job, cudaStream_t s) {
                    registers_f32_launch(job, rows, s);
                };
            });
            break;
        }
        case FastPath::walk_u8: {
            const WalkSettings settings = walk_settings(tuning);
            runs = plan_with_constant_taps(stream, [&] {
                registers_u8_prepare(job.params.filter.taps, stream);
                return [settings](const DeviceJob& job, cudaStream_t s) {
                    registers_u8_launch(job, settings, s);
                };
            });
            break;
        }
        case FastPath::strips: {
            const StripSettings settings = strip_settings(tuning);
            runs = plan_with_constant_taps(stream, [&] {
                return [plan = strips_prepare(job, dj, settings, stream)](
                           const DeviceJob& job, cudaStream_t s) { strips_launch(job, plan, s); };
            });
            break;
        }
        case FastPath::tiles:
            runs = tiles_plan(dj, tuning.get("max_blocks").value_or(0), stream);
            break;
        case FastPath::separable: runs = fast_separable_plan(job, dj, tuning, stream); break;
        case FastPath::mma: {
            runs = plan_with_constant_taps(stream, [&] {
                auto mma = std::make_shared<const DenseMmaPath>(
                    job, dj, tuning.get("max_blocks").value_or(0), stream);
                return [mma](const DeviceJob& job, cudaStream_t s) { mma->launch(job, s); };
            });
            break;
        }
    }
    return std::make_unique<FastRun>(path, std::move(runs));
}

Support hopper_check(const DeviceInfo& device, std::string_view name) {
    if (device.cc_major >= 9) return Support::yes();
    return Support::no(fmt::format(
        "{} stages with Hopper's bulk copies and tensor-core shapes (compute capability 9.0); "
        "{} is {}.{}",
        name, device.name, device.cc_major, device.cc_minor));
}

// fast.separable's own kernels run before Hopper, but as a path of fast it
// runs where fast does.
Support path_device_check(FastPath path, const DeviceInfo& device) {
    if (path != FastPath::separable || device.cc_major >= 9)
        return hopper_check(device, path_name(path));
    return Support::no(fmt::format(
        "fast.separable is a path of fast, which needs compute capability 9.0 (Hopper); {} is "
        "{}.{} (-k fast-separable runs the same kernels there)",
        device.name, device.cc_major, device.cc_minor));
}

// Whether fast, or its path `path` by name, runs a chain as its one filter
// `one` (core/chain_compose.hpp): where that filter goes to fast.separable
// or to a path bound by memory (3x3 to 7x7), not to the tiles or the tensor
// cores, whose cost grows with the filter's area.
bool path_runs_composed_chains(FastPath path) {
    return path != FastPath::tiles && path != FastPath::mma;
}

// One of fast's paths, by name.
class FastPathBackend final : public CudaBackend {
public:
    explicit FastPathBackend(FastPath path) : path_(path) {}

    std::string_view name() const override { return path_name(path_); }
    std::string_view summary() const override {
        switch (path_) {
            case FastPath::registers: return "gray f32 3x3: blocks of rows in registers";
            case FastPath::walk_u8: return "u8 3x3 integer taps: warps walk bands of rows (DP4A)";
            case FastPath::strips: return "3x3..7x7: a warp a band of rows (DP4A on integer taps)";
            case FastPath::tiles: return "3x3..15x15: bulk-copied tiles taken as blocks free up";
            case FastPath::mma: return "up to 33x33: banded products on the tensor cores (3xTF32)";
            case FastPath::separable: return "rank-1 filters: fast-separable's kernels";
        }
        return "";
    }
    std::string_view parent() const override { return "fast"; }
    std::optional<int> auto_rank(const Job&) const override { return std::nullopt; }
    std::vector<TuningParam> tuning_params() const override { return path_params(path_); }
    bool runs_composed_chains(const Job&) const override {
        return path_runs_composed_chains(path_);
    }

protected:
    Support check_job(const Job& job, const DeviceInfo& device) const override {
        const Support hopper = path_device_check(path_, device);
        if (!hopper.ok) return hopper;
        const std::string refusal = path_refusal(path_, job, device);
        return refusal.empty() ? Support::yes() : Support::no(refusal);
    }
    std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& dj, const Tuning& tuning,
                                     cudaStream_t stream) const override {
        return plan_path(path_, job, dj, tuning, stream);
    }

private:
    FastPath path_;
};

constexpr FastPath kPaths[] = {FastPath::registers, FastPath::walk_u8, FastPath::strips,
                               FastPath::tiles,     FastPath::mma,     FastPath::separable};

class FastBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "fast"; }
    std::string_view summary() const override {
        return "native depth, Hopper: the fastest of its paths that can run the job (below)";
    }
    std::optional<int> auto_rank(const Job&) const override { return kRankFast; }
    std::vector<TuningParam> tuning_params() const override {
        std::vector<std::vector<TuningParam>> lists;
        for (FastPath path : kPaths) lists.push_back(path_params(path));
        return merge_tuning_params(lists);
    }
    bool runs_composed_chains(const Job& one) const override {
        return path_runs_composed_chains(choose_fast_path(one, Tuning{}, current_device()));
    }

protected:
    Support check_job(const Job& job, const DeviceInfo& device) const override {
        const Support hopper = hopper_check(device, "fast");
        if (!hopper.ok) return hopper;
        if (rank1_on_fast_separable(job, device)) return Support::yes();
        // The tensor-core path takes every shape the others take, and more.
        if (tiles_refusal(job).empty()) return Support::yes();
        const std::string refusal = dense_mma_refusal(job);
        return refusal.empty() ? Support::yes() : Support::no(refusal);
    }
    std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& dj, const Tuning& tuning,
                                     cudaStream_t stream) const override {
        return plan_path(choose_fast_path(job, tuning, current_device()), job, dj, tuning, stream);
    }
};

}  // namespace

std::unique_ptr<Backend> make_fast_backend() { return std::make_unique<FastBackend>(); }

std::vector<std::unique_ptr<Backend>> make_fast_paths() {
    std::vector<std::unique_ptr<Backend>> paths;
    for (FastPath path : kPaths) paths.push_back(std::make_unique<FastPathBackend>(path));
    return paths;
}

}  // namespace cudaconv
