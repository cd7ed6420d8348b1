#pragma once
// The vocabulary every part of cudaconv shares: sample depths, border modes
// and non-owning views of interleaved images. Deliberately free of OpenCV so
// that CUDA translation units can include it cheaply.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaconv {

enum class Depth : std::uint8_t { u8, u16, f32 };

constexpr std::size_t depth_bytes(Depth d) { return d == Depth::u8 ? 1 : d == Depth::u16 ? 2 : 4; }
std::string_view depth_name(Depth d);
// "u8", "u16", "f32"; nullopt for anything else.
std::optional<Depth> parse_depth(std::string_view name);

enum class BorderMode : std::uint8_t { reflect101, reflect, replicate, constant, wrap, valid };

std::string_view border_name(BorderMode b);
// Accepts the canonical names and the aliases of docs/SPEC.md. `zero` maps to
// constant and sets *forces_zero when given.
std::optional<BorderMode> parse_border(std::string_view name, bool* forces_zero = nullptr);
const std::vector<BorderMode>& all_border_modes();

enum class AlphaMode : std::uint8_t { keep, filter };

// An interleaved image in host or device memory; rows may be padded.
template <typename Byte>
struct BasicImageView {
    Byte* data = nullptr;
    std::int64_t width = 0;
    std::int64_t height = 0;
    int channels = 1;
    Depth depth = Depth::u8;
    std::int64_t row_bytes = 0;  // stride between rows, >= width * channels * depth_bytes

    std::int64_t pixels() const { return width * height; }
    std::size_t packed_row_bytes() const {
        return static_cast<std::size_t>(width) * channels * depth_bytes(depth);
    }
    Byte* row(std::int64_t y) const { return data + y * row_bytes; }
};
using ImageView = BasicImageView<std::byte>;
using ConstImageView = BasicImageView<const std::byte>;

inline ConstImageView as_const(const ImageView& v) {
    return {v.data, v.width, v.height, v.channels, v.depth, v.row_bytes};
}

}  // namespace cudaconv
