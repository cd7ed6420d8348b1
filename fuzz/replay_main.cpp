// The fuzz targets without libFuzzer: runs a target's LLVMFuzzerTestOneInput
// once on each file named, and on each file of each folder named, in a
// buffer of exactly the file's size. The normal builds (dev, asan) link it
// with each target to replay the seed corpora and the regression inputs as
// tests, compiled as the product is (fuzz/ builds them with clang only).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

void replay(const fs::path& file) {
    const std::size_t size = fs::file_size(file);
    // A buffer of its own, so that AddressSanitizer sees a read past its end.
    const std::unique_ptr<std::uint8_t[]> data(new std::uint8_t[size]);
    std::ifstream in(file, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(data.get()), static_cast<std::streamsize>(size))) {
        std::fprintf(stderr, "replay: %s: cannot read\n", file.c_str());
        std::exit(2);
    }
    LLVMFuzzerTestOneInput(data.get(), size);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
        return 2;
    }
    int count = 0;
    for (int i = 1; i < argc; ++i) {
        std::vector<fs::path> files;
        if (fs::is_directory(argv[i])) {
            for (const fs::directory_entry& e : fs::directory_iterator(argv[i])) {
                if (e.is_regular_file()) files.push_back(e.path());
            }
            std::sort(files.begin(), files.end());
        } else if (fs::is_regular_file(argv[i])) {
            files.emplace_back(argv[i]);
        } else {
            std::fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
            return 2;
        }
        for (const fs::path& file : files) {
            std::printf("replay: %s\n", file.c_str());
            std::fflush(stdout);
            replay(file);
            ++count;
        }
    }
    std::printf("replay: %d inputs, no failure\n", count);
    return 0;
}
