#include "core/registry.hpp"

#include "core/registry_parts.hpp"

namespace cudaconv {

const std::vector<std::unique_ptr<Backend>>& all_backends() {
    static const std::vector<std::unique_ptr<Backend>> kBackends = [] {
        std::vector<std::unique_ptr<Backend>> list;
        list.push_back(make_cpu_ref_backend());
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
