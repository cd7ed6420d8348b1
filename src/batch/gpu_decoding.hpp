#pragma once
// --decoder for a batch: which inputs the GPU's JPEG decoder takes (asked
// on the workers, which then only read the file), and their decoding in
// groups on the GPU thread, into device memory the CUDA variant reads in
// place of an upload. Whatever the GPU does not take or cannot decode goes
// to the CPU decoder, so a batch never fails for the GPU's sake.
//
// On several GPUs (--devices) each lane has a decoder of its own, on its
// device: the first lane's is the one opened here (which also inspects the
// files for the workers); each other lane's is made on that lane's thread
// before the lane takes an image (start_lane).
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "batch/thread_group.hpp"
#include "io/image_io.hpp"
#include "kernels/codecs/jpeg_batch.hpp"

namespace cudaconv {

class GpuDecoding {
public:
    // The most images the batch hands decode_group at once (the pipeline's
    // gpu_group).
    static constexpr std::size_t kGroupImages = 16;

    // Opens nvJPEG now, for --decoder gpu, on `device` (CUDA's number; -1:
    // the default, kernels/runtime/device_scope.hpp): throws UsageError,
    // saying why, where it cannot run.
    void open_or_refuse(int device);

    // Opens nvJPEG on a thread of its own (--decoder auto): its hardware
    // backend takes about 0.6 s to start on an H100, while which take()
    // leaves the JPEGs to the CPU rather than hold the workers. Where it
    // cannot start, that is said once (at -v) and the CPU decodes them all.
    void open_in_background(int device);

    // How many lanes decode_group is called for, on how many devices (0:
    // the first device there is), before the batch starts. The lanes of one
    // device (batch/devices.hpp, device_slot) share its decoder, whose calls
    // take turns.
    void set_lanes(std::size_t lanes, std::size_t devices);

    // Makes the decoder of a lane's device now, on the lane's thread and
    // device, before the lane takes images (nvJPEG's start-up, 0.6 s on an
    // H100, would otherwise hold its first group). The lane's GPU thread
    // calls it, before the thread that decodes the lane's groups starts; the
    // first device's is open() already.
    void start_lane(std::size_t lane);

    // On a worker: whether the GPU decodes this image, and what it will be;
    // else nullopt and why not (not a JPEG, one to be turned upright by its
    // EXIF orientation, a kind nvJPEG does not take, no decoder here, or
    // not yet).
    std::optional<JpegInspection> take(const EncodedImage& image, std::string& why_not);

    // What --json calls `lane`'s decoder: "nvjpeg-hardware" or
    // "nvjpeg-hybrid"; "cpu" where it could not start (the CPU decodes).
    // On the lane's threads, after start_lane.
    std::string decoder_name(std::size_t lane) const;

    // Decodes the images of a group (the pipeline's gpu_group stage) on
    // `lane`'s thread and device, in batched nvJPEG calls of at most
    // kGroupBytes of pixels each. Never throws: a failure (the lane's
    // decoder could not start, a call failed) is the image's `error`, and
    // its pixels null.
    void decode_group(std::size_t lane, const std::vector<GpuJpegImage*>& images);

    // At -v, each decoder's image buffers (made, freed, the most held): at
    // the batch's end, on the thread that ran it.
    void log_buffers() const;

    // Lets go of the decoders without freeing them, for a process that
    // ends without its teardown (base/process_exit.hpp): freeing their
    // buffers and nvJPEG's handles one by one takes longer than the
    // driver's taking back the whole context at exit. At the batch's end.
    void keep_until_exit();

private:
    // The pixels one nvJPEG call decodes at most: 16 images of 12
    // megapixels in RGB, or 4 of 50 (its own buffers grow with them).
    static constexpr std::size_t kGroupBytes = std::size_t{640} << 20;

    void open();  // once, on whichever thread comes first
    // The decoder of the lane's device, made at the first call for a
    // device past the first; null where it cannot start (problem says why).
    GpuJpegBatch* lane_decoder(std::size_t lane, std::string& problem);

    std::once_flag opened_;
    std::atomic<bool> ready_{false};  // open() has ended
    int device_ = -1;                 // the first lane's
    std::unique_ptr<GpuJpegBatch> decoder_;
    // Devices past the first, each made by whichever of its lanes' threads
    // comes first (under devices_mutex_): their decoders, and why one could
    // not start.
    struct Device {
        bool tried = false;
        std::unique_ptr<GpuJpegBatch> decoder;
        std::string problem;
    };
    std::size_t device_count_ = 1;
    std::mutex devices_mutex_;
    std::vector<Device> devices_;
    std::string problem_;  // why decoder_ is null, once ready_
    ThreadGroup opener_;   // last: joined before the members it uses go
};

}  // namespace cudaconv
