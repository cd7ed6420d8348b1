#include "filters/named.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <utility>
#include <vector>

#include "base/edit_distance.hpp"
#include "base/printable.hpp"
#include "filters/gaussian.hpp"
#include "filters/numbers.hpp"
#include "filters/spec.hpp"

namespace cudaconv {

namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// The arguments after a filter's name (`gaussian:5:1.5` -> "5", "1.5"),
// with parsers that fail with a message naming the whole spec.
class SpecArgs {
public:
    SpecArgs(std::string spec, std::vector<std::string_view> args)
        : spec_(std::move(spec)), args_(std::move(args)) {}

    std::size_t size() const { return args_.size(); }
    std::string_view operator[](std::size_t i) const { return args_[i]; }
    std::string where() const { return filter_where(spec_); }

    [[noreturn]] void fail(const std::string& problem) const {
        throw FilterError(where() + ": " + problem);
    }

    long long integer(std::string_view token, const std::string& what) const {
        long long value = 0;
        std::string problem;
        if (!parse_integer(token, value, problem)) fail(what + " " + problem);
        return value;
    }

    double number(std::string_view token, const std::string& what) const {
        double value = 0.0;
        std::string problem;
        if (!parse_finite_number(token, value, problem)) fail(what + " " + problem);
        return value;
    }

    // A side length: an integer from 1 up to kMaxFilterSide.
    int side(std::string_view token, const std::string& what) const {
        if (token.empty()) fail(what + " is missing");
        const long long n = integer(token, what);
        if (n < 1) fail(what + " must be at least 1, got " + std::to_string(n));
        if (n > kMaxFilterSide) {
            fail(what + " " + std::to_string(n) + " is too large (at most " +
                 std::to_string(kMaxFilterSide) + ")");
        }
        return static_cast<int>(n);
    }

    // Gaussian sizes are odd, as cv::getGaussianKernel's callers require:
    // an even one has no centre tap.
    int odd_side(std::string_view token) const {
        const int n = side(token, "size");
        if (n % 2 == 0) {
            fail("size must be odd, got " + std::to_string(n) + " (try " + std::to_string(n - 1) +
                 " or " + std::to_string(n + 1) + ")");
        }
        return n;
    }

