#include "core/types.hpp"

#include <array>
#include <utility>

namespace cudaconv {

std::string_view depth_name(Depth d) {
    switch (d) {
        case Depth::u8: return "u8";
        case Depth::u16: return "u16";
        case Depth::f32: return "f32";
    }
    return "?";
}

std::optional<Depth> parse_depth(std::string_view name) {
    if (name == "u8") return Depth::u8;
    if (name == "u16") return Depth::u16;
    if (name == "f32") return Depth::f32;
    return std::nullopt;
}

std::string_view border_name(BorderMode b) {
    switch (b) {
        case BorderMode::reflect101: return "reflect101";
        case BorderMode::reflect: return "reflect";
        case BorderMode::replicate: return "replicate";
        case BorderMode::constant: return "constant";
        case BorderMode::wrap: return "wrap";
        case BorderMode::valid: return "valid";
    }
    return "?";
}

std::optional<BorderMode> parse_border(std::string_view name, bool* forces_zero) {
    static constexpr std::array<std::pair<std::string_view, BorderMode>, 16> kNames{{
        {"reflect101", BorderMode::reflect101},
        {"reflect_101", BorderMode::reflect101},
        {"mirror", BorderMode::reflect101},
        {"symmetric101", BorderMode::reflect101},
        {"reflect", BorderMode::reflect},
        {"symmetric", BorderMode::reflect},
        {"replicate", BorderMode::replicate},
        {"clamp", BorderMode::replicate},
        {"edge", BorderMode::replicate},
        {"nearest", BorderMode::replicate},
        {"constant", BorderMode::constant},
        {"zero", BorderMode::constant},
        {"wrap", BorderMode::wrap},
        {"circular", BorderMode::wrap},
        {"tile", BorderMode::wrap},
        {"valid", BorderMode::valid},
    }};
    for (const auto& [alias, mode] : kNames) {
        if (alias == name) {
            if (forces_zero) *forces_zero = (name == "zero");
            return mode;
        }
    }
    return std::nullopt;
}

const std::vector<BorderMode>& all_border_modes() {
    static const std::vector<BorderMode> kAll{BorderMode::reflect101, BorderMode::reflect,
                                              BorderMode::replicate,  BorderMode::constant,
                                              BorderMode::wrap,       BorderMode::valid};
    return kAll;
}

}  // namespace cudaconv
