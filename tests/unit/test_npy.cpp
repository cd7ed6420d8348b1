// The .npy reader and writer (io/npy.hpp): the writer's bytes are NumPy's
// own (np.save of the same array, NumPy 1.24), the reader takes them back,
// and every malformed file is one clear error.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/npy.hpp"

namespace cudaconv::test {
namespace {

std::vector<std::uint8_t> bytes_of(const std::string& text) {
    return std::vector<std::uint8_t>(text.begin(), text.end());
}

// A version 1.0 file with this header text (padded as NumPy pads it) and
// `data_bytes` bytes of data.
std::vector<std::uint8_t> npy_with(const std::string& dict, std::size_t data_bytes) {
    std::string header = dict;
    const std::size_t used = 10 + header.size() + 1;
    header.append((64 - used % 64) % 64, ' ');
    header += '\n';
    std::string file("\x93NUMPY\x01\x00", 8);
    file += static_cast<char>(header.size() & 0xFF);
    file += static_cast<char>(header.size() >> 8);
    file += header;
    file.append(data_bytes, '\0');
    return bytes_of(file);
}

std::string problem_of(const std::vector<std::uint8_t>& file) {
    try {
        parse_npy(file.data(), file.size());
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("npy: the writer's bytes are NumPy's, and read back") {
    const std::vector<float> data{0, 1, 2, 3, 4, 5};
    const std::vector<std::uint8_t> file = encode_npy({2, 3}, data.data());
    // np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3)): 128 bytes of
    // header, then the data.
    std::string header("\x93NUMPY\x01\x00v\x00", 10);
    header += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    header.append(128 - header.size() - 1, ' ');
    header += '\n';
    REQUIRE(file.size() == 152);
    CHECK(std::string(file.begin(), file.begin() + 128) == header);
    const NpyArray back = parse_npy(file.data(), file.size());
    CHECK(back.shape == std::vector<std::int64_t>{2, 3});
    CHECK(back.data == data);

    std::vector<float> cube(2 * 3 * 4);
    for (std::size_t i = 0; i < cube.size(); ++i) cube[i] = 0.5f * static_cast<float>(i);
    const std::vector<std::uint8_t> file3 = encode_npy({2, 3, 4}, cube.data());
    CHECK(file3.size() == 128 + cube.size() * 4);
    const NpyArray back3 = parse_npy(file3.data(), file3.size());
    CHECK(back3.shape == std::vector<std::int64_t>{2, 3, 4});
    CHECK(back3.data == cube);
}

TEST_CASE("npy: keys in any order, double quotes and version 2.0 are read") {
    const std::vector<std::uint8_t> reordered =
        npy_with("{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<f4\"}", 8);
    CHECK(parse_npy(reordered.data(), reordered.size()).shape == std::vector<std::int64_t>{1, 2});
    std::vector<std::uint8_t> v2 =
        npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", 4);
    // Version 2.0: a 4-byte header length.
    v2[6] = 2;
    v2.insert(v2.begin() + 10, {0, 0});
    CHECK(parse_npy(v2.data(), v2.size()).data.size() == 1);
}

TEST_CASE("npy: malformed files are one clear error each") {
    const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    struct Bad {
        std::vector<std::uint8_t> file;
        std::string says;
    };
    std::vector<std::uint8_t> v9 = npy_with(good, 24);
    v9[6] = 9;
    std::vector<std::uint8_t> huge_header = npy_with(good, 24);
    huge_header[6] = 2;
    huge_header.insert(huge_header.begin() + 10, {0, 0});
    huge_header[8] = 0xFF;
    huge_header[9] = 0xFF;
    huge_header[10] = 0xFF;
    const std::vector<Bad> bad{
        {bytes_of("P6\n2 3\n255\n"), "not a .npy file"},
        {bytes_of(std::string("\x93NUMPY\x01", 7)), "not a .npy file"},
        {v9, "version 9.0"},
        {huge_header, "a header of"},
        {npy_with(good, 20), "20 bytes of data where the shape needs 24"},
        {npy_with(good, 28), "28 bytes of data where the shape needs 24"},
        {npy_with(good, 0), "truncated"},
        {npy_with("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48), "'<f8'"},
        {npy_with("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24), "'>f4'"},
        {npy_with("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24), "Fortran"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", 24), "1 dimension:"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3, 1), }", 24),
         "4 dimensions"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", 0), "empty"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 3), }", 24),
         "past 2^31"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 2147483648), }",
                  24),
         "more samples than a file can hold"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536), }", 24),
         "(truncated)"},
        {npy_with("{'descr': '<f4', 'shape': (2, 3), }", 24), "lacks"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 24),
         "unknown header key 'x'"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } junk", 24),
         "text after"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 24),
         "not a number"},
        {npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 24), "malformed"},
        {npy_with("['descr']", 24), "malformed"},
    };
    for (const Bad& b : bad) {
        const std::string problem = problem_of(b.file);
        INFO(problem);
        CHECK_FALSE(problem.empty());
        CHECK(problem.find(b.says) != std::string::npos);
    }
}

}  // namespace cudaconv::test
