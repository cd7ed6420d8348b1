// Variants keep no state of a job (kernels/runtime/cuda_backend.hpp, LaunchPlan):
// two threads run the same variant at once, each on its own image and
// filter, and each gets its own result. Variants whose taps sit in a
// __constant__ symbol take turns on it; the others overlap.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/chain.hpp"
#include "variants/registry.hpp"
#include "io/image_io.hpp"
#include "kernels/runtime/cuda_host.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/device_scope.hpp"
#include "support/compare.hpp"
#include "support/random_image.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace {

// One thread's job: its own image, filter and expected output.
struct ThreadJob {
    cv::Mat src;
    cv::Mat expected;
    ConvParams params;
};

ThreadJob make_job(int side, int channels, std::uint64_t seed) {
    ThreadJob t;
    t.src = random_image(301, 203, cv_type_of(Depth::u8, channels), seed);
    t.params.filter = random_filter(side, side, seed + 7);
    t.params.anchor_x = side / 2;
    t.params.anchor_y = side / 2;
    t.expected.create(t.src.rows, t.src.cols, cv_type_of(Depth::u8, channels));
    const Job job{view_of(static_cast<const cv::Mat&>(t.src)), view_of(t.expected), t.params};
    find_backend("cpu-ref")->run(job, {});
    return t;
}

