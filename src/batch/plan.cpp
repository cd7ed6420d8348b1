#include "batch/plan.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "base/errors.hpp"
#include "io/image_io.hpp"
#include "io/made_folders.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

namespace {

// How many existing outputs the refusal names: enough to recognise the
// folder, short enough to stay one line.
constexpr std::size_t kExistingNamed = 3;

bool writes_folders(const std::string& output) {
    return output.find('{') != std::string::npos || (!output.empty() && output.back() == '/') ||
           fs::is_directory(output);
}

std::string existing_refusal(const std::vector<std::string>& existing) {
    std::string names;
    for (std::size_t i = 0; i < std::min(existing.size(), kExistingNamed); ++i) {
        names += (i ? ", " : "") + existing[i];
    }
    if (existing.size() > kExistingNamed) {
        names += fmt::format(" and {} more", existing.size() - kExistingNamed);
    }
    const bool one = existing.size() == 1;
    return fmt::format("{} output{} exist{} already: {}; nothing was done (--overwrite replaces "
                       "{}, --skip-existing keeps {} and skips {} input{})",
                       existing.size(), one ? "" : "s", one ? "s" : "", names, one ? "it" : "them",
                       one ? "it" : "them", one ? "its" : "their", one ? "" : "s");
}

// Whether the plan makes `folder`: it is one of the planned folders, or
// lies above one.
bool planned_folder(const fs::path& folder, const std::set<std::string>& folders) {
    const fs::path normal = folder.lexically_normal();
    return std::any_of(folders.begin(), folders.end(), [&](const std::string& f) {
        const fs::path rel = fs::path(f).lexically_normal().lexically_relative(normal);
        return !rel.empty() && *rel.begin() != "..";
    });
}

// The --json file, checked as an image's output is.
void check_json_file(const PlanRequest& request, const std::vector<InputFile>& inputs,
                     const std::vector<std::string>& input_paths,
                     const std::map<std::string, std::string>& output_owner,
                     const std::set<std::string>& folders) {
    const std::string& json = request.json_path;
    const std::string target = canonical_path(json);
    const bool reads_it =
        std::binary_search(input_paths.begin(), input_paths.end(), target) ||
        std::any_of(request.other_inputs.begin(), request.other_inputs.end(),
                    [&](const std::string& other) { return canonical_path(other) == target; });
    if (reads_it) {
        throw UsageError(fmt::format(
            "--json {}: the JSON file would overwrite an input; nothing was done", json));
    }
    if (const auto owner = output_owner.find(target); owner != output_owner.end()) {
        throw UsageError(
            fmt::format("--json {}: {}'s image output is that file too; nothing was done", json,
                        owner->second));
    }
    // The outputs -k auto names only once it has chosen, by the variant's name.
    const fs::path name = fs::path(json).filename();
    for (const std::string& kernel : request.later_kernels) {
        OutputRequest later = request.output;
        later.kernel = kernel;
        for (const InputFile& input : inputs) {
            const std::string path = resolve_output(later, {input.path, input.dir}).path;
            if (fs::path(path).filename() == name && canonical_path(path) == target) {
                throw UsageError(fmt::format("--json {}: {}'s image output is that file too when "
                                             "-k auto chooses {} ({{kernel}}); nothing was done",
                                             json, input.path, kernel));
            }
        }
    }
    std::error_code ec;
    if (fs::exists(fs::symlink_status(json, ec)) &&
        request.existing != ExistingOutputs::overwrite) {
        throw UsageError(fmt::format(
            "--json {}: exists already; nothing was done ({})", json,
            request.existing == ExistingOutputs::skip
                ? "--skip-existing keeps images, not the JSON file: name another file, or use "
                  "--overwrite instead"
                : "--overwrite replaces it"));
    }
    if (fs::is_directory(json, ec)) {
        throw WorkError(fmt::format("--json {}: cannot write: is a folder", json));
    }
    const fs::path folder = fs::path(json).parent_path();
    if (planned_folder(folder, folders)) return;
    const std::string file = fs::is_directory(folder, ec) ? "" : file_in_the_way(folder.string());
    const std::string reason = file.empty() ? unwritable_folder_reason(folder.string())
                                            : file + " is a file, not a folder";
    if (!reason.empty()) throw WorkError(fmt::format("--json {}: cannot write: {}", json, reason));
}

}  // namespace

ExistingOutputs existing_outputs_policy(bool skip_existing, bool overwrite) {
    if (skip_existing && overwrite) {
        throw UsageError("--skip-existing and --overwrite exclude each other");
    }
    if (skip_existing) return ExistingOutputs::skip;
    return overwrite ? ExistingOutputs::overwrite : ExistingOutputs::refuse;
}

std::vector<std::string> canonical_inputs(const std::vector<InputFile>& inputs) {
    std::vector<std::string> paths;
    for (const InputFile& input : inputs) {
        if (input.path != kStdStream) paths.push_back(canonical_path(input.path));
    }
    std::sort(paths.begin(), paths.end());
    return paths;
}

void refuse_overwriting_input(const std::string& output,
                              const std::vector<std::string>& canonical_inputs) {
    if (output == kStdStream) return;
    if (std::binary_search(canonical_inputs.begin(), canonical_inputs.end(),
                           canonical_path(output))) {
        throw UsageError(fmt::format("{}: the output would overwrite its input", output));
    }
}

