#include "io/output_path.hpp"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "base/errors.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

namespace {

bool is_stdin(const std::string& input) { return input == kStdStream; }

std::string input_stem(const std::string& input) {
    return is_stdin(input) ? "stdin" : fs::path(input).stem().string();
}

bool has_extension(const std::string& input) {
    return !is_stdin(input) && !fs::path(input).extension().empty();
}

// ".png" -> "png"; stdin has no extension, so the --format or png.
std::string input_extension(const std::string& input, const std::string& format) {
    // As the user wrote it: {ext} of cat.JPG is JPG.
    if (has_extension(input)) return fs::path(input).extension().string().substr(1);
    return format.empty() ? "png" : format;
}

// -o DIR/ (or an existing folder): outputs DIR/{dir}/{stem}.{ext}.
bool is_folder_output(const std::string& output) {
    return !output.empty() && (output.back() == '/' || fs::is_directory(output));
}

// One field's text, or UsageError for a field it does not know.
std::string field_text(const std::string& field, const std::string& pattern, const OutputRequest& r,
                       const OutputSource& source) {
    if (field == "stem") return input_stem(source.input);
    if (field == "ext") return input_extension(source.input, r.format);
    if (field == "filter") return file_name_safe(r.filter);
    if (field == "kernel") return r.kernel;
    if (field == "dir") return source.dir;
    if (field == "channel" && !r.channel.empty()) return r.channel;
    throw UsageError(fmt::format("-o \"{}\": unknown field {{{}}} (use {{stem}}, {{ext}}, "
                                 "{{filter}}, {{kernel}}, {{dir}}{})",
                                 pattern, field,
                                 field == "channel" ? "; {channel} names a layer's (--weights) "
                                                      "output channels"
                                                    : ""));
}

// One component of the pattern (the text between two '/') with its fields
// filled in; `had_field` tells whether it named any.
std::string expand_component(const std::string& component, const std::string& pattern,
                             const OutputRequest& r, const OutputSource& source, bool& had_field) {
    std::string out;
    for (std::size_t i = 0; i < component.size();) {
        if (component[i] != '{') {
            out += component[i++];
            continue;
        }
        const std::size_t close = component.find('}', i);
        if (close == std::string::npos) {
            throw UsageError(fmt::format("-o \"{}\": unclosed '{{'", pattern));
        }
        out += field_text(component.substr(i + 1, close - i - 1), pattern, r, source);
        had_field = true;
        i = close + 1;
    }
    return out;
}

// Component by component: one whose fields all came out empty (an input's
// {dir} when it lies in the folder named) is dropped, so it never turns
// "{dir}/x" into "/x"; then "a/./b" and "a/x/../b" are tidied.
std::string expand_template(const std::string& pattern, const OutputRequest& r,
                            const OutputSource& source) {
    std::string out;
    bool first = true;
    for (std::size_t start = 0;;) {
        const std::size_t slash = pattern.find('/', start);
        bool had_field = false;
        const std::string text =
            expand_component(pattern.substr(start, slash - start), pattern, r, source, had_field);
        if (!(had_field && text.empty())) {
            if (!first) out += '/';
            out += text;
            first = false;
        }
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return fs::path(out).lexically_normal().string();
}

// Whether `path` is `root` or lies under it, both lexically normal and
// both relative or both absolute.
bool lies_within(const fs::path& path, const fs::path& root) {
    const fs::path rel = path.lexically_relative(root);
    return !rel.empty() && *rel.begin() != "..";
}

// A template or folder output must stay in the folder -o names: a {dir}
// may hold ".." (from a pattern such as 'in/*/../x.png') and so may a
// {stem} (of an input named "..."), which would otherwise write anywhere.
void check_within_root(const std::string& path, const std::string& root, const OutputRequest& r,
                       const OutputSource& source) {
    if (lies_within(fs::path(path), fs::path(root).lexically_normal())) return;
    throw UsageError(fmt::format(
        "{}: -o \"{}\" would write {}, outside {} (the folder -o names{}); nothing was done",
        source.input == kStdStream ? "<stdin>" : source.input, r.output, path, root,
        r.output.find('{') == std::string::npos ? "" : " before its first field"));
}

}  // namespace

std::string template_root(const std::string& pattern) {
    const std::string literal = pattern.substr(0, pattern.find('{'));
    const std::size_t slash = literal.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : literal.substr(0, slash);
}

bool format_applies(const OutputRequest& r, const OutputSource& source) {
    if (r.output == kStdStream) return true;
    const bool names_ext = r.output.find("{ext}") != std::string::npos ||
                           (r.output.find('{') == std::string::npos && is_folder_output(r.output));
    return names_ext && !has_extension(source.input);
}

std::string file_in_the_way(const std::string& folder) {
    for (fs::path p = folder; !p.empty(); p = p.parent_path()) {
        std::error_code ec;
        const fs::file_status status = fs::status(p, ec);
        if (fs::is_directory(status)) return "";
        if (fs::exists(status)) return p.string();
        if (p == p.parent_path()) break;
    }
    return "";
}

std::string file_name_safe(const std::string& text) {
    std::string out;
    for (char c : text) {
        const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                          c == '-' || c == '+';
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
        check_within_root(path, template_root(r.output), r, source);
    } else if (is_folder_output(r.output)) {
        path = expand_template(r.output + "/{dir}/{stem}.{ext}", r, source);
        check_within_root(path, r.output, r, source);
    } else {
        if (r.several_inputs) {
            throw UsageError(
                fmt::format("-o \"{}\" names one file but there are several inputs; give a folder "
                            "(ending in /) or a template such as out/{{stem}}.png",
                            r.output));
        }
        path = r.output;
    }
    return {path, extension_of(path)};
}

}  // namespace cudaconv
