#include "io/inputs.hpp"

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

#include "base/errors.hpp"
#include "base/line_reader.hpp"
#include "base/printable.hpp"
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
    Expander(bool recursive, std::size_t max_files)
        : recursive_(recursive), max_files_(max_files) {}

    std::size_t max_files() const { return max_files_; }

    void add_argument(const std::string& arg) {
        std::error_code ec;
        if (arg != kStdStream && fs::is_directory(arg, ec)) return add_folder(arg, arg, "");
        if (arg != kStdStream && !fs::exists(fs::symlink_status(arg, ec)) &&
            has_glob_characters(arg)) {
            return add_pattern(arg);
        }
        add_file(arg, "", Named::yes);
    }

    // A line of a --from list: a path, never a pattern (lists come from
    // programs such as find, and file names may hold '*' or '['). Under
    // --from-root it keeps its folder relative to the root.
    void add_listed(const std::string& path, const fs::path& root) {
        std::error_code ec;
        std::string dir;
        if (!root.empty()) {
            const fs::path rel = fs::absolute(path, ec).lexically_normal().lexically_relative(root);
            if (ec || rel.empty() || *rel.begin() == ".." || rel == ".") {
                throw UsageError(fmt::format("{}: not under --from-root {}", printable(path),
                                             printable(root.string())));
            }
            if (fs::is_directory(path, ec)) return add_folder(path, path, rel.generic_string());
            dir = rel.parent_path().generic_string();
            return add_file(path, dir, Named::no);
        }
        if (fs::is_directory(path, ec)) return add_folder(path, path, "");
        add_file(path, "", Named::yes);
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
    // A file is named (an argument, a list's line) or found in a folder or
    // by a pattern, which decides what its path is relative to its root.
    enum class Named : bool { no, yes };

    void add_file(const std::string& path, const std::string& dir, Named named) {
        std::error_code ec;
        // Missing files have no canonical form; they are kept (and fail later).
        const fs::path key = path == kStdStream ? fs::path(path) : fs::weakly_canonical(path, ec);
        if (!seen_.insert(ec ? fs::path(path) : key).second) {
            spdlog::debug("{}: named twice, read once", printable(path));
            return;
        }
        if (files_.size() == max_files_) {
            throw UsageError(
                fmt::format("more than {} input images (the most one batch takes)", max_files_));
        }
        const std::string relative =
            named == Named::yes ? fs::path(path).lexically_normal().generic_string()
                                : (fs::path(dir) / fs::path(path).filename()).generic_string();
        files_.push_back({path, dir, relative});
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
                if (is_image_file(*it)) keep(found, it->path(), shown);
            }
        } else {
            fs::directory_iterator it(root, ec);
            for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
                if (is_image_file(*it)) keep(found, it->path(), shown);
            }
        }
        if (ec) {
            throw UsageError(
                fmt::format("{}: cannot read the folder: {}", printable(shown), ec.message()));
        }
        if (found.empty()) {
            empty_.push_back(fmt::format("{}: no image files{}", printable(shown),
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
            add_file(p.string(), text, Named::no);
        }
    }

    // A folder's image file, within the batch's bound.
    void keep(std::vector<fs::path>& found, const fs::path& p, const std::string& shown) const {
        if (found.size() == max_files_) {
            throw UsageError(fmt::format("{}: more than {} image files (the most one batch takes)",
                                         printable(shown), max_files_));
        }
        found.push_back(p);
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
                                         "be read, or out of memory)",
                                         printable(pattern)));
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
            add_file(p, relative_dir(root, p), Named::no);
        }
        if (files_.size() == before) {
            throw UsageError(
                fmt::format("\"{}\": no image file matches the pattern", printable(pattern)));
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
    std::size_t max_files_;
    std::set<fs::path> seen_;
    std::vector<InputFile> files_;
    std::vector<std::string> empty_;
};

// A line of a list is a path: PATH_MAX (4096) counts the path's NUL, so a
// longer line names no file, and a NUL byte cannot be part of one. Read a
// line at a time, so `--from /dev/urandom` fails at its first line, not
// when memory runs out.
constexpr std::size_t kMaxListLineBytes = 4096;

void read_list(const std::string& from, const fs::path& root, Expander& expander) {
    const std::string name = "--from " + printable(from);
    std::ifstream file;
    if (from != kStdStream) {
        file.open(from, std::ios::binary);
        if (!file) {
            const int error = errno;  // what ifstream's open left, as std::strerror says it
            throw UsageError(
                fmt::format("{}: cannot read the list: {}", name, std::strerror(error)));
        }
    }
    LineReader lines(from == kStdStream ? std::cin : file, kMaxListLineBytes,
                     LineReader::Ends::newline);
    std::size_t paths = 0;
    for (;;) {
        const LineReader::Status status = lines.next();
        if (status == LineReader::Status::end) break;
        if (status == LineReader::Status::read_error) {
            throw UsageError(
                fmt::format("{}: cannot read the list: {}", name, std::strerror(errno)));
        }
        const std::string at = fmt::format("{}:{}", name, lines.number());
        if (status == LineReader::Status::too_long) {
            throw UsageError(fmt::format("{}: not a list of paths (a line longer than {} bytes)",
                                         at, kMaxListLineBytes));
        }
        const std::string_view path = lines.line();
        if (path.empty()) continue;
        if (path.find('\0') != std::string_view::npos) {
            throw UsageError(fmt::format("{}: not a list of paths (a NUL byte)", at));
        }
        if (++paths > expander.max_files()) {
            throw UsageError(
                fmt::format("{}: a list of more than {} paths (the most one batch takes)", at,
                            expander.max_files()));
        }
        expander.add_listed(std::string(path), root);
    }
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
    Expander expander(request.recursive, request.max_files);
    for (const std::string& arg : request.args) expander.add_argument(arg);
    if (!request.from_root.empty()) {
        if (request.from.empty()) throw UsageError("--from-root needs --from FILE|-");
        std::error_code ec;
        if (!fs::is_directory(request.from_root, ec)) {
            throw UsageError(
                fmt::format("--from-root {}: not a folder", printable(request.from_root)));
        }
    }
    if (!request.from.empty()) {
        std::error_code ec;
        fs::path root;
        if (!request.from_root.empty()) {
            root = fs::absolute(request.from_root, ec).lexically_normal();
            if (!root.has_filename()) root = root.parent_path();  // "photos/" is "photos"
        }
        read_list(request.from, root, expander);
    }
    return expander.take();
}

}  // namespace cudaconv
