#include "compare/folder_match.hpp"

#include <algorithm>
#include <iterator>
#include <system_error>

#include <fmt/format.h>

#include "io/inputs.hpp"
#include "base/errors.hpp"
#include "base/printable.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

std::vector<std::string> image_files_under(const fs::path& root) {
    std::vector<std::string> files;
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::directory_entry& entry = *it;
        std::error_code type_ec;
        if (!entry.is_regular_file(type_ec)) continue;
        const std::string name = entry.path().filename().string();
        if (!is_image_extension(extension_of(name))) continue;
        if (files.size() == kMaxInputFiles) {
            throw UsageError(fmt::format("{}: more than {} image files (the most compare takes)",
                                         printable(root.native()), kMaxInputFiles));
        }
        files.push_back(entry.path().lexically_relative(root).generic_string());
    }
    if (ec) {
        throw WorkError(
            fmt::format("{}: cannot read the folder: {}", printable(root.native()), ec.message()));
    }
    std::sort(files.begin(), files.end());
    return files;
}

FolderMatch match_folders(const fs::path& a, const fs::path& b) {
    const std::vector<std::string> in_a = image_files_under(a);
    const std::vector<std::string> in_b = image_files_under(b);
    FolderMatch m;
    std::set_intersection(in_a.begin(), in_a.end(), in_b.begin(), in_b.end(),
                          std::back_inserter(m.both));
    std::set_difference(in_b.begin(), in_b.end(), in_a.begin(), in_a.end(),
                        std::back_inserter(m.missing));
    std::set_difference(in_a.begin(), in_a.end(), in_b.begin(), in_b.end(),
                        std::back_inserter(m.extra));
    return m;
}

}  // namespace cudaconv
