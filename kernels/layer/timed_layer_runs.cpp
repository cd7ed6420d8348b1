#include "kernels/layer/timed_layer_runs.hpp"

#include <optional>

#include <spdlog/spdlog.h>

#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"

namespace cudaconv {

LayerTimings timed_layer_runs(cudaStream_t stream, StreamHold& hold, std::string_view variant,
                              const Tensor3& input, float* d_input, Tensor3& output,
                              const float* d_output, int warmup, int repeat,
                              const std::function<bool()>& stop,
                              const std::function<void()>& launch) {
    const Event before, uploaded, start, ran, downloaded;
    LayerTimings timings;
    CUDA_CHECK(cudaEventRecord(before.get(), stream));
    CUDA_CHECK(cudaMemcpyAsync(d_input, input.data.data(), input.data.size() * sizeof(float),
                               cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaEventRecord(uploaded.get(), stream));
    for (int i = 0; i < warmup + repeat; ++i) {
        if (i > 0 && stop && stop()) break;
        const bool held = i > 0;
        {
            std::optional<HeldStream> holding;
            if (held) holding.emplace(hold, stream);
            CUDA_CHECK(cudaEventRecord(start.get(), stream));
            launch();
            CUDA_CHECK(cudaEventRecord(ran.get(), stream));
        }
        CUDA_CHECK(cudaEventSynchronize(ran.get()));
        if (held && hold.timed_out()) {
            spdlog::debug("{} layer: a run waited on the host inside its hold; its time "
                          "includes the host's",
                          variant);
        }
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), ran.get()));
        if (i >= warmup) timings.layer_ms.push_back(ms);
    }
    CUDA_CHECK(cudaMemcpyAsync(output.data.data(), d_output, output.data.size() * sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaEventRecord(downloaded.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(downloaded.get()));
    float up = 0.0f, down = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&up, before.get(), uploaded.get()));
    CUDA_CHECK(cudaEventElapsedTime(&down, ran.get(), downloaded.get()));
    timings.upload_ms = up;
    timings.download_ms = down;
    return timings;
}

}  // namespace cudaconv