    double positive(std::string_view token, const std::string& what) const {
        if (token.empty()) fail(what + " is missing");
        const double value = number(token, what);
        if (!(value > 0.0)) fail(what + " must be > 0, got " + printable_spec(token));
        return value;
    }

private:
    std::string spec_;
    std::vector<std::string_view> args_;
};

using Builder = Filter (*)(const SpecArgs&);

struct NamedFilter {
    std::string_view name;  // lower case, what the user types before any ':'
    std::vector<NamedFilterInfo> forms;
    Builder build = nullptr;  // null for a fixed filter: use width/height/taps
    int width = 0;
    int height = 0;
    std::vector<double> taps;
};

Filter make(int width, int height, std::vector<double> taps) {
    Filter f;
    f.width = width;
    f.height = height;
    f.taps = std::move(taps);
    return f;
}

// box:N or box:WxH, the normalised mean.
Filter build_box(const SpecArgs& a) {
    if (a.size() != 1 || a[0].empty()) a.fail("box needs a size: box:N or box:WxH");
    const std::string_view arg = a[0];
    const std::size_t x = arg.find_first_of("xX");
    const int width = a.side(arg.substr(0, x), x == std::string_view::npos ? "size" : "width");
    const int height = x == std::string_view::npos ? width : a.side(arg.substr(x + 1), "height");
    check_filter_size(width, height, a.where());
    const double tap = 1.0 / (static_cast<double>(width) * height);
    return make(width, height, std::vector<double>(static_cast<std::size_t>(width) * height, tap));
}

// motion:N, a horizontal motion blur (box:Nx1 under the name people use).
Filter build_motion(const SpecArgs& a) {
    if (a.size() != 1 || a[0].empty()) a.fail("motion needs a length: motion:N");
    const int n = a.side(a[0], "length");
    return make(n, 1, std::vector<double>(static_cast<std::size_t>(n), 1.0 / n));
}

// The part of a gaussian/unsharp argument after "sigma=", if it has one.
bool strip_sigma_key(std::string_view& arg) {
    constexpr std::string_view kKey = "sigma=";
    if (arg.size() < kKey.size() || lower(arg.substr(0, kKey.size())) != kKey) return false;
    arg.remove_prefix(kKey.size());
    return true;
}

// gaussian:N, gaussian:N:SIGMA or gaussian:sigma=S.
Filter build_gaussian(const SpecArgs& a) {
    const char* usage = "gaussian needs gaussian:N, gaussian:N:SIGMA or gaussian:sigma=S";
    if (a.size() < 1 || a.size() > 2 || a[0].empty()) a.fail(usage);
    std::string_view first = a[0];
    if (strip_sigma_key(first)) {
        if (a.size() != 1) a.fail(usage);
        const double sigma = a.positive(first, "sigma");
        const double n = gaussian_size_for_sigma(sigma);
        if (n > kMaxFilterSide) {
            a.fail("sigma " + printable_spec(first) + " needs a filter wider than " +
                   std::to_string(kMaxFilterSide) + " taps (the largest allowed)");
        }
        check_filter_size(static_cast<long long>(n), static_cast<long long>(n), a.where());
        return gaussian_filter(static_cast<int>(n), sigma);
    }
    const int n = a.odd_side(first);
    check_filter_size(n, n, a.where());
    double sigma = 0.0;  // OpenCV's default for the size, fixed tables included
    if (a.size() == 2) {
        std::string_view second = a[1];
        strip_sigma_key(second);  // gaussian:5:sigma=1.5 reads naturally too
        sigma = a.positive(second, "sigma");
    }
    return gaussian_filter(n, sigma);
}

// unsharp:N[:AMOUNT]: (1 + AMOUNT) identity - AMOUNT gaussian:N, the
// unsharp mask of GIMP and ImageMagick without their threshold.
Filter build_unsharp(const SpecArgs& a) {
    if (a.size() < 1 || a.size() > 2 || a[0].empty()) a.fail("unsharp needs unsharp:N[:AMOUNT]");
    const int n = a.odd_side(a[0]);
    check_filter_size(n, n, a.where());
    const double amount = a.size() == 2 ? a.positive(a[1], "amount") : 1.0;
    Filter f = gaussian_filter(n, 0.0);
    for (double& t : f.taps) t *= -amount;
    f.taps[f.taps.size() / 2] += 1.0 + amount;
    return f;
}

NamedFilter fixed(std::string_view name, std::string description, std::vector<double> taps,
                  std::string detail = {}) {
    NamedFilter f;
    f.name = name;
    f.forms = {{std::string(name), std::move(description), std::string(name), std::move(detail)}};
    const int side = taps.size() == 1 ? 1 : 3;
    f.width = side;
    f.height = side;
    f.taps = std::move(taps);
    return f;
}

NamedFilter parametric(std::string_view name, std::vector<NamedFilterInfo> forms, Builder build) {
    NamedFilter f;
    f.name = name;
    f.forms = std::move(forms);
    f.build = build;
    return f;
}

// The one table: the parser and `list filters` both read it.
const std::vector<NamedFilter>& table() {
    static const std::vector<NamedFilter> filters = {
        fixed("identity", "the image unchanged (a baseline for timings)", {1}, "1x1 [1]"),
        fixed("edge", "edges in every direction; flat areas go black (sums to 0)",
              {-1, -1, -1, -1, 8, -1, -1, -1, -1}, "3x3: 8 at the centre, -1 around it"),
        fixed("laplacian", "edges and fine detail, from the 4 nearest neighbours",
              {0, 1, 0, 1, -4, 1, 0, 1, 0}, "3x3 Laplacian, as cv::Laplacian with ksize=1"),
        fixed("laplacian8", "edges and fine detail, from all 8 neighbours",
              {1, 1, 1, 1, -8, 1, 1, 1, 1}, "3x3 Laplacian, 8 neighbours"),
        fixed("sobel-x", "left-to-right change: positive where the image brightens rightwards",
              {-1, 0, 1, -2, 0, 2, -1, 0, 1}, "3x3 Sobel d/dx, as cv::Sobel(dx=1, dy=0)"),
        fixed("sobel-y", "top-to-bottom change: positive where the image brightens downwards",
              {-1, -2, -1, 0, 0, 0, 1, 2, 1}, "3x3 Sobel d/dy, as cv::Sobel(dx=0, dy=1)"),
        fixed("scharr-x", "left-to-right change, more even over angles than sobel-x",
              {-3, 0, 3, -10, 0, 10, -3, 0, 3}, "3x3 Scharr d/dx, as cv::Scharr(dx=1, dy=0)"),
        fixed("scharr-y", "top-to-bottom change, more even over angles than sobel-y",
              {-3, -10, -3, 0, 0, 0, 3, 10, 3}, "3x3 Scharr d/dy, as cv::Scharr(dx=0, dy=1)"),
        fixed("prewitt-x", "left-to-right change, rows weighted alike",
              {-1, 0, 1, -1, 0, 1, -1, 0, 1}, "3x3 Prewitt d/dx"),
        fixed("prewitt-y", "top-to-bottom change, columns weighted alike",
              {-1, -1, -1, 0, 0, 0, 1, 1, 1}, "3x3 Prewitt d/dy"),
        fixed("sharpen", "sharper edges, same brightness (sums to 1)",
              {0, -1, 0, -1, 5, -1, 0, -1, 0}, "3x3: the identity minus the 4-neighbour Laplacian"),
        fixed("emboss", "a relief, as if lit from one corner (sums to 1)",
              {-2, -1, 0, -1, 1, 1, 0, 1, 2}, "3x3 diagonal emboss, the common textbook kernel"),
        parametric(
            "box",
            {{"box:N", "blur: the mean of each N x N square", "box:3", "taps 1/N^2"},
             {"box:WxH", "blur: the mean of each W wide, H tall box", "box:3x2", "taps 1/(W*H)"}},
            build_box),
        parametric("gaussian",
                   {{"gaussian:N", "smooth blur over N x N pixels (N odd)", "gaussian:5",
                     "sigma 0.3((N-1)/2 - 1) + 0.8, taps as cv::getGaussianKernel"},
                    {"gaussian:N:SIGMA", "smooth blur over N x N pixels (N odd), of width SIGMA",
                     "gaussian:5:1.5", "sigma SIGMA, taps as cv::getGaussianKernel"},
                    {"gaussian:sigma=S", "smooth blur of width S, over as many pixels as it needs",
                     "gaussian:sigma=0.5",
                     "size round(6S+1), made odd, as cv::GaussianBlur picks for 8-bit images"}},
                   build_gaussian),
        parametric("motion",
                   {{"motion:N", "horizontal motion blur over N pixels", "motion:5",
                     "one row of N taps 1/N (box:Nx1)"}},
                   build_motion),
        parametric("unsharp",
                   {{"unsharp:N[:AMOUNT]",
                     "sharpen: add back AMOUNT times (default 1) the detail a gaussian:N blur "
                     "removes",
                     "unsharp:3", "(1+AMOUNT) identity - AMOUNT gaussian:N (N odd, AMOUNT > 0)"}},
                   build_unsharp),
    };
    return filters;
}

const NamedFilter* find(std::string_view lower_name) {
    for (const NamedFilter& f : table()) {
        if (f.name == lower_name) return &f;
    }
    return nullptr;
}

}  // namespace

