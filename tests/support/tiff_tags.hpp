#pragma once
// What a TIFF file says, read back with libtiff (not Exiv2, which writes
// a TIFF output's metadata): its first directory's layout and raw strips,
// so that a test can tell the image is stored exactly as before, and the
// metadata tags, with those of its Exif and GPS sub-directories.
#include <cstdint>
#include <string>
#include <vector>

namespace cudaconv::test {

struct TiffLayout {
    std::uint32_t width = 0, height = 0, rows_per_strip = 0;
    std::uint16_t bits = 0, samples = 0, sample_format = 0, compression = 0, predictor = 0,
                  photometric = 0, planar = 0;
    std::vector<std::vector<std::uint8_t>> strips;  // as stored, still compressed
    bool operator==(const TiffLayout& o) const {
        return width == o.width && height == o.height && rows_per_strip == o.rows_per_strip &&
               bits == o.bits && samples == o.samples && sample_format == o.sample_format &&
               compression == o.compression && predictor == o.predictor &&
               photometric == o.photometric && planar == o.planar && strips == o.strips;
    }
};

struct TiffTags {
    bool opened = false;  // libtiff read the file
    int directories = 0;  // images in the file
    TiffLayout layout;    // the first's
    std::vector<std::uint8_t> icc;
    std::string make, model, date_time;  // empty where absent
    int orientation = 0;                 // 0 where absent
    bool has_exif = false;               // an Exif sub-directory
    double exposure_time = 0;
    std::string date_time_original;
    bool has_gps = false;  // a GPS sub-directory
    std::string gps_latitude_ref;
};

TiffTags read_tiff_tags(const std::vector<std::uint8_t>& file);

}  // namespace cudaconv::test
