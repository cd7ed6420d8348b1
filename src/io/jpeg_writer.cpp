#include "io/jpeg_writer.hpp"

#include <algorithm>
#include <cstddef>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <cstdlib>
#include <memory>
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

// Where libjpeg writes the file: a buffer of our own, grown by doubling,
// which the caller frees whatever happened (libjpeg's jpeg_mem_dest says
// where its buffer is only at the end, so a failure midway would lose it).
struct GrowingDestination {
    jpeg_destination_mgr manager;  // first: libjpeg sees only this
    unsigned char* data;
    std::size_t capacity;
};

void start_destination(j_compress_ptr info) {
    auto* out = reinterpret_cast<GrowingDestination*>(info->dest);
    out->capacity = 64 * 1024;
    out->data = static_cast<unsigned char*>(std::malloc(out->capacity));
    if (!out->data) ERREXIT(info, JERR_OUT_OF_MEMORY);
    out->manager.next_output_byte = out->data;
    out->manager.free_in_buffer = out->capacity;
}

// libjpeg filled the buffer: double it (its contract: the whole buffer is
// full when this is called).
boolean grow_destination(j_compress_ptr info) {
    auto* out = reinterpret_cast<GrowingDestination*>(info->dest);
    auto* grown = static_cast<unsigned char*>(std::realloc(out->data, 2 * out->capacity));
    if (!grown) ERREXIT(info, JERR_OUT_OF_MEMORY);
    out->data = grown;
    out->manager.next_output_byte = grown + out->capacity;
    out->manager.free_in_buffer = out->capacity;
    out->capacity *= 2;
    return TRUE;
}

void end_destination(j_compress_ptr) {}

// The whole libjpeg exchange, with plain data only between setjmp and any
// longjmp. Returns false with `error` filled where libjpeg failed; either
// way `out.data` is for the caller to free.
bool compress(const cv::Mat& image, const JpegSettings& settings, ErrorJump& error,
              GrowingDestination& out) {
    jpeg_compress_struct info{};
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = jump_back;
    if (setjmp(error.back)) {
        jpeg_destroy_compress(&info);
        return false;
    }
    jpeg_create_compress(&info);
    out.manager.init_destination = start_destination;
    out.manager.empty_output_buffer = grow_destination;
    out.manager.term_destination = end_destination;
    info.dest = &out.manager;
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
    GrowingDestination out{};
    const bool ok = compress(image, settings, error, out);
    // Owned from here, whatever happened.
    const std::unique_ptr<unsigned char, decltype(&std::free)> owned(out.data, &std::free);
    if (!ok) {
        if (error.out_of_memory) throw std::bad_alloc();
        throw std::runtime_error(error.message);
    }
    return std::vector<std::uint8_t>(out.data,
                                     out.data + (out.capacity - out.manager.free_in_buffer));
}

}  // namespace cudaconv
