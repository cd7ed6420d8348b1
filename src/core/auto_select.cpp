#include "core/auto_select.hpp"

#include <algorithm>

namespace cudaconv {

AutoChoice choose_variant(const Job& job, const std::vector<Backend*>& candidates,
                          const DeviceContext& device) {
    std::string refusals;  // every variant passed over, for the log and errors
    for (std::string_view wanted : kAutoPreference) {
        const auto it = std::find_if(candidates.begin(), candidates.end(),
                                     [&](Backend* b) { return b->name() == wanted; });
        if (it == candidates.end()) continue;
        Backend* backend = *it;
        if (backend->uses_cuda() && !device.has_cuda_device) continue;
        const Support support = backend->can_run(job);
        if (!support.ok) {
            refusals += "; " + std::string(wanted) + " refused: " + support.reason;
            continue;
        }
        std::string reason;
        if (backend->uses_cuda()) {
            reason = "fastest CUDA variant that can run this job";
        } else if (!device.has_cuda_device) {
            reason = "no CUDA device (" + device.no_device_reason + "), so the CPU";
        } else {
            reason = "no CUDA variant can run this job, so the CPU";
        }
        return {backend, reason + refusals};
    }
    return {nullptr, "no variant can run this job" + refusals};
}

}  // namespace cudaconv
