#include "filters/file_formats.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "filters/numbers.hpp"
#include "filters/spec.hpp"

namespace cudaconv {

namespace fs = std::filesystem;

namespace {

// One line of a filter file, its comment already removed.
struct Line {
    int number = 0;  // 1-based, as editors count
    std::string_view text;
};

// Lines ending in \n, \r\n or a lone \r (old Mac and some spreadsheet
// exports), with '#' comments cut off.
std::vector<Line> split_lines(std::string_view text) {
    std::vector<Line> lines;
    int number = 1;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find_first_of("\r\n", start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        line = line.substr(0, line.find('#'));
        lines.push_back({number++, line});
        if (end == text.size()) break;
        start = end + (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n' ? 2 : 1);
        if (start == text.size()) break;
    }
    return lines;
}

// Numbers are separated by any mix of spaces, tabs, commas and double
// quotes: libvips's rule, which also reads spreadsheet CSV ("1","2").
bool is_separator(char c) {
    return c == ' ' || c == '\t' || c == ',' || c == '"' || c == '\v' || c == '\f';
}

std::vector<std::string_view> split_tokens(std::string_view line) {
    std::vector<std::string_view> tokens;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_separator(line[i])) ++i;
        const std::size_t start = i;
        while (i < line.size() && !is_separator(line[i])) ++i;
        if (i > start) tokens.push_back(line.substr(start, i - start));
    }
    return tokens;
}

std::string where(const std::string& name, const Line& line) {
    return name + ":" + std::to_string(line.number);
}

std::vector<double> parse_row(const std::vector<std::string_view>& tokens, const std::string& name,
                              const Line& line) {
    std::vector<double> row;
    row.reserve(tokens.size());
    for (std::string_view token : tokens) {
        double value = 0.0;
        std::string problem;
        if (!parse_finite_number(token, value, problem)) {
            throw FilterError(where(name, line) + ": " + problem);
        }
        row.push_back(value);
    }
    return row;
}

std::string row_count_problem(std::size_t got, std::size_t expected) {
    return "row has " + std::to_string(got) + " number" + (got == 1 ? "" : "s") + ", expected " +
           std::to_string(expected);
}

// Control bytes other than whitespace mean an image, an archive or an
// executable was given where a filter file was meant.
void reject_binary(std::string_view text, const std::string& name) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const bool text_control =
            byte == '\t' || byte == '\n' || byte == '\v' || byte == '\f' || byte == '\r';
        if ((byte < 0x20 && !text_control) || byte == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", byte);
            throw FilterError(name + ": a binary file, not a filter file (byte " + hex +
                              " at offset " + std::to_string(i) + ")");
        }
    }
}

std::string read_all(const std::string& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found)
        throw FilterError(path + ": no such filter file");
    if (ec) throw FilterError(path + ": cannot read: " + ec.message());
    if (fs::is_directory(status)) throw FilterError(path + ": is a directory, not a filter file");

    std::ifstream in(path, std::ios::binary);
    if (!in) throw FilterError(path + ": cannot read: " + std::strerror(errno));
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxFilterFileBytes) {
            throw FilterError(path + ": too big for a filter file (more than " +
                              std::to_string(kMaxFilterFileBytes >> 20) + " MiB)");
        }
    }
    if (in.bad()) throw FilterError(path + ": cannot read: " + std::strerror(errno));
    return text;
}

}  // namespace

bool is_libvips_matrix_name(const std::string& path) {
    std::string ext = fs::path(path).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext == ".mat";
}

Filter read_filter_file(const std::string& path) {
    std::string_view text;
    const std::string content = read_all(path);
    text = content;
    if (text.empty()) throw FilterError(path + ": file is empty (empty filter)");
    constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";  // Windows editors add one
    if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
    reject_binary(text, path);

    Filter f = is_libvips_matrix_name(path) ? parse_libvips_matrix(text, path)
                                            : parse_plain_matrix(text, path);
    f.label = fs::path(path).stem().string();
    return f;
}

