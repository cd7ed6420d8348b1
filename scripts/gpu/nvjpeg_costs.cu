// Runs ON THE GPU MACHINE (nvjpeg.h is only there): what nvJPEG's calls cost
// in a fresh process, for issue 34's account of a batch's start-up and of
// its decoding (docs/PERFORMANCE.md). Build and run there:
//   nvcc -O2 -std=c++17 -arch=sm_90 scripts/gpu/nvjpeg_costs.cu -o nvjpeg_costs -lnvjpeg
//   ./nvjpeg_costs FILE.jpg
// Prints, in order:
//   1. each start-up call's time: CUDA's context, the hardware backend's
//      handle (without its pipelining, as cudaconv makes it) and decode
//      state, a default-backend handle (what the encoder made before it
//      took the decoder's) and an encoder state on either handle;
//   2. batched decodes of the file, 16 a call: the first call, then the
//      host's time in the call and its wait for the stream;
//   3. the steady rate in calls of 16, 32 and 50, on one decode state
//      waited for each call, and on two states on two streams, each call
//      submitted before the one before it is waited for;
//   4. the file encoded through the default-backend handle and through the
//      hardware decoder's: whether the bytes are the same, and the time.
#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

void check(int status, const char* call) {
    if (status == 0) return;
    std::printf("%s failed: %d\n", call, status);
    std::exit(1);
}
#define CHECK(call) check(static_cast<int>(call), #call)
#define TIMED(label, call)                                          \
    do {                                                            \
        const double start = now_ms();                              \
        CHECK(call);                                                \
        std::printf("  %-46s %7.1f ms\n", label, now_ms() - start); \
    } while (0)

constexpr int kMostImages = 50;

