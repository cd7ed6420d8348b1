#pragma once
// Every output, decided and checked before any image is decoded: a bad
// template, a template output outside its root, two inputs writing one
// file, an output that would replace an input, or outputs that exist
// already (unless --skip-existing or --overwrite) stop the command before
// it does any work. The --json file is an output too: not an input, not an
// image's output (by any name {kernel} may give it), not existing unless
// --overwrite, and its folder there (or made by the plan).
// With --shard the plan holds this shard's images alone, but checks every
// input's output against the others: two inputs of different shards
// writing one file are refused by every shard alike.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "batch/shard.hpp"
#include "io/inputs.hpp"
#include "io/output_path.hpp"
#include "core/types.hpp"

namespace cudaconv {

// What to do with an output that exists already.
enum class ExistingOutputs {
    refuse,     // the default: a configuration error before any work
    skip,       // --skip-existing: leave it, and its input unread
    overwrite,  // --overwrite: replace it (atomically)
};

struct PlannedImage {
    InputFile source;
    OutputTarget target;
    bool skip = false;  // its output exists and --skip-existing
};

struct PlanRequest {
    OutputRequest output;  // -o and what its template fields need
    ExistingOutputs existing = ExistingOutputs::refuse;
    std::optional<Depth> out_depth;  // --depth, when not `same`
    std::string json_path;           // --json FILE ("" or - : no file)
    // The names {kernel} may take once -k auto has chosen (empty when the
    // variant is named): the --json file must not be one of those outputs.
    std::vector<std::string> later_kernels;
    // Files the command reads besides the images (the --from list, a
    // filter file), which the --json file must not replace either.
    std::vector<std::string> other_inputs;
    // The caller's own checks of the planned outputs (--encoder gpu's),
    // run once the plan's passed and before any folder is made.
    std::function<void(const std::vector<PlannedImage>&)> check_outputs;
    std::optional<Shard> shard;  // --shard K/N: plan the inputs of shard K alone
    // False where the caller plans several outputs an input, one plan each:
    // it makes the folders (make_output_folders) once every plan has passed.
    bool make_folders = true;
};

// Throws UsageError (exit 2) for what the user must change, WorkError
// (exit 1) for a folder that is missing (-o FILE, --json FILE) or cannot be
// created. Creates the output folders only once everything else passed.
std::vector<PlannedImage> plan_outputs(const std::vector<InputFile>& inputs,
                                       const PlanRequest& request);

// Creates the planned outputs' missing folders; WorkError where one cannot
// be created.
void make_output_folders(const std::vector<PlannedImage>& plan);

// Several outputs an input (a stack's file a filter, a layer's image a
// channel): part k's named by `name_part(request.output, k)`, each part
// planned as plan_outputs plans, and the folders made only once every
// part's plan has passed. Returns one PlannedImage an input (the first
// part's), skipped where every part's output is; `targets[i]` holds input
// i's parts' targets, an empty path where --skip-existing keeps that file.
std::vector<PlannedImage> plan_parts(
    const std::vector<InputFile>& inputs, PlanRequest request, std::size_t parts,
    const std::function<void(OutputRequest&, std::size_t)>& name_part,
    std::vector<std::vector<OutputTarget>>& targets);

// `path` absolute, with its links and `.`/`..` resolved as far as it
// exists: two paths naming one file (however written, through whichever
// link) are equal.
std::string canonical_path(const std::string& path);

// Throws UsageError when `output` is one of the inputs (same file, however
// named). `inputs` holds weakly_canonical paths.
void refuse_overwriting_input(const std::string& output,
                              const std::vector<std::string>& canonical_inputs);

// weakly_canonical paths of the inputs (stdin left out), sorted.
std::vector<std::string> canonical_inputs(const std::vector<InputFile>& inputs);

// The exclusive options as one choice; throws UsageError when both are set.
ExistingOutputs existing_outputs_policy(bool skip_existing, bool overwrite);

}  // namespace cudaconv
