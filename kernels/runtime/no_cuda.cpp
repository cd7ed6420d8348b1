// A build without the CUDA toolkit (CUDACONV_WITH_CUDA=OFF): what src/
// calls from kernels/, in place of the .cu files and the CUDA runtime.
// There is never a device. The CUDA variants keep their names, so that
// `-k smem`, `list kernels` and `bench -k all` say why they cannot run
// rather than not knowing them.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "base/errors.hpp"
#include "kernels/codecs/gpu_jpeg_encoder.hpp"
#include "kernels/cudnn/cudnn_layer.hpp"
#include "kernels/layer/layer_mma.hpp"
#include "kernels/codecs/jpeg_batch.hpp"
#include "kernels/runtime/copy_bandwidth.hpp"
#include "kernels/runtime/cuda_host.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/library_versions.hpp"

namespace cudaconv {
namespace {

constexpr const char* kNoCuda = "this build has no CUDA: built without the CUDA toolkit";

// What a CUDA variant's can_run says on a machine without a device.
std::string no_device_reason() { return std::string("no CUDA device (") + kNoCuda + ")"; }

class NotBuiltBackend final : public Backend {
public:
    explicit NotBuiltBackend(std::string_view name, std::string_view parent = {})
        : name_(name), parent_(parent) {}

    std::string_view name() const override { return name_; }
    std::string_view parent() const override { return parent_; }
    std::optional<int> auto_rank(const Job&) const override { return std::nullopt; }
    std::string_view summary() const override {
        return "not in this build (built without the CUDA toolkit)";
    }
    bool uses_cuda() const override { return true; }
    Support can_run(const Job&) const override { return Support::no(no_device_reason()); }
    RunTimings run(const Job&, const RunOptions&) override {
        throw WorkError(std::string(name_) + ": " + no_device_reason());
    }

private:
    std::string_view name_;
    std::string_view parent_;
};

std::unique_ptr<Backend> not_built(std::string_view name) {
    return std::make_unique<NotBuiltBackend>(name);
}

class NotBuiltLayer final : public LayerVariant {
public:
    explicit NotBuiltLayer(std::string_view name) : name_(name) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override {
        return "not in this build (built without the CUDA toolkit)";
    }
    bool uses_cuda() const override { return true; }
    std::string refusal(const ConvLayer&) const override { return no_device_reason(); }
    void prepare(const ConvLayer&) override {}
    LayerTimings run(const Tensor3&, Tensor3&, int, int, const std::function<bool()>&) override {
        throw WorkError(std::string(name_) + ": " + no_device_reason());
    }

private:
    std::string_view name_;
};

}  // namespace

std::unique_ptr<LayerVariant> make_cudnn_layer() {
    return std::make_unique<NotBuiltLayer>("cudnn");
}
std::unique_ptr<LayerVariant> make_mma_layer() { return std::make_unique<NotBuiltLayer>("mma"); }

const DeviceProbe& probe_devices() {
    static const DeviceProbe kProbe{{}, kNoCuda};
    return kProbe;
}

std::string cuda_runtime_version_string() { return "none"; }
std::string cufft_version_string() { return "none"; }
std::string cuda_driver_version_string() { return ""; }
FoundLibrary find_cudnn() { return {}; }
FoundLibrary find_nvjpeg() { return {}; }

CopyBandwidth measure_copy_bandwidth(std::size_t, int, int) {
    throw std::runtime_error(no_device_reason());
}

void* alloc_pinned(std::size_t) { return nullptr; }
void free_pinned(void*) {}
bool make_device_context(int) { return false; }
bool device_lost(const std::exception&) { return false; }
bool device_out_of_memory(const std::exception&) { return false; }
void release_thread_device_memory() {}
int runtime_device() { return -1; }

std::unique_ptr<Backend> make_naive_backend() { return not_built("naive"); }
std::unique_ptr<Backend> make_cmem_backend() { return not_built("cmem"); }
std::unique_ptr<Backend> make_smem_backend() { return not_built("smem"); }
std::unique_ptr<Backend> make_smem_cached_backend() { return not_built("smem-cached"); }
std::unique_ptr<Backend> make_unrolled_backend() { return not_built("unrolled"); }
std::unique_ptr<Backend> make_separable_backend() { return not_built("separable"); }
std::unique_ptr<Backend> make_fft_backend() { return not_built("fft"); }
std::unique_ptr<Backend> make_cudnn_backend() { return not_built("cudnn"); }
std::unique_ptr<Backend> make_fast_backend() { return not_built("fast"); }
std::unique_ptr<Backend> make_fast_separable_backend() { return not_built("fast-separable"); }

std::vector<std::unique_ptr<Backend>> make_fast_paths() {
    std::vector<std::unique_ptr<Backend>> paths;
    for (const char* name : {"fast.registers", "fast.walk-u8", "fast.strips", "fast.tiles",
                             "fast.mma", "fast.separable"}) {
        paths.push_back(std::make_unique<NotBuiltBackend>(name, "fast"));
    }
    return paths;
}

std::vector<std::unique_ptr<Backend>> make_fast_separable_paths() {
    std::vector<std::unique_ptr<Backend>> paths;
    for (const char* name : {"fast-separable.mma", "fast-separable.strips"}) {
        paths.push_back(std::make_unique<NotBuiltBackend>(name, "fast-separable"));
    }
    return paths;
}

// No GPU decoder: the constructor says why, so nothing else is ever called.
struct GpuJpegBatch::State {};
GpuJpegBatch::GpuJpegBatch(std::size_t) { throw std::runtime_error(no_device_reason()); }
GpuJpegBatch::~GpuJpegBatch() = default;
std::string_view GpuJpegBatch::name() const { return "none"; }
JpegInspection GpuJpegBatch::inspect(const unsigned char*, std::size_t) const {
    return {0, 0, 0, no_device_reason()};
}
std::string GpuJpegBatch::buffers_summary() const { return {}; }
void GpuJpegBatch::decode(const std::vector<GpuJpegImage*>&, std::size_t) {
    throw std::runtime_error(no_device_reason());
}

std::string gpu_jpeg_encoder_problem() { return no_device_reason(); }

}  // namespace cudaconv
