#include "filters/file_formats.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "base/line_reader.hpp"
#include "base/printable.hpp"
#include "filters/numbers.hpp"
#include "filters/spec.hpp"

namespace cudaconv {

namespace fs = std::filesystem;

namespace {

// One line of a filter file, its comment already removed.
struct Line {
    long long number = 0;  // 1-based, as editors count
    std::string_view text;
};

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
// executable was given where a filter file was meant. Checked on each block
// as it is read, before its lines are parsed, so an image is named as one
// rather than as a row that is not a number.
void reject_binary(std::string_view block, std::uint64_t offset, const std::string& name) {
    for (std::size_t i = 0; i < block.size(); ++i) {
        const auto byte = static_cast<unsigned char>(block[i]);
        const bool text_control = byte == '\t' || byte == '\n' || byte == '\v' || byte == '\f' ||
                                  byte == '\r';
        if ((byte < 0x20 && !text_control) || byte == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", byte);
            throw FilterError(name + ": a binary file, not a filter file (byte " + hex +
                              " at offset " + std::to_string(offset + i) + ")");
        }
    }
}

// The lines of a filter file or text, one at a time, with '#' comments and
// a leading UTF-8 byte order mark (Windows editors add one) cut off. Holds
// one line and one block of the text, whatever its length.
class FilterLines {
public:
    FilterLines(std::istream& in, const std::string& name)
        : name_(name), reader_(in, kMaxFilterLineBytes, LineReader::Ends::any, check()) {}
    FilterLines(std::string_view text, const std::string& name)
        : name_(name), reader_(text, kMaxFilterLineBytes, LineReader::Ends::any, check()) {}

    // False at the end of the text.
    bool next(Line& line) {
        switch (reader_.next()) {
            case LineReader::Status::end:
                if (reader_.number() == 0) {
                    throw FilterError(name_ + ": file is empty (empty filter)");
                }
                return false;
            case LineReader::Status::too_long:
                throw FilterError(
                    name_ + ":" + std::to_string(reader_.number()) + ": line longer than " +
                    std::to_string(kMaxFilterLineBytes >> 10) + " KiB (not a filter file?)");
            case LineReader::Status::read_error:
                throw FilterError(name_ + ": cannot read: " + std::strerror(errno));
            case LineReader::Status::line: break;
        }
        constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
        std::string_view text = reader_.line();
        if (reader_.number() == 1 && text.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
            text.remove_prefix(kUtf8Bom.size());
        }
        line = {reader_.number(), text.substr(0, text.find('#'))};
        return true;
    }

private:
    LineReader::BlockCheck check() const {
        return [name = name_](std::string_view block, std::uint64_t offset) {
            if (offset + block.size() > kMaxFilterFileBytes) {
                throw FilterError(name + ": too big for a filter file (more than " +
                                  std::to_string(kMaxFilterFileBytes >> 20) + " MiB)");
            }
            reject_binary(block, offset, name);
        };
    }

    std::string name_;
    LineReader reader_;
};

Filter parse_libvips_lines(FilterLines& lines, const std::string& name) {
    const std::string usage = "header must be \"W H [scale [offset]]\"";
    Line header_line;
    std::vector<std::string_view> header;
    while (header.empty() && lines.next(header_line)) header = split_tokens(header_line.text);
    if (header.empty())
        throw FilterError(name + ": no header line \"W H [scale [offset]]\" (empty filter)");
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
    for (Line line; lines.next(line);) {
        const std::vector<std::string_view> tokens = split_tokens(line.text);
        if (tokens.empty()) continue;
        if (rows == f.height) {
            throw FilterError(where(name, line) + ": extra row: the header says " +
                              std::to_string(f.height) + " rows (too many rows)");
        }
        const std::vector<double> row = parse_row(tokens, name, line);
        if (row.size() != static_cast<std::size_t>(f.width)) {
            throw FilterError(where(name, line) + ": " +
                              row_count_problem(row.size(), static_cast<std::size_t>(f.width)) +
                              " (the header says " + std::to_string(f.width) + " columns)");
        }
        for (std::size_t x = 0; x < row.size(); ++x) {
            const double tap = row[x] / scale;  // a tiny scale can overflow a finite number
            if (!std::isfinite(tap)) {
                throw FilterError(where(name, line) + ": tap " + std::to_string(x + 1) +
                                  " divided by the scale is not a finite number");
            }
            f.taps.push_back(tap);
        }
        ++rows;
    }
    if (rows < f.height) {
        throw FilterError(name + ": " + std::to_string(rows) + " row" + (rows == 1 ? "" : "s") +
                          ", but the header says " + std::to_string(f.height) + " (too few rows)");
    }
    return f;
}

Filter parse_plain_lines(FilterLines& lines, const std::string& name) {
    Filter f;
    long long first_row_line = 0;
    for (Line line; lines.next(line);) {
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

}  // namespace

bool is_libvips_matrix_name(const std::string& path) {
    std::string ext = fs::path(path).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext == ".mat";
}

Filter read_filter_file(const std::string& path) {
    const std::string name = printable(path);
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found)
        throw FilterError(name + ": no such filter file");
    if (ec) throw FilterError(name + ": cannot read: " + ec.message());
    if (fs::is_directory(status)) throw FilterError(name + ": is a directory, not a filter file");

    std::ifstream in(path, std::ios::binary);
    if (!in) throw FilterError(name + ": cannot read: " + std::strerror(errno));
    FilterLines lines(in, name);
    Filter f = is_libvips_matrix_name(path) ? parse_libvips_lines(lines, name)
                                            : parse_plain_lines(lines, name);
    f.label = fs::path(path).stem().string();
    f.source = name;
    return f;
}

Filter parse_libvips_matrix(std::string_view text, const std::string& name) {
    FilterLines lines(text, name);
    return parse_libvips_lines(lines, name);
}

Filter parse_plain_matrix(std::string_view text, const std::string& name) {
    FilterLines lines(text, name);
    return parse_plain_lines(lines, name);
}

}  // namespace cudaconv
