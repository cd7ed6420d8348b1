#include "core/jpeg_settings.hpp"

namespace cudaconv {

std::string_view chroma_sampling_name(ChromaSampling sampling) {
    switch (sampling) {
        case ChromaSampling::s420: return "420";
        case ChromaSampling::s422: return "422";
        case ChromaSampling::s444: return "444";
    }
    return "?";
}

std::optional<ChromaSampling> parse_chroma_sampling(std::string_view text) {
    for (ChromaSampling s : {ChromaSampling::s420, ChromaSampling::s422, ChromaSampling::s444}) {
        if (text == chroma_sampling_name(s)) return s;
    }
    return std::nullopt;
}

}  // namespace cudaconv
