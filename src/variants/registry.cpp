#include "variants/registry.hpp"

#include "cpu/cpu_registry.hpp"
#include "kernels/runtime/cuda_registry.hpp"

namespace cudaconv {

const std::vector<std::unique_ptr<Backend>>& all_backends() {
    static const std::vector<std::unique_ptr<Backend>> kBackends = [] {
        std::vector<std::unique_ptr<Backend>> list;
        list.push_back(make_cpu_ref_backend());
        list.push_back(make_cpu_backend());
        for (auto& path : make_cpu_paths()) list.push_back(std::move(path));
        list.push_back(make_naive_backend());
        list.push_back(make_cmem_backend());
        list.push_back(make_smem_backend());
        list.push_back(make_smem_cached_backend());
        list.push_back(make_unrolled_backend());
        list.push_back(make_separable_backend());
        list.push_back(make_fft_backend());
        list.push_back(make_cudnn_backend());
        list.push_back(make_fast_backend());
        for (auto& path : make_fast_paths()) list.push_back(std::move(path));
        list.push_back(make_fast_separable_backend());
        for (auto& path : make_fast_separable_paths()) list.push_back(std::move(path));
        return list;
    }();
    return kBackends;
}

Backend* find_backend(std::string_view name) {
    for (const auto& backend : all_backends()) {
        if (backend->name() == name) return backend.get();
    }
    return nullptr;
}

}  // namespace cudaconv
