// Hostile images cannot exhaust time or memory (issue 32, items 5 and 6):
// a PNG whose image data inflates far past its size, small files whose
// headers claim huge images, --max-pixels, a memory limit, and SIGTERM in
// the middle of a long decode. Each runs the binary in a child process and
// measures it (wait4's CPU time and peak resident memory), files made here.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "support/black_png.hpp"
#include "support/child_process.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"
#include "support/sanitizers.hpp"

namespace cudaconv::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Clock = std::chrono::steady_clock;

// cudaconv with `args` in `dir`, under an address-space limit where one
// is given, run to its end.
ChildExit run_measured(const std::vector<std::string>& args, const fs::path& dir,
                       rlim_t address_space = 0) {
    ChildSetup setup;
    if (address_space != 0) setup.limits.push_back({RLIMIT_AS, address_space});
    Child child(args, dir, setup);
    return child.wait();
}

// cudaconv's own resident memory at start is about 70 MB (its libraries);
// these inputs must be refused before anything image-sized is made.
constexpr long kLowPeakKb = 200 * 1024;
// Start-up alone takes 0.2-0.3 s of CPU here (about 1 s under a sanitizer,
// whose runtime and instrumented libraries start slowly); a refusal adds next
// to none, where decoding the claimed size would take minutes.
#ifdef CUDACONV_TEST_UNDER_SANITIZER
constexpr double kQuickCpuS = 4.0;
#else
constexpr double kQuickCpuS = 1.0;
#endif

// A real JPEG whose frame header claims another size.
std::string jpeg_claiming(std::uint16_t width, std::uint16_t height) {
    std::vector<std::uint8_t> bytes;
    REQUIRE(cv::imencode(".jpg", cv::Mat(64, 64, CV_8UC3, cv::Scalar(10, 20, 30)), bytes));
    for (std::size_t i = 0; i + 8 < bytes.size(); ++i) {
        if (bytes[i] == 0xFF && bytes[i + 1] == 0xC0) {  // SOF0: length, precision, height, width
            bytes[i + 5] = static_cast<std::uint8_t>(height >> 8);
            bytes[i + 6] = static_cast<std::uint8_t>(height);
            bytes[i + 7] = static_cast<std::uint8_t>(width >> 8);
            bytes[i + 8] = static_cast<std::uint8_t>(width);
            return std::string(bytes.begin(), bytes.end());
        }
    }
    FAIL("no SOF0 in OpenCV's JPEG");
    return {};
}

void check_quick_and_small(const ChildExit& m) {
    CHECK(m.cpu_s < kQuickCpuS);
    CHECK(m.peak_rss_kb < kLowPeakKb);
}

// One line naming the input, never an allocator's words.
void check_one_clean_line(const ChildExit& m) {
    CHECK(std::count(m.err.begin(), m.err.end(), '\n') == 1);
    CHECK_THAT(m.err, !Contains("bad_alloc") && !Contains("alloc.cpp") && !Contains("OpenCV("));
}

}  // namespace

TEST_CASE("hostile: a PNG whose data inflates far past its size fails at once", "[cli][hostile]") {
    TempDir dir;
    // 100x100 pixels and 2 GB of zeros after them, in a 2 MB file: OpenCV's
    // reader inflated them all (4 s) and kept the image.
    write_file(dir / "bomb.png", black_png(100, 100, 0, 8, std::uint64_t{2} << 30, 65536));
    const ChildExit m = run_measured({"bomb.png", "-f", "edge", "-o", "out.png"}, dir.path());
    INFO(m.err);
    CHECK(m.exit_code == 1);
    CHECK_THAT(m.err, Contains("bomb.png: truncated or corrupt PNG data (more image data than its "
                               "100x100 pixels)"));
    check_quick_and_small(m);
    CHECK_FALSE(fs::exists(dir / "out.png"));
}

TEST_CASE("hostile: files claiming huge images are refused before any allocation",
          "[cli][hostile]") {
    TempDir dir;
    // A PNG of a few dozen bytes claiming 46340x46340 gray, a 1 KB JPEG
    // claiming 32768x32767: too little data for the size, found before
    // decoding (and before the CPU variant's output, made from the header,
    // took 2 and 3 GB).
    const std::string tiny_png = black_png(46340, 46340, 0);
    write_file(dir / "tiny.png",
               tiny_png.substr(0, 33) + png_chunk("IDAT", zeros_zlib(64)) + png_chunk("IEND", ""));
    write_file(dir / "tiny.jpg", jpeg_claiming(32768, 32767));
    // An 8.3 MB PNG of 32768x32767 16-bit RGBA whose data holds its rows:
    // plausible, but past --max-pixels.
    write_file(dir / "big.png", black_png(32768, 32767, 6, 16));
    // A 64-byte RLE BMP claiming 30000x30000: RLE may end a bitmap at once,
    // so only --max-pixels stands in its way.
    std::string bmp = "BM";
    const auto le32 = [&bmp](std::uint32_t v) {
        for (int shift = 0; shift < 32; shift += 8) bmp += static_cast<char>(v >> shift);
    };
    for (const std::uint32_t v : {0u, 0u, 62u, 40u, 30000u, static_cast<std::uint32_t>(-30000)}) {
        le32(v);  // file size, reserved, pixels' offset, header size, width, height (top-down)
    }
    for (const std::uint32_t v : {0x00080001u, 1u, 0u, 0u, 0u, 2u, 0u, 0u, 0u}) {
        le32(v);  // 1 plane of 8 bits, BI_RLE8, ..., 2 colours; the palette (black, black)
    }
    bmp += {0, 1};  // end of bitmap
    write_file(dir / "tiny.bmp", bmp);

    const std::vector<std::pair<std::string, std::string>> refusals = {
        {"tiny.png", "tiny.png: truncated PNG: its 12 bytes of image data cannot hold 46340x46340 "
                     "pixels (at least 2080853 bytes)"},
        {"tiny.jpg", "tiny.jpg: truncated JPEG: its "},
        {"big.png", "big.png: 32768x32767 pixels is more than --max-pixels 268435456 (raise it, "
                    "or 0 for no limit)"},
        {"tiny.bmp", "tiny.bmp: 30000x30000 pixels is more than --max-pixels 268435456"},
    };
    for (const auto& [input, message] : refusals) {
        for (const char* kernel : {"cpu", "auto"}) {
            const ChildExit m =
                run_measured({input, "-f", "edge", "-k", kernel, "-o", "out.png"}, dir.path());
            INFO(input << " -k " << kernel << ": " << m.err);
            CHECK(m.exit_code == 1);
            CHECK_THAT(m.err, Contains(message));
            check_quick_and_small(m);
            check_one_clean_line(m);
        }
    }
    CHECK_FALSE(fs::exists(dir / "out.png"));
}

