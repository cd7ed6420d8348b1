#include "support/files.hpp"

#include <fstream>
#include <sstream>

#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

std::string sample(const std::string& name) { return (source_dir() / "images" / name).string(); }

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const fs::path& p, const std::string& bytes) {
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
}

void copy_sample(const std::string& name, const fs::path& to) {
    fs::create_directories(to.parent_path());
    fs::copy_file(sample(name), to, fs::copy_options::overwrite_existing);
}

}  // namespace cudaconv::test
