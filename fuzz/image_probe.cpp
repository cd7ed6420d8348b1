// Fuzz target: detail::probe_image (src/io/format_probe.hpp), the look at
// an image's first bytes before OpenCV decodes it: the JPEG segment walk,
// the PNG chunk walk and the TIFF directory read, on any bytes. It reads
// nothing outside the buffer (AddressSanitizer sees to that: libFuzzer's
// buffer is exactly the input's size) and tells only what it can hold.
#include <cstddef>
#include <cstdint>

#include "checks.hpp"
#include "io/format_probe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using cudaconv::detail::ImageFormat;
    const cudaconv::detail::FormatProbe probe = cudaconv::detail::probe_image(data, size);
    FUZZ_CHECK(probe.width >= 0 && probe.height >= 0, "%lldx%lld",
               static_cast<long long>(probe.width), static_cast<long long>(probe.height));
    FUZZ_CHECK(probe.channels == 0 || probe.channels == 1 || probe.channels == 3 ||
                   probe.channels == 4,
               "%d channels", probe.channels);
    FUZZ_CHECK(probe.sample_bytes >= 0 && probe.sample_bytes <= 2, "%d bytes a sample",
               probe.sample_bytes);
    // The header it told is what a walk found, so only a walked format has one.
    const bool walked = probe.format == ImageFormat::jpeg || probe.format == ImageFormat::png ||
                        probe.format == ImageFormat::tiff;
    FUZZ_CHECK(walked || (probe.width == 0 && probe.height == 0 && probe.problem.empty()),
               "%s told %lldx%lld, problem \"%s\"", cudaconv::detail::format_name(probe.format),
               static_cast<long long>(probe.width), static_cast<long long>(probe.height),
               probe.problem.c_str());
    if (!probe.problem.empty()) cudaconv::fuzz::check_message(probe.problem);
    return 0;
}