TEST_CASE("hostile: --max-pixels refuses larger inputs, and the batch goes on", "[cli][hostile]") {
    TempDir dir;
    fs::copy_file(sample("camera.png"), dir / "camera.png");    // 512x512
    fs::copy_file(sample("chelsea.png"), dir / "chelsea.png");  // 451x300
    CommandResult r = run_cudaconv(
        {"camera.png", "chelsea.png", "-f", "edge", "-o", "out/", "--max-pixels", "200000"},
        dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("camera.png: 512x512 pixels is more than --max-pixels 200000 "
                               "(raise it, or 0 for no limit)"));
    CHECK_THAT(r.err, Contains("done 1, skipped 0, failed 1 of 2 images"));
    CHECK(fs::exists(dir / "out" / "chelsea.png"));
    CHECK_FALSE(fs::exists(dir / "out" / "camera.png"));

    // 0: no limit.
    r = run_cudaconv({"camera.png", "-f", "edge", "-o", "zero.png", "--max-pixels", "0"},
                     dir.path());
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(dir / "zero.png"));
    r = run_cudaconv({"camera.png", "-f", "edge", "-o", "x.png", "--max-pixels", "-5"}, dir.path());
    CHECK(r.exit_code == 2);

    // compare decodes too, under the same option.
    r = run_cudaconv({"compare", "camera.png", "camera.png", "--max-pixels", "1000"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out + r.err,
               Contains("camera.png: 512x512 pixels is more than --max-pixels 1000"));
    r = run_cudaconv({"compare", "camera.png", "camera.png", "--max-pixels", "262144"}, dir.path());
    CHECK(r.exit_code == 0);
}

TEST_CASE("hostile: under a memory limit a large image is refused with the memory it needs",
          "[cli][hostile]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: an address space limit under a sanitizer\n";
    return;
#endif
    TempDir dir;
    // 16000x16000 RGB, 768 MB decoded, in a 750 KB file: the decoded image,
    // the output and the encoder's copies need 3.1 GB; the process may have
    // 2 GB of address space, part of it taken by its libraries and threads.
    write_file(dir / "big.png", black_png(16000, 16000, 2));
    const ChildExit m =
        run_measured({"big.png", "-f", "edge", "-k", "cpu", "-j", "1", "-o", "out.png"}, dir.path(),
                     rlim_t{2} << 30);
    INFO(m.err);
    CHECK(m.exit_code == 1);
    CHECK_THAT(m.err,
               Contains("big.png: 16000x16000 RGB needs about 3.1 GB, ") && Contains(" available"));
    check_quick_and_small(m);
    check_one_clean_line(m);
    CHECK_FALSE(fs::exists(dir / "out.png"));
}

TEST_CASE("hostile: SIGTERM ends a long PNG decode within a second, writing nothing",
          "[cli][hostile][signal]") {
    TempDir dir;
    // One column of 100 million rows: a 200 KB file that takes seconds to
    // decode (libpng's work is by the row), 100 MB when decoded.
    write_file(dir / "tall.png", black_png(1, 100'000'000, 0));
    // Under way once the decoded rows take memory: 40 MB more than a
    // cudaconv that only starts takes (its libraries; a sanitizer's shadow
    // memory in the asan build).
    const long under_way_kb = run_measured({"--version"}, dir.path()).peak_rss_kb + 40 * 1024;
    Child child({"tall.png", "-f", "none", "-o", "out.png"}, dir.path());
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    long rss_kb = 0;
    while (child.running() && rss_kb < under_way_kb && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const std::string statm = read_bytes("/proc/" + std::to_string(child.pid()) + "/statm");
        const std::size_t space = statm.find(' ');
        if (space != std::string::npos) rss_kb = std::stol(statm.substr(space + 1)) * 4;
    }
    REQUIRE(child.running());
    const auto signalled = Clock::now();
    child.signal(SIGTERM);
    const ChildExit m = child.wait();
    const double signal_to_exit_s = std::chrono::duration<double>(Clock::now() - signalled).count();
    INFO(m.err);
    CHECK(m.exit_code == 143);
    CHECK(signal_to_exit_s < 1.0);
    CHECK_THAT(m.err, Contains("not done 1"));
    CHECK(dir.entries() == std::vector<std::string>{"stderr.txt", "tall.png"});
}

}  // namespace cudaconv::test
