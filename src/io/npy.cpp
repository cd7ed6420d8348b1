#include "io/npy.hpp"

#include <cctype>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cudaconv {
namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr std::size_t kAlignment = 64;
// A side of at most 2^31 samples, as the images cudaconv reads.
constexpr std::int64_t kLargestSide = std::int64_t{1} << 31;

[[noreturn]] void fail(const std::string& problem) { throw std::invalid_argument(problem); }

// The header's dict, read strictly: a Python literal of three keys in any
// order, each value of the one form NumPy writes.
class HeaderReader {
public:
    explicit HeaderReader(std::string_view text) : text_(text) {}

    NpyArray read() {
        expect('{');
        bool descr = false, order = false, shape = false;
        NpyArray array;
        while (true) {
            skip_spaces();
            if (peek() == '}') break;
            const std::string key = quoted();
            expect(':');
            if (key == "descr") {
                const std::string value = quoted();
                if (value != "<f4") {
                    fail("dtype '" + printable(value) + "': only float32 ('<f4') is read");
                }
                descr = true;
            } else if (key == "fortran_order") {
                skip_spaces();
                if (take_word("True")) fail("Fortran (column-major) order: only C order is read");
                if (!take_word("False")) fail("fortran_order is neither True nor False");
                order = true;
            } else if (key == "shape") {
                array.shape = tuple();
                shape = true;
            } else {
                fail("unknown header key '" + printable(key) + "'");
            }
            skip_spaces();
            if (peek() == ',') {
                ++at_;
                continue;
            }
            skip_spaces();
            if (peek() != '}') fail("the header's dict is malformed");
        }
        ++at_;  // '}'
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n')) ++at_;
        if (at_ != text_.size()) fail("text after the header's dict");
        if (!descr || !order || !shape) fail("the header lacks descr, fortran_order or shape");
        return array;
    }

private:
    static std::string printable(const std::string& s) {
        std::string out;
        for (char c : s) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
        return out.substr(0, 32);
    }
    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
    void skip_spaces() {
        while (at_ < text_.size() && text_[at_] == ' ') ++at_;
    }
    void expect(char c) {
        skip_spaces();
        if (peek() != c) fail("the header's dict is malformed");
        ++at_;
    }
    bool take_word(std::string_view word) {
        if (text_.substr(at_, word.size()) != word) return false;
        at_ += word.size();
        return true;
    }
    std::string quoted() {
        skip_spaces();
        const char q = peek();
        if (q != '\'' && q != '"') fail("the header's dict is malformed");
        const std::size_t end = text_.find(q, at_ + 1);
        if (end == std::string_view::npos) fail("the header's dict is malformed");
        std::string value(text_.substr(at_ + 1, end - at_ - 1));
        at_ = end + 1;
        return value;
    }
    std::vector<std::int64_t> tuple() {
        expect('(');
        std::vector<std::int64_t> sizes;
        while (true) {
            skip_spaces();
            if (peek() == ')') break;
            if (!std::isdigit(static_cast<unsigned char>(peek())))
                fail("a shape size is not a number");
            std::int64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                v = v * 10 + (text_[at_++] - '0');
                if (v > kLargestSide) fail("a shape size past 2^31");
            }
            sizes.push_back(v);
            skip_spaces();
            if (peek() == ',') ++at_;
            else if (peek() != ')') fail("the shape is malformed");
        }
        ++at_;  // ')'
        return sizes;
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

std::uint32_t little_endian(const std::uint8_t* p, int bytes) {
    std::uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

NpyHeader read_npy_header(const std::uint8_t* bytes, std::size_t size, const NpyRank& rank) {
    if (size < 10 || std::memcmp(bytes, kMagic.data(), kMagic.size()) != 0) {
        fail("not a .npy file (no \\x93NUMPY at its start)");
    }
    const int major = bytes[6];
    if (major < 1 || major > 3) {
        fail(".npy version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
             ": 1.0 to 3.0 are read");
    }
    const int length_bytes = major == 1 ? 2 : 4;
    const std::size_t prefix = 8 + static_cast<std::size_t>(length_bytes);
    if (size < prefix) fail("truncated in its header");
    const std::size_t length = little_endian(bytes + 8, length_bytes);
    if (length > kNpyLargestHeader) {
        fail("a header of " + std::to_string(length) + " bytes (at most " +
             std::to_string(kNpyLargestHeader) + ")");
    }
    if (size < prefix + length) fail("truncated in its header");
    const std::string_view text(reinterpret_cast<const char*>(bytes + prefix), length);
    NpyHeader header;
    header.shape = HeaderReader(text).read().shape;
    const int dims = static_cast<int>(header.shape.size());
    if (dims < rank.min || dims > rank.max) {
        fail(std::to_string(dims) + (dims == 1 ? " dimension: " : " dimensions: ") + rank.expected);
    }
    // Each size is at most 2^31, so the product of four stays within 2^124:
    // it is counted in double first.
    double samples = 1.0;
    for (std::int64_t s : header.shape) {
        if (s == 0) fail("an empty array (a size of 0)");
        samples *= static_cast<double>(s);
    }
    if (samples > static_cast<double>(std::numeric_limits<std::int64_t>::max() / 4)) {
        fail("a shape of more samples than a file can hold");
    }
    header.samples = static_cast<std::size_t>(samples);
    header.data_offset = prefix + length;
    return header;
}

void check_npy_data(const NpyHeader& header, std::size_t size) {
    const std::size_t data_bytes = size - header.data_offset;
    const std::size_t needed = header.samples * sizeof(float);
    if (data_bytes != needed) {
        fail(std::to_string(data_bytes) + " bytes of data where the shape needs " +
             std::to_string(needed) + (data_bytes < needed ? " (truncated)" : ""));
    }
}

NpyArray parse_npy(const std::uint8_t* bytes, std::size_t size, const NpyRank& rank) {
    const NpyHeader header = read_npy_header(bytes, size, rank);
    check_npy_data(header, size);
    const std::size_t data_bytes = size - header.data_offset;
    NpyArray array;
    array.shape = header.shape;
    array.data.resize(header.samples);
    std::memcpy(array.data.data(), bytes + header.data_offset, data_bytes);
    return array;
}

std::vector<std::uint8_t> encode_npy(const std::vector<std::int64_t>& shape, const float* data) {
    std::string dims;
    std::size_t samples = 1;
    for (std::int64_t s : shape) {
        dims += std::to_string(s) + ", ";
        samples *= static_cast<std::size_t>(s);
    }
    // "H, W, C"; one size keeps its comma, as Python writes (N,).
    if (!dims.empty()) dims.resize(dims.size() - (shape.size() > 1 ? 2 : 1));
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    const std::size_t used = 10 + header.size() + 1;  // magic, version, length, text, '\n'
    header.append((kAlignment - used % kAlignment) % kAlignment, ' ');
    header += '\n';
    std::vector<std::uint8_t> file(kMagic.begin(), kMagic.end());
    file.push_back(1);
    file.push_back(0);
    file.push_back(static_cast<std::uint8_t>(header.size() & 0xFF));
    file.push_back(static_cast<std::uint8_t>(header.size() >> 8));
    file.insert(file.end(), header.begin(), header.end());
    const auto* raw = reinterpret_cast<const std::uint8_t*>(data);
    file.insert(file.end(), raw, raw + samples * sizeof(float));
    return file;
}

}  // namespace cudaconv