std::optional<Filter> make_named_filter(const std::string& spec) {
    const std::size_t colon = spec.find(':');
    const NamedFilter* entry = find(lower(std::string_view(spec).substr(0, colon)));
    if (entry == nullptr) return std::nullopt;

    std::vector<std::string_view> args;
    for (std::size_t start = colon; start != std::string::npos;) {
        const std::size_t next = spec.find(':', start + 1);
        args.push_back(std::string_view(spec).substr(
            start + 1, next == std::string::npos ? std::string::npos : next - start - 1));
        start = next;
    }
    const SpecArgs spec_args(spec, std::move(args));

    Filter f;
    if (entry->build != nullptr) {
        f = entry->build(spec_args);
    } else {
        if (spec_args.size() != 0) spec_args.fail(std::string(entry->name) + " takes no arguments");
        f = make(entry->width, entry->height, entry->taps);
    }
    f.label = spec;
    f.source = spec_args.where();
    return f;
}

std::string closest_filter_name(std::string_view name) {
    // A typo is a letter or two off ("edgy", "gausian"); a prefix is a name
    // cut short ("gauss", "sobel"). Anything further is a different word.
    constexpr std::size_t kMaxTypoEdits = 2;
    constexpr std::size_t kMinPrefix = 3;
    const std::string wanted = lower(name);
    std::string best;
    std::size_t best_distance = kMaxTypoEdits + 1;
    for (const NamedFilter& f : table()) {
        const bool prefix = wanted.size() >= kMinPrefix &&
                            (f.name.substr(0, wanted.size()) == wanted ||
                             wanted.substr(0, f.name.size()) == f.name);
        const std::size_t distance = prefix ? 0 : edit_distance(wanted, f.name);
        if (distance < best_distance && distance < wanted.size()) {
            best_distance = distance;
            best = f.forms.front().syntax;
        }
    }
    return best;
}

const std::vector<NamedFilterInfo>& named_filters() {
    static const std::vector<NamedFilterInfo> all = [] {
        std::vector<NamedFilterInfo> out;
        for (const NamedFilter& f : table()) out.insert(out.end(), f.forms.begin(), f.forms.end());
        return out;
    }();
    return all;
}

}  // namespace cudaconv
