#include "cli/version.hpp"

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <opencv2/core/version.hpp>

#include "base/build_info.hpp"
#include "base/wrap.hpp"
#include "io/tiff_metadata.hpp"
#include "kernels/runtime/library_versions.hpp"

namespace cudaconv {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    while (!text.empty()) {
        const std::size_t end = text.find(separator);
        const std::string_view part = text.substr(0, end);
        if (!part.empty()) parts.push_back(part);
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return parts;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string join(const std::vector<std::string>& words) {
    std::string text;
    for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
    return text;
}

// "cuDNN 9.1.0", "cuDNN not found", "cuDNN 8.9.7 (unusable)", "cuDNN none".
std::string library_text(std::string_view name, const LibraryFacts& library) {
    const std::string version = library.version.empty() ? "" : " " + library.version;
    switch (library.state) {
        case LibraryState::not_in_build: return fmt::format("{} none", name);
        case LibraryState::not_found: return fmt::format("{} not found", name);
        case LibraryState::unusable: return fmt::format("{}{} (unusable)", name, version);
        case LibraryState::usable: break;
    }
    return fmt::format("{}{}", name, version.empty() ? " (version unknown)" : version);
}

LibraryFacts library_facts(const FoundLibrary& found) {
    LibraryFacts facts;
    facts.state = !found.in_build ? LibraryState::not_in_build
                  : !found.found  ? LibraryState::not_found
                  : !found.usable ? LibraryState::unusable
                                  : LibraryState::usable;
    facts.version = found.version;
    return facts;
}

}  // namespace

std::string cuda_architectures_text(std::string_view cmake_list) {
    std::vector<std::string> machine_code;
    std::vector<std::string> ptx;
    for (std::string_view entry : split(cmake_list, ',')) {
        const bool real_only = ends_with(entry, "-real");
        const bool virtual_only = ends_with(entry, "-virtual");
        std::string_view number = entry.substr(0, entry.rfind('-'));
        if (number.empty() || number.front() < '0' || number.front() > '9') {
            machine_code.emplace_back(entry);  // a keyword CMake did not resolve
            continue;
        }
        if (!virtual_only) machine_code.push_back(fmt::format("sm_{}", number));
        if (!real_only) ptx.push_back(fmt::format("compute_{}", number));
    }
    if (machine_code.empty() && ptx.empty()) return "no CUDA (built without the toolkit)";
    if (ptx.empty()) return join(machine_code);
    if (machine_code.empty()) return "PTX " + join(ptx);
    return join(machine_code) + ", PTX " + join(ptx);
}

std::string version_text(const VersionFacts& facts) {
    std::string cuda = fmt::format("CUDA runtime {}", facts.cuda_runtime);
    if (facts.with_cuda) {
        cuda += facts.cuda_driver.empty() ? ", no CUDA driver"
                                          : fmt::format(", driver {}", facts.cuda_driver);
    }
    cuda += fmt::format(", cuFFT {}", facts.cufft);
    const std::string libraries = fmt::format("Found at run time: {}, {}",
                                              library_text("cuDNN", facts.cudnn),
                                              library_text("nvJPEG", facts.nvjpeg));
    constexpr std::string_view kArchitectures = "GPU architectures: ";
    const std::string architectures =
        wrap_hanging(kArchitectures, cuda_architectures_text(facts.cuda_architectures),
                     static_cast<int>(kArchitectures.size()));
    // Exiv2 writes a TIFF output's metadata; a build may leave it out.
    const std::string exiv2 = facts.exiv2.empty() ? "none (TIFF outputs carry no metadata)"
                                                  : facts.exiv2;
    return fmt::format("cudaconv {}\n{}\n{}\n{}\nOpenCV {}, Exiv2 {}", facts.version, cuda,
                       libraries, architectures, facts.opencv, exiv2);
}

VersionFacts gather_version_facts() {
    VersionFacts facts;
    facts.version = build_version();
    facts.cuda_architectures = build_cuda_architectures();
    facts.with_cuda = !facts.cuda_architectures.empty();
    facts.cuda_runtime = cuda_runtime_version_string();
    facts.cuda_driver = cuda_driver_version_string();
    facts.cufft = cufft_version_string();
    facts.cudnn = library_facts(find_cudnn());
    facts.nvjpeg = library_facts(find_nvjpeg());
    facts.opencv = CV_VERSION;
    facts.exiv2 = exiv2_version();
    return facts;
}

}  // namespace cudaconv
