#include "io/layer_files.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <opencv2/imgproc.hpp>

#include "base/errors.hpp"
#include "io/format_probe.hpp"
#include "io/image_io.hpp"
#include "io/npy.hpp"

namespace cudaconv {
namespace {

// VGG16's largest layer holds 9.4 MB of weights; a file past this is not
// a layer's.
constexpr std::uintmax_t kLargestWeightsFile = std::uintmax_t{1} << 30;

std::vector<std::uint8_t> read_small_file(const std::string& path, const char* what) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file) throw UsageError(fmt::format("{}: cannot open the {} file", path, what));
    const std::streamoff size = file.tellg();
    if (size < 0 || static_cast<std::uintmax_t>(size) > kLargestWeightsFile) {
        throw UsageError(fmt::format("{}: not a readable {} file of at most 1 GiB", path, what));
    }
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
    file.seekg(0);
    file.read(reinterpret_cast<char*>(bytes.data()), size);
    if (file.gcount() != size) throw UsageError(fmt::format("{}: cannot read it", path));
    return bytes;
}

NpyArray load_array(const std::string& path, const NpyRank& rank, const char* what) {
    const std::vector<std::uint8_t> bytes = read_small_file(path, what);
    NpyArray array;
    try {
        array = parse_npy(bytes.data(), bytes.size(), rank);
    } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("{}: {}", path, e.what()));
    }
    for (std::size_t i = 0; i < array.data.size(); ++i) {
        if (!std::isfinite(array.data[i])) {
            throw UsageError(fmt::format("{}: value {} is {}", path, i,
                                         std::isnan(array.data[i]) ? "NaN" : "infinite"));
        }
    }
    return array;
}

// A kernel side or channel count past this is not a CNN layer's, and its
// products would overflow the int sizes the variants use.
constexpr std::int64_t kLargestLayerSize = 65536;

}  // namespace

ConvLayer load_conv_layer(const std::string& weights_path, const std::string& bias_path) {
    const NpyArray w = load_array(
        weights_path, {4, 4, "weights are (k_h, k_w, C_in, C_out), Keras's HWIO"}, "weights");
    for (std::int64_t s : w.shape) {
        if (s > kLargestLayerSize) {
            throw UsageError(fmt::format("{}: a size of {} (at most {} a dimension)", weights_path,
                                         s, kLargestLayerSize));
        }
    }
    ConvLayer layer;
    layer.kernel_height = static_cast<int>(w.shape[0]);
    layer.kernel_width = static_cast<int>(w.shape[1]);
    layer.in_channels = static_cast<int>(w.shape[2]);
    layer.out_channels = static_cast<int>(w.shape[3]);
    layer.weights = w.data;
    layer.bias.assign(static_cast<std::size_t>(layer.out_channels), 0.0f);
    if (!bias_path.empty()) {
        const NpyArray b = load_array(bias_path, {1, 1, "a bias is (C_out,)"}, "bias");
        if (b.shape[0] != layer.out_channels) {
            throw UsageError(fmt::format("{}: {} values where the weights have C_out = {}",
                                         bias_path, b.shape[0], layer.out_channels));
        }
        layer.bias = b.data;
    }
    return layer;
}

TensorShape probe_layer_input(const std::string& path) {
    const std::vector<std::uint8_t> head = read_file_head(path);
    const detail::FormatProbe probe = detail::probe_image(head.data(), head.size());
    TensorShape shape;
    if (probe.format == detail::ImageFormat::npy) {
        try {
            const NpyHeader header = read_npy_header(head.data(), head.size());
            shape.height = header.shape[0];
            shape.width = header.shape[1];
            shape.channels = header.shape.size() == 3 ? header.shape[2] : 1;
        } catch (const std::invalid_argument&) {
            return {};  // reading it says why
        }
        return shape;
    }
    if (probe.width <= 0 || probe.height <= 0 || probe.channels <= 0) return {};
    const bool sideways = probe.orientation >= 5;  // turned upright on reading
    shape.height = sideways ? probe.width : probe.height;
    shape.width = sideways ? probe.height : probe.width;
    shape.channels = probe.channels;
    return shape;
}

Tensor3 read_layer_input(const std::string& path, const ReadOptions& options) {
    EncodedImage encoded = read_encoded_image(path, options);
    const detail::FormatProbe probe =
        detail::probe_image(encoded.bytes.data(), encoded.bytes.size());
    if (probe.format == detail::ImageFormat::npy) {
        NpyHeader header;
        try {
            header = read_npy_header(encoded.bytes.data(), encoded.bytes.size());
            check_npy_data(header, encoded.bytes.size());
        } catch (const std::invalid_argument& e) {
            throw WorkError(encoded.name + ": cannot decode NPY data: " + e.what());
        }
        const std::int64_t pixels = header.shape[0] * header.shape[1];
        if (options.max_pixels != 0 && static_cast<std::uint64_t>(pixels) > options.max_pixels) {
            throw WorkError(fmt::format("{}: {}x{} is more than --max-pixels {}", encoded.name,
                                        header.shape[1], header.shape[0], options.max_pixels));
        }
        Tensor3 tensor(header.shape[0], header.shape[1],
                       header.shape.size() == 3 ? header.shape[2] : 1);
        std::memcpy(tensor.data.data(), encoded.bytes.data() + header.data_offset,
                    tensor.data.size() * sizeof(float));
        return tensor;
    }
    cv::Mat image = decode_image(encoded, options);
    encoded.bytes = {};
    if (image.channels() == 3) cv::cvtColor(image, image, cv::COLOR_BGR2RGB);
    if (image.channels() == 4) cv::cvtColor(image, image, cv::COLOR_BGRA2RGBA);
    Tensor3 tensor(image.rows, image.cols, image.channels());
    cv::Mat as_float(image.rows, image.cols, CV_32FC(image.channels()), tensor.data.data());
    image.convertTo(as_float, CV_32F);
    return tensor;
}

std::vector<std::uint8_t> encode_tensor(const Tensor3& tensor) {
    return encode_npy({tensor.height, tensor.width, tensor.channels}, tensor.data.data());
}

}  // namespace cudaconv
