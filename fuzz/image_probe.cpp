// Fuzz target: detail::probe_image (src/io/format_probe.hpp), the look at
// an image's first bytes before it is decoded: the JPEG segment walk, the
// PNG chunk walk, a JPEG's EXIF orientation, the TIFF directory read,
// every other format's header size, and the EXIF and ICC metadata of a
// JPEG or PNG (an iCCP profile inflated), on any bytes. It reads
// nothing outside the buffer (AddressSanitizer sees to that: libFuzzer's
// buffer is exactly the input's size) and tells only what it can hold.
#include <cstddef>
#include <cstdint>

#include "checks.hpp"
#include "io/format_probe.hpp"
#include "io/metadata.hpp"

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
    // At most 4 channels of 64-bit samples.
    FUZZ_CHECK(probe.pixel_bytes >= 0 && probe.pixel_bytes <= 32, "%d bytes a pixel",
               probe.pixel_bytes);
    // A size is told with what its pixels take, and only for a format known.
    if (probe.width > 0 && probe.height > 0) {
        FUZZ_CHECK(probe.format != ImageFormat::unknown, "an unknown format told %lldx%lld",
                   static_cast<long long>(probe.width), static_cast<long long>(probe.height));
        FUZZ_CHECK(probe.pixel_bytes > 0, "%s told %lldx%lld without its pixel size",
                   cudaconv::detail::format_name(probe.format), static_cast<long long>(probe.width),
                   static_cast<long long>(probe.height));
    }
    FUZZ_CHECK(probe.orientation >= 1 && probe.orientation <= 8, "EXIF orientation %d",
               probe.orientation);
    FUZZ_CHECK(probe.format == ImageFormat::jpeg || probe.orientation == 1,
               "orientation %d outside a JPEG", probe.orientation);
    if (probe.format == ImageFormat::unknown) {
        FUZZ_CHECK(probe.problem.empty(), "an unknown format with a problem: %s",
                   probe.problem.c_str());
    }
    if (!probe.problem.empty()) cudaconv::fuzz::check_message(probe.problem);
    // The metadata an output keeps reads the same headers (io/metadata.hpp).
    const cudaconv::ImageMetadata metadata = cudaconv::read_metadata(data, size);
    FUZZ_CHECK(metadata.exif.size() <= size, "%zu EXIF bytes from %zu", metadata.exif.size(), size);
    return 0;
}
