// kernels/runtime/stream_hold.hpp, the hold that keeps the host's launch latency
// out of bench's CUDA times, and every CUDA variant timed under it. Without
// a device these tests print "SKIPPED: no CUDA device".
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "variants/registry.hpp"
#include "filters/spec.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/stream_hold.hpp"
#include "support/compare.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {

TEST_CASE("a held stream runs nothing queued behind the hold until it is released",
          "[gpu][gpu-quick]") {
    if (skip_without_device()) return;
    const Stream stream;
    const Event done;
    StreamHold hold;
    hold.hold(stream.get());
    REQUIRE(cudaEventRecord(done.get(), stream.get()) == cudaSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(cudaEventQuery(done.get()) == cudaErrorNotReady);
    hold.release();
    REQUIRE(cudaEventSynchronize(done.get()) == cudaSuccess);
    CHECK_FALSE(hold.timed_out());
}

TEST_CASE("a hold nobody releases gives up after a second and says so", "[gpu]") {
    if (skip_without_device()) return;
    const Stream stream;
    StreamHold hold;
    const auto start = std::chrono::steady_clock::now();
    hold.hold(stream.get());
    REQUIRE(cudaStreamSynchronize(stream.get()) == cudaSuccess);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(hold.timed_out());
    CHECK(seconds > 0.9);
    CHECK(seconds < 10.0);
}

// A launch that waited on the device (a cudaFree, a plan built on the
// stream and waited for) would wait for the hold: the run would fail after
// the hold's second. Every variant, the composites' named paths among them
// (fast.strips, fast.walk-u8, fast.mma, fast-separable.mma, ...), on jobs
// that reach them and fft's plan and cudnn's algorithm search, must time
// held runs and give the right output.
TEST_CASE("every CUDA variant times held launches, warm or not, with the right output", "[gpu]") {
    if (skip_without_device()) return;
    struct Shape {
        int width, height, channels;
        Depth depth;
        const char* filter;
    };
    const std::vector<Shape> shapes{
        {97, 61, 3, Depth::u8, "edge"},
        {130, 70, 1, Depth::f32, "random:3"},
        {121, 67, 1, Depth::f32, "gaussian:31"},
        {150, 90, 1, Depth::f32, "random:15"},
    };
    std::uint64_t seed = 71000;
    for (const Shape& shape : shapes) {
        const cv::Mat src =
            random_image(shape.width, shape.height, cv_type(shape.depth, shape.channels), ++seed);
        const ConvParams params = centred_params(
            shape.filter == std::string("random:3")    ? random_filter(3, 3, seed)
            : shape.filter == std::string("random:15") ? random_filter(15, 15, seed)
                                                       : parse_filter_spec(shape.filter));
        cv::Mat expected(src.size(), src.type());
        find_backend("cpu-ref")->run(Job{const_view(src), mutable_view(expected), params}, {});
        for (const auto& variant : all_backends()) {
            if (!variant->uses_cuda()) continue;
            for (int warmup : {0, 1}) {
                cv::Mat actual(src.size(), src.type(), cv::Scalar::all(0));
                const Job job{const_view(src), mutable_view(actual), params};
                if (!variant->can_run(job).ok) continue;
                CAPTURE(variant->name(), shape.filter, depth_name(shape.depth), warmup);
                RunOptions options;
                options.warmup = warmup;
                options.repeat = 3;
                options.hold_timed_launches = true;
                RunTimings timings;
                REQUIRE_NOTHROW(timings = variant->run(job, options));
                REQUIRE(timings.filter_ms.size() == 3);
                for (double ms : timings.filter_ms) CHECK(ms > 0.0);
                const Comparison cmp = compare_images(expected, actual, variant->tolerance(job));
                CHECK(cmp.ok);
                if (!cmp.ok) WARN(cmp.describe());
            }
        }
    }
}

}  // namespace cudaconv::test
