#include "support/tiff_tags.hpp"

#include <sstream>

#include <tiffio.h>
#include <tiffio.hxx>

namespace cudaconv::test {
namespace {

std::string text_field(TIFF* tiff, ttag_t tag) {
    const char* value = nullptr;
    return TIFFGetField(tiff, tag, &value) == 1 && value != nullptr ? value : "";
}

// A RATIONAL, which libtiff hands out as a float or a double by the field.
double rational_field(TIFF* tiff, ttag_t tag) {
    const TIFFField* field = TIFFFieldWithTag(tiff, tag);
    if (field == nullptr) return 0;
    if (TIFFFieldSetGetSize(field) == 8) {
        double value = 0;
        return TIFFGetField(tiff, tag, &value) == 1 ? value : 0;
    }
    float value = 0;
    return TIFFGetField(tiff, tag, &value) == 1 ? value : 0;
}

TiffLayout layout_of(TIFF* tiff) {
    TiffLayout l;
    TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &l.width);
    TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &l.height);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_ROWSPERSTRIP, &l.rows_per_strip);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_BITSPERSAMPLE, &l.bits);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &l.samples);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLEFORMAT, &l.sample_format);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_COMPRESSION, &l.compression);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_PREDICTOR, &l.predictor);
    TIFFGetField(tiff, TIFFTAG_PHOTOMETRIC, &l.photometric);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_PLANARCONFIG, &l.planar);
    for (tstrip_t s = 0; s < TIFFNumberOfStrips(tiff); ++s) {
        const tmsize_t size = TIFFRawStripSize(tiff, s);
        std::vector<std::uint8_t> strip(size > 0 ? static_cast<std::size_t>(size) : 0);
        if (size > 0 && TIFFReadRawStrip(tiff, s, strip.data(), size) != size) strip.clear();
        l.strips.push_back(std::move(strip));
    }
    return l;
}

}  // namespace

TiffTags read_tiff_tags(const std::vector<std::uint8_t>& file) {
    TiffTags t;
    TIFFSetWarningHandler(nullptr);  // tags libtiff does not know: not this test's business
    std::istringstream in(std::string(file.begin(), file.end()));
    TIFF* tiff = TIFFStreamOpen("memory", &in);
    if (tiff == nullptr) return t;
    t.opened = true;
    t.directories = TIFFNumberOfDirectories(tiff);
    TIFFSetDirectory(tiff, 0);
    t.layout = layout_of(tiff);
    std::uint32_t icc_size = 0;
    const void* icc = nullptr;
    if (TIFFGetField(tiff, TIFFTAG_ICCPROFILE, &icc_size, &icc) == 1 && icc != nullptr) {
        const auto* bytes = static_cast<const std::uint8_t*>(icc);
        t.icc.assign(bytes, bytes + icc_size);
    }
    t.make = text_field(tiff, TIFFTAG_MAKE);
    t.model = text_field(tiff, TIFFTAG_MODEL);
    t.date_time = text_field(tiff, TIFFTAG_DATETIME);
    std::uint16_t orientation = 0;
    if (TIFFGetField(tiff, TIFFTAG_ORIENTATION, &orientation) == 1) t.orientation = orientation;
    toff_t exif = 0;
    toff_t gps = 0;
    const bool has_exif = TIFFGetField(tiff, TIFFTAG_EXIFIFD, &exif) == 1;
    const bool has_gps = TIFFGetField(tiff, TIFFTAG_GPSIFD, &gps) == 1;
    if (has_exif && TIFFReadEXIFDirectory(tiff, exif) == 1) {
        t.has_exif = true;
        t.exposure_time = rational_field(tiff, EXIFTAG_EXPOSURETIME);
        t.date_time_original = text_field(tiff, EXIFTAG_DATETIMEORIGINAL);
    }
    if (has_gps && TIFFReadGPSDirectory(tiff, gps) == 1) {
        t.has_gps = true;
        t.gps_latitude_ref = text_field(tiff, GPSTAG_LATITUDEREF);
    }
    TIFFClose(tiff);
    return t;
}

}  // namespace cudaconv::test
