#pragma once
// OpenCV 4.6's image codecs talk on stderr behind OpenCV's logger: libjpeg
// prints "Corrupt JPEG data: ..." and still returns an image, libpng prints
// "libpng error: ...", and imdecode/imread print "can't read data: ..." on
// std::cerr. cudaconv promises one clear line per error, and those lines are
// also the only sign that a JPEG decoded with damage. So while a thread
// decodes or encodes, what that thread writes to stderr is kept here instead;
// other threads' output, and this thread's outside that window, pass through.
#include <string>

namespace cudaconv::detail {

// Puts pass-through filters in front of the C `stderr` stream and std::cerr.
// Once per process, before other threads start; later calls do nothing.
void install_codec_message_capture();

// While alive, this thread's writes to stderr and std::cerr are recorded
// (the first few KiB) rather than printed. Nests: an inner capture hands
// nothing to the outer one.
class CodecMessages {
public:
    CodecMessages();
    ~CodecMessages();
    CodecMessages(const CodecMessages&) = delete;
    CodecMessages& operator=(const CodecMessages&) = delete;

    const std::string& text() const { return text_; }

    // The most useful line for a user, naming who said it: the codec
    // library's own words first ("libpng: IDAT: CRC error"), else the gist
    // of OpenCV's "imdecode_(...): can't read data" line ("OpenCV: ...");
    // "" when nothing was said.
    std::string summary() const;

private:
    std::string text_;
    std::string* previous_;
};

// An OpenCV exception's text on one line (CV_Check spreads it over several),
// for messages that must stay one line.
std::string one_line(const std::string& text);

}  // namespace cudaconv::detail
