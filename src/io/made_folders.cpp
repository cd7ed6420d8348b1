#include "io/made_folders.hpp"

#include <filesystem>
#include <mutex>
#include <vector>

namespace cudaconv {
namespace {

namespace fs = std::filesystem;

std::mutex made_mutex;
std::vector<fs::path> made;  // in the order made: a folder before those inside it

}  // namespace

void make_folders(const std::string& folder, std::error_code& ec) {
    ec.clear();
    std::vector<fs::path> missing;  // innermost first
    for (fs::path at = fs::path(folder).lexically_normal(); !at.empty() && at != at.root_path();
         at = at.parent_path()) {
        if (at.filename().empty()) continue;  // a trailing '/'
        if (fs::exists(fs::symlink_status(at, ec))) break;
        missing.push_back(at);
    }
    ec.clear();
    const std::lock_guard<std::mutex> lock(made_mutex);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        // Another thread may have made it meanwhile: create_directory then
        // says false, and it is that thread's to note.
        if (fs::create_directory(*it, ec)) made.push_back(*it);
        if (ec) return;
    }
}

void remove_empty_made_folders() {
    const std::lock_guard<std::mutex> lock(made_mutex);
    for (auto it = made.rbegin(); it != made.rend(); ++it) {
        std::error_code ec;
        if (fs::is_directory(fs::symlink_status(*it, ec)) && fs::is_empty(*it, ec) && !ec) {
            fs::remove(*it, ec);
        }
    }
    made.clear();
}

}  // namespace cudaconv