Filter parse_libvips_matrix(std::string_view text, const std::string& name) {
    const std::string usage = "header must be \"W H [scale [offset]]\"";
    const std::vector<Line> lines = split_lines(text);
    std::size_t i = 0;
    std::vector<std::string_view> header;
    for (; i < lines.size() && header.empty(); ++i) header = split_tokens(lines[i].text);
    if (header.empty())
        throw FilterError(name + ": no header line \"W H [scale [offset]]\" (empty filter)");
    const Line& header_line = lines[i - 1];
    const std::string at = where(name, header_line);
    if (header.size() > 4) {
        throw FilterError(at + ": " + usage + ", got " + std::to_string(header.size()) + " fields");
    }
    if (header.size() < 2) throw FilterError(at + ": " + usage + ", got only " + quoted(header[0]));

    long long side[2] = {0, 0};
    const char* side_names[2] = {"width", "height"};
    for (int k = 0; k < 2; ++k) {
        std::string problem;
        if (!parse_integer(header[static_cast<std::size_t>(k)], side[k], problem)) {
            throw FilterError(at + ": " + usage + ": " + side_names[k] + " " + problem);
        }
        if (side[k] < 1) {
            throw FilterError(at + ": " + usage + ": " + side_names[k] +
                              " must be at least 1, got " + std::to_string(side[k]));
        }
    }
    check_filter_size(side[0], side[1], at);
    double header_numbers[2] = {1.0, 0.0};  // libvips's defaults: scale 1, offset 0
    const char* number_names[2] = {"scale", "offset"};
    for (std::size_t k = 2; k < header.size(); ++k) {
        std::string problem;
        if (!parse_finite_number(header[k], header_numbers[k - 2], problem)) {
            throw FilterError(at + ": " + usage + ": " + number_names[k - 2] + " " + problem);
        }
    }
    const double scale = header_numbers[0];
    if (scale == 0.0) throw FilterError(at + ": scale must not be 0 (the taps are divided by it)");

    Filter f;
    f.width = static_cast<int>(side[0]);
    f.height = static_cast<int>(side[1]);
    f.delta = header_numbers[1];
    f.taps.reserve(static_cast<std::size_t>(f.width) * f.height);
    int rows = 0;
    for (; i < lines.size(); ++i) {
        const std::vector<std::string_view> tokens = split_tokens(lines[i].text);
        if (tokens.empty()) continue;
        if (rows == f.height) {
            throw FilterError(where(name, lines[i]) + ": extra row: the header says " +
                              std::to_string(f.height) + " rows (too many rows)");
        }
        const std::vector<double> row = parse_row(tokens, name, lines[i]);
        if (row.size() != static_cast<std::size_t>(f.width)) {
            throw FilterError(where(name, lines[i]) + ": " +
                              row_count_problem(row.size(), static_cast<std::size_t>(f.width)) +
                              " (the header says " + std::to_string(f.width) + " columns)");
        }
        for (double v : row) f.taps.push_back(v / scale);
        ++rows;
    }
    if (rows < f.height) {
        throw FilterError(name + ": " + std::to_string(rows) + " row" + (rows == 1 ? "" : "s") +
                          ", but the header says " + std::to_string(f.height) + " (too few rows)");
    }
    return f;
}

Filter parse_plain_matrix(std::string_view text, const std::string& name) {
    Filter f;
    int first_row_line = 0;
    for (const Line& line : split_lines(text)) {
        const std::vector<std::string_view> tokens = split_tokens(line.text);
        if (tokens.empty()) continue;
        const std::vector<double> row = parse_row(tokens, name, line);
        if (f.height == 0) {
            // Checked per row, before the row is kept, so a huge file fails
            // at the first line that breaks the limits.
            check_filter_size(static_cast<long long>(row.size()), 1, where(name, line));
            f.width = static_cast<int>(row.size());
            first_row_line = line.number;
        } else if (row.size() != static_cast<std::size_t>(f.width)) {
            throw FilterError(where(name, line) + ": " +
                              row_count_problem(row.size(), static_cast<std::size_t>(f.width)) +
                              " (ragged rows: line " + std::to_string(first_row_line) + " has " +
                              std::to_string(f.width) + ")");
        }
        check_filter_size(f.width, f.height + 1LL, where(name, line));
        f.taps.insert(f.taps.end(), row.begin(), row.end());
        ++f.height;
    }
    if (f.height == 0) throw FilterError(name + ": no numbers in the file (empty filter)");
    return f;
}

}  // namespace cudaconv