// `rounds` runs of `job` on `variant` into `out`, each against the expected
// output: "" where every one was right, else the first wrong round or the
// error thrown. `after_run` (may be empty) is called after each run.
std::string run_rounds(Backend* variant, const ThreadJob& job, int rounds,
                       const RunOptions& options, cv::Mat& out,
                       const std::function<void()>& after_run = {}) {
    try {
        for (int round = 0; round < rounds; ++round) {
            out.create(job.src.rows, job.src.cols, job.src.type());
            const Job run{view_of(job.src), view_of(out), job.params};
            variant->run(run, options);
            if (after_run) after_run();
            const Comparison c = compare_images(job.expected, out, variant->tolerance(run));
            if (!c.ok) return "round " + std::to_string(round) + ": " + c.describe();
        }
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("two threads run one variant at once, each with its own filter", "[gpu][concurrent]") {
    if (skip_without_device()) return;
    // fast on two of its paths (5x5: strips, 13x13: tiles), cmem and
    // separable through their constant symbols, and smem without.
    for (const char* name : {"fast", "cmem", "smem", "fast-separable", "separable"}) {
        Backend* variant = find_backend(name);
        REQUIRE(variant != nullptr);
        const bool rank1 = std::string(name).find("separable") != std::string::npos;
        std::vector<ThreadJob> jobs;
        for (int t = 0; t < 2; ++t) {
            jobs.push_back(make_job(t == 0 ? 5 : 13, 3, 100 + 10 * t));
            if (rank1) {  // an outer product, for the separable variants
                Filter& f = jobs.back().params.filter;
                const Filter row = random_filter(f.width, 1, 200 + t);
                const Filter column = random_filter(1, f.height, 300 + t);
                for (int j = 0; j < f.height; ++j) {
                    for (int i = 0; i < f.width; ++i) {
                        f.taps[static_cast<std::size_t>(j) * f.width + i] =
                            column.taps[j] * row.taps[i];
                    }
                }
                ThreadJob& job = jobs.back();
                find_backend("cpu-ref")->run(Job{view_of(static_cast<const cv::Mat&>(job.src)),
                                                 view_of(job.expected), job.params},
                                             {});
            }
        }
        std::vector<cv::Mat> outputs(2);
        std::vector<std::string> errors(2);
        std::vector<std::thread> threads;
        for (int t = 0; t < 2; ++t) {
            threads.emplace_back([&, t] {
                RunOptions options;
                options.repeat = 3;
                errors[t] = run_rounds(variant, jobs[t], 20, options, outputs[t]);
            });
        }
        for (std::thread& thread : threads) thread.join();
        INFO(name << ": " << errors[0] << " / " << errors[1]);
        CHECK(errors[0].empty());
        CHECK(errors[1].empty());
    }
}

namespace {

// An outer product of random taps: a filter the separable variants take.
Filter random_rank1_filter(int side, std::uint64_t seed) {
    Filter f = random_filter(side, side, seed);
    const Filter row = random_filter(side, 1, seed + 1);
    const Filter column = random_filter(1, side, seed + 2);
    for (int j = 0; j < side; ++j) {
        for (int i = 0; i < side; ++i) {
            f.taps[static_cast<std::size_t>(j) * side + i] = column.taps[j] * row.taps[i];
        }
    }
    return f;
}

}  // namespace

// Two GPU threads on one device (a batch's, docs/ARCHITECTURE.md) run
// chains at once: a chain queues its steps' launches and lets the taps'
// lock go before they have run, so another thread's copy into the
// __constant__ taps must wait on the device for them (ConstantTapsLock),
// or a step would read the other thread's taps. Each thread's chain, run
// alone first, must come out the same to the byte in every round.
TEST_CASE("two threads run chains on one device at once, each with its own taps",
          "[gpu][concurrent][chain]") {
    if (skip_without_device()) return;
    for (const char* name : {"fast-separable", "separable", "fast"}) {
        Backend* variant = find_backend(name);
        REQUIRE(variant != nullptr);
        struct ThreadChain {
            cv::Mat src;
            cv::Mat alone;
            std::vector<ConvParams> steps;
        };
        std::vector<ThreadChain> chains(2);
        for (int t = 0; t < 2; ++t) {
            ThreadChain& c = chains[t];
            // Large enough that a step's kernel is still queued or running
            // when the other thread takes the lock.
            c.src = random_image(1920, 1280, CV_8UC3, 700 + 10 * t);
            for (const int side : {t == 0 ? 9 : 7, t == 0 ? 5 : 11}) {
                ConvParams p;
                p.filter = random_rank1_filter(side, 800 + 10 * t + side);
                p.anchor_x = p.anchor_y = side / 2;
                c.steps.push_back(p);
            }
        }
        const auto run_once = [&](ThreadChain& c, cv::Mat& out) {
            out.create(c.src.rows, c.src.cols, c.src.type());
            std::vector<ChainStep> steps;
            for (const Job& job :
                 chain_jobs(view_of(static_cast<const cv::Mat&>(c.src)), view_of(out), c.steps)) {
                steps.push_back({variant, job});
            }
            run_chain(steps, {});
        };
        for (ThreadChain& c : chains) run_once(c, c.alone);
        std::vector<std::string> errors(2);
        std::vector<std::thread> threads;
        for (int t = 0; t < 2; ++t) {
            threads.emplace_back([&, t] {
                try {
                    cv::Mat out;
                    for (int round = 0; round < 30; ++round) {
                        run_once(chains[t], out);
                        if (cv::norm(out, chains[t].alone, cv::NORM_INF) != 0.0) {
                            errors[t] = "round " + std::to_string(round) +
                                        " differs from the chain run alone";
                            return;
                        }
                    }
                } catch (const std::exception& e) {
                    errors[t] = e.what();
                }
            });
        }
        for (std::thread& thread : threads) thread.join();
        INFO(name << ": " << errors[0] << " / " << errors[1]);
        CHECK(errors[0].empty());
        CHECK(errors[1].empty());
    }
}

// --devices: a thread bound to a device (set_thread_device, as a batch's
// GPU threads are) runs every CUDA variant there, all devices at once, each
// right. What CUDA holds a device (a kernel's shared-memory opt-in, the
// constant taps) must be set on each; a setting made once for the process
// fails on the second device.
TEST_CASE("threads bound to different devices each run every CUDA variant right",
          "[gpu][concurrent][devices]") {
    if (skip_without_two_devices()) return;
    const DeviceProbe& probe = probe_devices();
    // 5x5 and 13x13 (fast's strips and tiles, the tiles past 48 KB of
    // shared memory), 31x31 (fast.mma where the device has tensor cores).
    for (const int side : {5, 13, 31}) {
        const ThreadJob job = make_job(side, 3, 500 + static_cast<std::uint64_t>(side));
        for (const auto& b : all_backends()) {
            Backend* variant = b.get();
            cv::Mat probe_out(job.src.rows, job.src.cols, job.src.type());
            const Job probe_job{view_of(job.src), view_of(probe_out), job.params};
            if (!variant->uses_cuda() || !variant->can_run(probe_job).ok) continue;
            std::vector<std::string> errors(probe.devices.size());
            std::vector<int> seen(probe.devices.size(), -1);
            std::vector<int> ran_on(probe.devices.size(), -1);
            std::vector<std::thread> threads;
            for (std::size_t t = 0; t < probe.devices.size(); ++t) {
                threads.emplace_back([&, t] {
                    try {
                        set_thread_device(probe.devices[t].index);
                        seen[t] = thread_device();
                    } catch (const std::exception& e) {
                        errors[t] = e.what();
                        return;
                    }
                    cv::Mat out;
                    // Where each run left the thread.
                    errors[t] =
                        run_rounds(variant, job, 3, {}, out, [&] { ran_on[t] = runtime_device(); });
                });
            }
            for (std::thread& thread : threads) thread.join();
            for (std::size_t t = 0; t < probe.devices.size(); ++t) {
                INFO(variant->name() << " " << side << "x" << side << " on device "
                                     << probe.devices[t].index << ": " << errors[t]);
                CHECK(errors[t].empty());
                CHECK(seen[t] == probe.devices[t].index);
                CHECK(ran_on[t] == probe.devices[t].index);
            }
        }
    }
}

}  // namespace cudaconv::test
