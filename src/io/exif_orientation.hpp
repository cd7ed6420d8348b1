#pragma once
// The orientation a camera recorded in a JPEG's EXIF block (tag 0x0112 of
// its first image directory): how the stored pixels must be turned to be
// upright, as cameras write it when the sensor was held sideways.
// Decoders give the pixels as stored; cudaconv turns them upright
// (--no-auto-orient keeps them as stored), as `convert -auto-orient` and
// OpenCV's cv::imread without IMREAD_UNCHANGED do.
#include <cstddef>
#include <cstdint>

namespace cudaconv {

// EXIF's values: 1 upright, 2 mirrored left-right, 3 turned 180 degrees,
// 4 mirrored top-bottom, 5 mirrored about the main diagonal, 6 turned 90
// degrees anticlockwise (so a clockwise turn makes it upright), 7 mirrored
// about the other diagonal, 8 turned 90 degrees clockwise.
constexpr int kUpright = 1;

// The orientation in an APP1 segment's payload (the bytes after its
// length: "Exif\0\0" then a TIFF structure), 1 to 8; kUpright where the
// payload is not EXIF, has no orientation tag, or is malformed in any way
// (a camera's bad tag must not fail the image). Reads only [data, data + size).
int exif_orientation(const std::uint8_t* data, std::size_t size);

// Where in a TIFF structure (an EXIF block after its "Exif\0\0") the
// orientation's SHORT value lies, for rewriting it; SIZE_MAX where there
// is none or the structure is malformed.
std::size_t tiff_orientation_at(const std::uint8_t* tiff, std::size_t size);

// Whether the orientation swaps width and height (5 to 8).
inline bool swaps_sides(int orientation) { return orientation >= 5 && orientation <= 8; }

}  // namespace cudaconv