std::vector<PlannedImage> plan_outputs(const std::vector<InputFile>& inputs,
                                       const PlanRequest& request) {
    if (std::count_if(inputs.begin(), inputs.end(),
                      [](const InputFile& f) { return f.path == kStdStream; }) > 1) {
        throw UsageError("- (stdin) can be given only once");
    }
    const std::string& output = request.output.output;
    const bool makes_folders = writes_folders(output);
    const std::vector<std::string> input_paths = canonical_inputs(inputs);

    std::vector<PlannedImage> plan;
    std::map<std::string, std::string> output_owner;
    std::vector<std::string> existing;
    std::set<std::string> folders;
    std::set<std::string> writable;  // existing folders found writable
    bool format_used = false;
    for (const InputFile& input : inputs) {
        OutputTarget target = resolve_output(request.output, {input.path, input.dir});
        // The extension and an explicit depth can be checked now; the
        // channel count and `--depth same` wait for the decoded image.
        check_output_format(target.path, target.extension, request.out_depth, kChannelsUnknown);
        PlannedImage image{input, target, false};
        if (target.path != kStdStream) {
            refuse_overwriting_input(target.path, input_paths);
            const auto [owner, fresh] =
                output_owner.emplace(canonical_path(target.path), input.path);
            if (!fresh) {
                throw UsageError(fmt::format("{} and {} would both write {}", owner->second,
                                             input.path, target.path));
            }
        }
        format_used = format_used || format_applies(request.output, {input.path, input.dir});
        if (request.shard && !request.shard->holds(input.relative)) continue;
        if (target.path != kStdStream) {
            std::error_code ec;
            if (fs::exists(fs::symlink_status(target.path, ec))) {
                if (request.existing == ExistingOutputs::refuse) existing.push_back(target.path);
                image.skip = request.existing == ExistingOutputs::skip;
            }
            const fs::path folder = fs::path(target.path).parent_path();
            if (folder.empty() || fs::is_directory(folder, ec)) {
                // An existing folder: one where no file can be made fails
                // here, not after the filtering. Each folder once, and not
                // for an image --skip-existing skips.
                if (!image.skip && writable.insert(folder.string()).second) {
                    const std::string reason = unwritable_folder_reason(folder.string());
                    if (!reason.empty()) {
                        throw WorkError(fmt::format("{}: cannot write: {}", target.path, reason));
                    }
                }
            } else {
                // -o FILE in a missing folder is a typo more often than a wish.
                if (!makes_folders) {
                    throw WorkError(fmt::format("{}: cannot write: {}", target.path,
                                                unwritable_folder_reason(folder.string())));
                }
                if (const std::string file = file_in_the_way(folder.string()); !file.empty()) {
                    throw WorkError(fmt::format("{}: cannot write: {} is a file, not a folder",
                                                target.path, file));
                }
                folders.insert(folder.string());
            }
        }
        plan.push_back(std::move(image));
    }
    if (!request.output.format.empty() && !format_used) {
        throw UsageError(fmt::format(
            "--format {} sets the format of stdout (-o -) and stdin's {{ext}} only; -o \"{}\" "
            "takes the format from the output's extension",
            request.output.format, output));
    }
    if (!request.json_path.empty() && request.json_path != kStdStream) {
        check_json_file(request, inputs, input_paths, output_owner, folders);
    }
    if (!existing.empty()) throw UsageError(existing_refusal(existing));
    if (request.check_outputs) request.check_outputs(plan);
    if (request.make_folders) make_output_folders(plan);
    return plan;
}

void make_output_folders(const std::vector<PlannedImage>& plan) {
    for (const PlannedImage& image : plan) {
        if (image.target.path == kStdStream) continue;
        const fs::path folder = fs::path(image.target.path).parent_path();
        std::error_code ec;
        if (folder.empty() || fs::is_directory(folder, ec)) continue;
        make_folders(folder.string(), ec);
        if (ec) {
            throw WorkError(
                fmt::format("{}: cannot create folder: {}", folder.string(), ec.message()));
        }
    }
}

std::vector<PlannedImage> plan_parts(
    const std::vector<InputFile>& inputs, PlanRequest request, std::size_t parts,
    const std::function<void(OutputRequest&, std::size_t)>& name_part,
    std::vector<std::vector<OutputTarget>>& targets) {
    request.make_folders = false;  // made once every part's plan has passed
    std::vector<std::vector<PlannedImage>> plans;
    for (std::size_t k = 0; k < parts; ++k) {
        name_part(request.output, k);
        plans.push_back(plan_outputs(inputs, request));
    }
    for (const auto& each : plans) make_output_folders(each);
    std::vector<PlannedImage> plan = plans.front();
    targets.assign(plan.size(), {});
    for (std::size_t i = 0; i < plan.size(); ++i) {
        bool all_skipped = true;
        for (const auto& each : plans) {
            targets[i].push_back(each[i].skip ? OutputTarget{} : each[i].target);
            all_skipped = all_skipped && each[i].skip;
        }
        plan[i].skip = all_skipped;
    }
    return plan;
}

// Absolute first: weakly_canonical leaves a relative path whose first
// part does not exist as it is, so "o.png" and "./o.png" would differ.
std::string canonical_path(const std::string& path) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    const fs::path p = fs::weakly_canonical(absolute, ec);
    return ec ? absolute.lexically_normal().string() : p.string();
}

}  // namespace cudaconv
