#include "batch/inputs.hpp"

#include <glob.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

namespace {

// Hidden files and folders are left out of walks: thumbnails caches, and
// macOS "._photo.jpg" resource forks that carry an image extension but no
// image.
bool is_hidden(const fs::path& p) {
    const std::string name = p.filename().string();
    return name.size() > 1 && name[0] == '.' && name != "..";
}

bool is_image_file(const fs::directory_entry& entry) {
    std::error_code ec;
    return entry.is_regular_file(ec) && !is_hidden(entry.path()) &&
           is_image_extension(extension_of(entry.path().filename().string()));
}

class Expander {
public:
    explicit Expander(bool recursive) : recursive_(recursive) {}

    void add_argument(const std::string& arg) {
        std::error_code ec;
        if (arg != kStdStream && fs::is_directory(arg, ec)) return add_folder(arg, arg, "");
        if (arg != kStdStream && !fs::exists(fs::symlink_status(arg, ec)) &&
            has_glob_characters(arg)) {
            return add_pattern(arg);
        }
        add_file(arg, "");
    }

    // A line of a --from list: a path, never a pattern (lists come from
    // programs such as find, and file names may hold '*' or '[').
    void add_listed(const std::string& path) {
        std::error_code ec;
        if (fs::is_directory(path, ec)) return add_folder(path, path, "");
        add_file(path, "");
    }

    // Folders without images: a warning each when others gave images, the
    // error when nothing did.
    std::vector<InputFile> take() {
        if (files_.empty()) {
            throw UsageError(empty_.empty() ? "no input images" : empty_.front());
        }
        for (const std::string& message : empty_) spdlog::warn("{}", message);
        return std::move(files_);
    }

private:
    void add_file(const std::string& path, const std::string& dir) {
        std::error_code ec;
        // Missing files have no canonical form; they are kept (and fail later).
        const fs::path key = path == kStdStream ? fs::path(path) : fs::weakly_canonical(path, ec);
        if (!seen_.insert(ec ? fs::path(path) : key).second) {
            spdlog::debug("{}: named twice, read once", path);
            return;
        }
        files_.push_back({path, dir});
    }

    void add_folder(const fs::path& root, const std::string& shown, const std::string& dir_prefix) {
        std::vector<fs::path> found;
        std::error_code ec;
        if (recursive_) {
            fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
            for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
                if (is_hidden(it->path())) {
                    std::error_code dir_ec;
                    if (it->is_directory(dir_ec)) it.disable_recursion_pending();
                    continue;
                }
                if (is_image_file(*it)) found.push_back(it->path());
            }
        } else {
            fs::directory_iterator it(root, ec);
            for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
                if (is_image_file(*it)) found.push_back(it->path());
            }
        }
        if (ec) {
            throw UsageError(fmt::format("{}: cannot read the folder: {}", shown, ec.message()));
        }
        if (found.empty()) {
            empty_.push_back(fmt::format("{}: no image files{}", shown,
                                         recursive_ ? "" : " (-r looks in subfolders too)"));
        }
        std::sort(found.begin(), found.end());
        for (const fs::path& p : found) {
            const fs::path rel = p.parent_path().lexically_relative(root);
            fs::path dir = fs::path(dir_prefix) / rel;
            dir = dir.lexically_normal();
            std::string text = dir.generic_string();
            if (text == "." || text == "./") text.clear();
            if (!text.empty() && text.back() == '/') text.pop_back();
            add_file(p.string(), text);
        }
    }

    // The root of a pattern, for {dir}, is its longest leading part without
    // glob characters: files matched by 'shots/*/raw/*.png' keep
    // "<day>/raw" as their {dir}.
    void add_pattern(const std::string& pattern) {
        glob_t matches{};
        const int status = ::glob(pattern.c_str(), GLOB_MARK, nullptr, &matches);
        std::vector<std::string> paths;
        if (status == 0) paths.assign(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
        globfree(&matches);
        if (status == GLOB_NOSPACE || status == GLOB_ABORTED) {
            throw UsageError(fmt::format("\"{}\": cannot match the pattern (a folder could not "
                                         "be read, or out of memory)", pattern));
        }
        const fs::path root = pattern_root(pattern);
        std::size_t before = files_.size();
        for (std::string p : paths) {
            const bool folder = !p.empty() && p.back() == '/';  // GLOB_MARK
            if (folder) {
                p.pop_back();
                add_folder(p, p, relative_dir(root, fs::path(p) / "x"));
                continue;
            }
            if (!is_image_extension(extension_of(p)) || is_hidden(p)) continue;
            add_file(p, relative_dir(root, p));
        }
        if (files_.size() == before) {
            throw UsageError(fmt::format("\"{}\": no image file matches the pattern", pattern));
        }
    }

    static fs::path pattern_root(const std::string& pattern) {
        fs::path root;
        const fs::path p(pattern);
        for (const fs::path& part : p.parent_path()) {
            if (has_glob_characters(part.string())) break;
            root /= part;
        }
        return root;
    }

    static std::string relative_dir(const fs::path& root, const fs::path& file) {
        fs::path rel = root.empty() ? file.parent_path()
                                    : file.parent_path().lexically_relative(root);
        std::string text = rel.lexically_normal().generic_string();
        if (text == "." || text == "./") text.clear();
        if (!text.empty() && text.back() == '/') text.pop_back();
        return text;
    }

    bool recursive_;
    std::set<fs::path> seen_;
    std::vector<InputFile> files_;
    std::vector<std::string> empty_;
};

std::vector<std::string> read_list(const std::string& from) {
    std::vector<std::string> lines;
    auto read = [&lines](std::istream& in) {
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (!line.empty()) lines.push_back(line);
        }
    };
    if (from == kStdStream) {
        read(std::cin);
    } else {
        std::ifstream in(from);
        if (!in) {
            const int error = errno;  // what ifstream's open left, as std::strerror says it
            throw UsageError(
                fmt::format("--from {}: cannot read the list: {}", from, std::strerror(error)));
        }
        read(in);
    }
    return lines;
}

}  // namespace

bool has_glob_characters(const std::string& arg) {
    return arg.find_first_of("*?[") != std::string::npos;
}

std::vector<InputFile> expand_inputs(const InputRequest& request) {
    if (request.from == kStdStream &&
        std::count(request.args.begin(), request.args.end(), kStdStream) > 0) {
        throw UsageError("--from - and the input - would both read stdin");
    }
    Expander expander(request.recursive);
    for (const std::string& arg : request.args) expander.add_argument(arg);
    if (!request.from.empty()) {
        for (const std::string& path : read_list(request.from)) expander.add_listed(path);
    }
    return expander.take();
}

}  // namespace cudaconv
