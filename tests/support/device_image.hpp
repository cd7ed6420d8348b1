#pragma once
// An image copied to the device with rows `pad` bytes longer than its
// pixels (as the CUDA variants pad theirs, the padding filled with 0xA5 so
// that it must not show), for the device encoders' tests. CUDA builds only.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <opencv2/core.hpp>

#include "kernels/codecs/device_image_rows.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"

namespace cudaconv::test {

struct DeviceImage {
    DeviceArray<std::byte> memory;
    DeviceImageRows rows;
};

inline DeviceImage device_image(const cv::Mat& image, std::size_t pad) {
    const std::size_t row = image.cols * image.elemSize();
    const std::size_t pitch = row + pad;
    DeviceImage out{device_array<std::byte>(pitch * image.rows), {}};
    CUDA_CHECK(cudaMemset(out.memory.get(), 0xA5, pitch * image.rows));
    CUDA_CHECK(cudaMemcpy2D(out.memory.get(), pitch, image.data, image.step, row, image.rows,
                            cudaMemcpyHostToDevice));
    out.rows.data = out.memory.get();
    out.rows.width = image.cols;
    out.rows.height = image.rows;
    out.rows.pitch = static_cast<std::int64_t>(pitch);
    out.rows.channels = image.channels();
    out.rows.depth = image.depth() == CV_8U ? Depth::u8 : Depth::u16;
    return out;
}

}  // namespace cudaconv::test