// A decode state with its stream, its images' device buffers and its own
// page-locked copies of the file (so no copy is timed).
struct Slot {
    nvjpegJpegState_t state;
    cudaStream_t stream;
    std::vector<nvjpegImage_t> images;
    std::vector<const unsigned char*> data;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::printf("usage: nvjpeg_costs FILE.jpg\n");
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)), {});
    const int kNoPipeline = 1;  // NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE

    std::printf("1. start-up\n");
    TIMED("cudaFree(0): CUDA's context", cudaFree(0));
    nvjpegHandle_t hardware = nullptr, fallback = nullptr;
    TIMED("nvjpegCreateEx, hardware backend",
          nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, kNoPipeline, &hardware));
    Slot slots[2];
    TIMED("nvjpegJpegStateCreate, hardware backend",
          nvjpegJpegStateCreate(hardware, &slots[0].state));
    TIMED("nvjpegCreateEx, default backend",
          nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &fallback));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    nvjpegEncoderState_t on_fallback, on_hardware;
    TIMED("nvjpegEncoderStateCreate, default handle",
          nvjpegEncoderStateCreate(fallback, &on_fallback, stream));
    TIMED("nvjpegEncoderStateCreate, hardware handle",
          nvjpegEncoderStateCreate(hardware, &on_hardware, stream));

    int widths[NVJPEG_MAX_COMPONENT], heights[NVJPEG_MAX_COMPONENT], components;
    nvjpegChromaSubsampling_t subsampling;
    CHECK(nvjpegGetImageInfo(hardware, file.data(), file.size(), &components, &subsampling, widths,
                             heights));
    const int width = widths[0], height = heights[0];
    const size_t pitch = static_cast<size_t>(width) * 3;
    CHECK(nvjpegJpegStateCreate(hardware, &slots[1].state));
    for (Slot& slot : slots) {
        CHECK(cudaStreamCreateWithFlags(&slot.stream, cudaStreamNonBlocking));
        unsigned char* pinned;
        CHECK(cudaMallocHost(&pinned, file.size() * kMostImages));
        for (int i = 0; i < kMostImages; ++i) {
            std::memcpy(pinned + i * file.size(), file.data(), file.size());
            slot.data.push_back(pinned + i * file.size());
            nvjpegImage_t image{};
            CHECK(cudaMalloc(&image.channel[0], pitch * height));
            image.pitch[0] = pitch;
            slot.images.push_back(image);
        }
    }
    const std::vector<size_t> sizes(kMostImages, file.size());
    auto prepare = [&](Slot& slot, int images) {
        CHECK(nvjpegDecodeBatchedPreAllocate(hardware, slot.state, images, width, height,
                                             NVJPEG_CSS_444, NVJPEG_OUTPUT_BGRI));
        CHECK(nvjpegDecodeBatchedInitialize(hardware, slot.state, images, 1, NVJPEG_OUTPUT_BGRI));
    };
    auto submit = [&](Slot& slot) {
        CHECK(nvjpegDecodeBatched(hardware, slot.state, slot.data.data(), sizes.data(),
                                  slot.images.data(), slot.stream));
    };

    std::printf("2. %dx%d, 16 a call, one state: host's time in the call / wait for the stream\n",
                width, height);
    prepare(slots[0], 16);
    for (int call = 0; call < 4; ++call) {
        const double start = now_ms();
        submit(slots[0]);
        const double submitted = now_ms();
        CHECK(cudaStreamSynchronize(slots[0].stream));
        std::printf("  call %d: %.1f / %.1f ms\n", call, submitted - start, now_ms() - submitted);
    }

    std::printf("3. steady rate, 400 images\n");
    for (int images : {16, 32, 50}) {
        for (Slot& slot : slots) {
            prepare(slot, images);
            submit(slot);
            CHECK(cudaStreamSynchronize(slot.stream));
        }
        const int calls = 400 / images;
        double start = now_ms();
        for (int call = 0; call < calls; ++call) {
            submit(slots[0]);
            CHECK(cudaStreamSynchronize(slots[0].stream));
        }
        const double one = (now_ms() - start) / (calls * images);
        start = now_ms();
        for (int call = 0; call < calls; ++call) {
            submit(slots[call % 2]);
            if (call > 0) CHECK(cudaStreamSynchronize(slots[(call - 1) % 2].stream));
        }
        CHECK(cudaDeviceSynchronize());
        const double two = (now_ms() - start) / (calls * images);
        std::printf("  %d a call: one state %.3f ms an image (%.0f/s); two states %.3f (%.0f/s)\n",
                    images, one, 1000 / one, two, 1000 / two);
    }

    std::printf("4. encoded, quality 95, 4:2:0, 20 times through each handle\n");
    std::vector<unsigned char> encoded[2];
    const nvjpegHandle_t handles[2] = {fallback, hardware};
    const nvjpegEncoderState_t states[2] = {on_fallback, on_hardware};
    for (int k = 0; k < 2; ++k) {
        nvjpegEncoderParams_t params;
        CHECK(nvjpegEncoderParamsCreate(handles[k], &params, stream));
        CHECK(nvjpegEncoderParamsSetQuality(params, 95, stream));
        CHECK(nvjpegEncoderParamsSetSamplingFactors(params, NVJPEG_CSS_420, stream));
        const double start = now_ms();
        for (int r = 0; r < 20; ++r) {
            CHECK(nvjpegEncodeImage(handles[k], states[k], params, &slots[0].images[0],
                                    NVJPEG_INPUT_BGRI, width, height, stream));
            size_t length = 0;
            CHECK(nvjpegEncodeRetrieveBitstream(handles[k], states[k], nullptr, &length, stream));
            encoded[k].resize(length);
            CHECK(nvjpegEncodeRetrieveBitstream(handles[k], states[k], encoded[k].data(), &length,
                                                stream));
            CHECK(cudaStreamSynchronize(stream));
        }
        std::printf("  %s handle: %.2f ms an image, %zu bytes\n",
                    k ? "hardware decoder's" : "default backend's", (now_ms() - start) / 20,
                    encoded[k].size());
    }
    std::printf("  the same bytes: %s\n", encoded[0] == encoded[1] ? "yes" : "NO");
    std::fflush(stdout);
    _exit(0);  // the driver takes the context back
}
