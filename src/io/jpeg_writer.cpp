#include "io/jpeg_writer.hpp"

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

#include <jpeglib.h>
// After jpeglib.h, which it needs.
#include <jerror.h>

namespace cudaconv {
namespace {

// libjpeg reports errors by calling error_exit, which must not return: it
// jumps back to compress(), whose frame holds nothing with a destructor.
struct ErrorJump {
    jpeg_error_mgr manager;
    std::jmp_buf back;
    char message[JMSG_LENGTH_MAX];
    bool out_of_memory;
};

void jump_back(j_common_ptr info) {
    auto* error = reinterpret_cast<ErrorJump*>(info->err);
    (*info->err->format_message)(info, error->message);
    error->out_of_memory = info->err->msg_code == JERR_OUT_OF_MEMORY;
    std::longjmp(error->back, 1);
}

void set_sampling(jpeg_compress_struct& info, ChromaSampling sampling) {
    if (info.num_components != 3) return;  // gray: one plane, no chroma
    // jpeg_set_defaults made luma 2x2 and each chroma 1x1 (4:2:0); the
    // chroma planes' size is luma's divided by these factors.
    jpeg_component_info& luma = info.comp_info[0];
    switch (sampling) {
        case ChromaSampling::s420: luma.h_samp_factor = 2, luma.v_samp_factor = 2; break;
        case ChromaSampling::s422: luma.h_samp_factor = 2, luma.v_samp_factor = 1; break;
        case ChromaSampling::s444: luma.h_samp_factor = 1, luma.v_samp_factor = 1; break;
    }
}

// The whole libjpeg exchange, with plain data only between setjmp and any
// longjmp. Returns false with `error` filled where libjpeg failed. On
// success `out` is libjpeg's malloc'ed file for the caller to free; on
// failure it may name a buffer libjpeg has freed already (jpeg_mem_dest
// says where its buffer is only at the end), so it is left alone: the
// failures are out of memory or a libjpeg bug, and their buffer is lost.
bool compress(const cv::Mat& image, const JpegSettings& settings, ErrorJump& error,
              unsigned char** out, unsigned long* out_size) {
    jpeg_compress_struct info{};
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = jump_back;
    if (setjmp(error.back)) {
        jpeg_destroy_compress(&info);
        return false;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, out, out_size);
    info.image_width = static_cast<JDIMENSION>(image.cols);
    info.image_height = static_cast<JDIMENSION>(image.rows);
    info.input_components = image.channels();
    // libjpeg-turbo reads OpenCV's BGR order itself; cv::imencode swaps each
    // row to RGB first, which codes the same.
    info.in_color_space = image.channels() == 3 ? JCS_EXT_BGR : JCS_GRAYSCALE;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, std::clamp(settings.quality, 0, 100), TRUE);
    set_sampling(info, settings.sampling);
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        JSAMPROW row =
            const_cast<JSAMPROW>(image.ptr<unsigned char>(static_cast<int>(info.next_scanline)));
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    return true;
}

}  // namespace

std::vector<std::uint8_t> encode_jpeg(const cv::Mat& image, const JpegSettings& settings) {
    if (image.empty() || image.depth() != CV_8U ||
        (image.channels() != 1 && image.channels() != 3)) {
        throw std::invalid_argument("JPEG holds 8-bit gray or colour images only");
    }
    ErrorJump error{};
    unsigned char* out = nullptr;
    unsigned long out_size = 0;
    if (!compress(image, settings, error, &out, &out_size)) {
        if (error.out_of_memory) throw std::bad_alloc();
        throw std::runtime_error(error.message);
    }
    std::vector<std::uint8_t> bytes;
    try {
        bytes.assign(out, out + out_size);
    } catch (...) {
        std::free(out);
        throw;
    }
    std::free(out);
    return bytes;
}

}  // namespace cudaconv
