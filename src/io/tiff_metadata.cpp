#include "io/tiff_metadata.hpp"

#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <string>

#include <exiv2/exiv2.hpp>
#include <spdlog/spdlog.h>

namespace cudaconv {

namespace {

using Bytes = std::vector<std::uint8_t>;

// Exiv2's own messages (a tag it skips, a block it cannot read) are about
// metadata that is then left out, never an error: debug lines, not stderr.
void log_exiv2(int /*level*/, const char* message) {
    std::string text = message;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    spdlog::debug("exiv2: {}", text);
}

// Once, before any image: the log handler, and the XMP toolkit, which
// Exiv2 asks to be initialized once before its first use. (Its later
// namespace registrations would need a lock function to be shared by
// threads; a TIFF output gets no XMP: Exiv2's TIFF writer drops the
// XMLPacket tag.)
void set_up_exiv2() {
    static std::once_flag once;
    std::call_once(once, [] {
        Exiv2::LogMsg::setHandler(log_exiv2);
        Exiv2::LogMsg::setLevel(Exiv2::LogMsg::warn);
        Exiv2::XmpParser::initialize();
    });
}

// A classic TIFF's header, either byte order; a BigTIFF, which Exiv2 does
// not write, is left as it is.
bool is_tiff(const Bytes& file) {
    return file.size() >= 8 &&
           (std::memcmp(file.data(), "II*\0", 4) == 0 || std::memcmp(file.data(), "MM\0*", 4) == 0);
}

// The first directory's tags that describe the photo, not how an image is
// stored: those the TIFF output takes from the block. Every other tag of
// that directory (sizes, samples, compression, strips or tiles,
// resolution, colour layout, sub-images) is the encoder's to write; taken
// from a block, one could make the output decode otherwise, or not at all.
bool describes_the_photo(std::uint16_t tag) {
    switch (tag) {
        case 0x010E:  // ImageDescription
        case 0x010F:  // Make
        case 0x0110:  // Model
        case 0x0112:  // Orientation
        case 0x0131:  // Software
        case 0x0132:  // DateTime
        case 0x013B:  // Artist
        case 0x013C:  // HostComputer
        case 0x8298:  // Copyright
            return true;
        default: return false;
    }
}

// The EXIF block's tags a TIFF output keeps: its first directory's
// ("Image") that describe the photo, the Exif directory's ("Photo") with
// its interoperability directory and the maker note, and GPS. Not IFD1's
// thumbnail, nor other images' directories, which would be images in the
// output.
Exiv2::ExifData exif_tags(const Bytes& block) {
    Exiv2::ExifData all;
    if (block.empty() || block.size() > std::numeric_limits<std::uint32_t>::max()) return all;
    Exiv2::ExifParser::decode(all, block.data(), static_cast<std::uint32_t>(block.size()));
    Exiv2::ExifData kept;
    for (const Exiv2::Exifdatum& datum : all) {
        const std::string group = datum.groupName();
        if ((group == "Image" && describes_the_photo(datum.tag())) || group == "Photo" ||
            group == "Iop" || group == "GPSInfo" || Exiv2::ExifTags::isMakerGroup(group)) {
            kept.add(datum);
        }
    }
    return kept;
}

// A copy of `file` rewritten by Exiv2 with `exif`'s tags and the profile
// `icc` (Exiv2 may write in place into the bytes it is given); the file's
// own tags win over the block's of the same key. Empty where Exiv2 does not
// take the file for a TIFF. Throws Exiv2's errors.
Bytes rewritten_with(Bytes file, const Exiv2::ExifData& exif, const Bytes& icc) {
    auto image = Exiv2::ImageFactory::open(file.data(), static_cast<long>(file.size()));
    if (image.get() == nullptr || image->imageType() != Exiv2::ImageType::tiff) return {};
    image->readMetadata();
    Exiv2::ExifData& tags = image->exifData();
    for (const Exiv2::Exifdatum& datum : exif) {
        if (tags.findKey(Exiv2::ExifKey(datum.key())) == tags.end()) tags.add(datum);
    }
    if (!icc.empty()) {
        // As JPEG and PNG outputs carry it: the bytes as they came, unchecked.
        Exiv2::DataBuf profile(icc.data(), static_cast<long>(icc.size()));
        image->setIccProfile(profile, false);
    }
    image->writeMetadata();
    Exiv2::BasicIo& io = image->io();
    if (io.open() != 0) return {};
    Bytes out(io.size());
    const long got = io.read(out.data(), static_cast<long>(out.size()));
    io.close();
    if (got != static_cast<long>(out.size()) || !is_tiff(out)) return {};
    return out;
}

// rewritten_with(), or empty where Exiv2 fails: `what` is then left out.
Bytes rewritten_or_none(const Bytes& file, const Exiv2::ExifData& exif, const Bytes& icc,
                        const char* what) {
    try {
        return rewritten_with(file, exif, icc);
    } catch (const std::exception& e) {
        spdlog::debug("TIFF output: {} left out ({})", what, e.what());
    } catch (...) {
        spdlog::debug("TIFF output: {} left out (an error Exiv2 did not name)", what);
    }
    return {};
}

}  // namespace

Bytes tiff_with_metadata(Bytes file, const ImageMetadata& metadata) {
    if (metadata.empty() || !is_tiff(file)) return file;
    Exiv2::ExifData exif;
    try {
        set_up_exiv2();
        exif = exif_tags(metadata.exif);
    } catch (const std::exception& e) {
        spdlog::debug("TIFF output: the EXIF block left out ({})", e.what());
        exif.clear();
    } catch (...) {
        spdlog::debug("TIFF output: the EXIF block left out (an error Exiv2 did not name)");
        exif.clear();
    }
    // The EXIF tags with the profile; where Exiv2 cannot write them, the
    // profile alone.
    if (!exif.empty()) {
        Bytes out = rewritten_or_none(file, exif, metadata.icc, "the EXIF block");
        if (!out.empty()) return out;
    }
    if (!metadata.icc.empty()) {
        Bytes out = rewritten_or_none(file, Exiv2::ExifData(), metadata.icc, "the ICC profile");
        if (!out.empty()) return out;
    }
    return file;
}

std::string exiv2_version() { return Exiv2::versionString(); }

}  // namespace cudaconv
