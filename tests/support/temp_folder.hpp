#pragma once
// A fresh folder under the system's temporary folder for a unit test,
// removed with everything in it when the object goes.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

namespace cudaconv::test {

class TempFolder {
public:
    explicit TempFolder(const std::string& prefix = "cudaconv-test-") {
        path_ = std::filesystem::temp_directory_path() /
                (prefix + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(path_);
    }
    ~TempFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;

    const std::filesystem::path& path() const { return path_; }

    // Writes `content` to `name` (folders made as needed); its full path.
    std::filesystem::path write(const std::string& name, const std::string& content) const {
        const std::filesystem::path p = path_ / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }

private:
    std::filesystem::path path_;
};

}  // namespace cudaconv::test
