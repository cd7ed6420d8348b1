#include "cli/output_path.hpp"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

namespace {

bool is_stdin(const std::string& input) { return input == kStdStream; }

std::string input_stem(const std::string& input) {
    return is_stdin(input) ? "stdin" : fs::path(input).stem().string();
}

// ".png" -> "png"; stdin has no extension, so the --format or png.
std::string input_extension(const std::string& input, const std::string& format) {
    // As the user wrote it: {ext} of cat.JPG is JPG.
    const std::string ext = is_stdin(input) ? "" : fs::path(input).extension().string();
    if (!ext.empty()) return ext.substr(1);
    return format.empty() ? "png" : format;
}

// "out//a.png" from an empty {dir}, or "out/./a.png", tidied to "out/a.png".
std::string tidy(const std::string& path) {
    return fs::path(path).lexically_normal().string();
}

std::string expand_template(const std::string& pattern, const OutputRequest& r,
                            const OutputSource& source) {
    const std::string& input = source.input;
    std::string out;
    for (std::size_t i = 0; i < pattern.size();) {
        if (pattern[i] != '{') {
            out += pattern[i++];
            continue;
        }
        const std::size_t close = pattern.find('}', i);
        if (close == std::string::npos) {
            throw UsageError(fmt::format("-o \"{}\": unclosed '{{'", pattern));
        }
        const std::string field = pattern.substr(i + 1, close - i - 1);
        if (field == "stem") out += input_stem(input);
        else if (field == "ext") out += input_extension(input, r.format);
        else if (field == "filter") out += file_name_safe(r.filter);
        else if (field == "kernel") out += r.kernel;
        else if (field == "dir") out += source.dir;
        else {
            throw UsageError(fmt::format("-o \"{}\": unknown field {{{}}} (use {{stem}}, {{ext}}, "
                                         "{{filter}}, {{kernel}}, {{dir}})",
                                         pattern, field));
        }
        i = close + 1;
    }
    // Only a template naming {dir} is tidied: the others stay as written.
    return pattern.find("{dir}") == std::string::npos ? out : tidy(out);
}

}  // namespace

std::string file_name_safe(const std::string& text) {
    std::string out;
    for (char c : text) {
        const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                          c == '-';
        out += keep ? c : '-';
    }
    return out;
}

OutputTarget resolve_output(const OutputRequest& r, const OutputSource& source) {
    const std::string& input = source.input;
    if (r.output == kStdStream) {
        if (r.several_inputs) throw UsageError("-o - (stdout) takes a single input");
        const std::string format = r.format.empty() ? input_extension(input, "") : r.format;
        return {kStdStream, "." + format};
    }
    std::string path;
    if (r.output.find('{') != std::string::npos) {
        path = expand_template(r.output, r, source);
    } else if (!r.output.empty() && (r.output.back() == '/' || fs::is_directory(r.output))) {
        path = (fs::path(r.output) / source.dir /
                (input_stem(input) + "." + input_extension(input, r.format)))
                   .lexically_normal()
                   .string();
    } else {
        if (r.several_inputs) {
            throw UsageError(fmt::format(
                "-o \"{}\" names one file but there are several inputs; give a folder "
                "(ending in /) or a template such as out/{{stem}}.png",
                r.output));
        }
        path = r.output;
    }
    return {path, extension_of(path)};
}

}  // namespace cudaconv
