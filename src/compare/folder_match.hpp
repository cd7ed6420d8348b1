#pragma once
// `cudaconv compare DIR_A DIR_B`: which images of two trees correspond. Files
// are matched by their path relative to each root; only image files (by
// extension) take part, so logs and manifests beside them are ignored.
#include <filesystem>
#include <string>
#include <vector>

namespace cudaconv {

struct FolderMatch {
    std::vector<std::string> both;     // relative paths present in A and B
    std::vector<std::string> missing;  // only in B (the expected tree)
    std::vector<std::string> extra;    // only in A (the tree under test)
};

// Relative paths ("sub/x.png", '/'-separated) of the image files under
// root, recursively, sorted. Throws WorkError when root cannot be walked,
// UsageError past kMaxInputFiles (io/inputs.hpp) files.
std::vector<std::string> image_files_under(const std::filesystem::path& root);

// Sorted lists; a path present in both is matched once.
FolderMatch match_folders(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace cudaconv
