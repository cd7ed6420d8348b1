#pragma once
// The main job's options (`cudaconv INPUT... -f FILTER -o OUTPUT`), parsed
// by CLI11 into one plain struct.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/image_io.hpp"

namespace cudaconv {

struct FilterOptions {
    std::vector<std::string> inputs;   // files, folders, patterns, -
    bool recursive = false;            // -r: folders' subfolders too
    std::string from;                  // --from FILE|-: more inputs, one a line
    std::string from_root;             // --from-root DIR: the list's paths keep folders under it
    std::string shard;                 // --shard K/N ("" = all the inputs)
    bool no_auto_orient = false;       // keep a JPEG's pixels as stored, not upright
    bool strip = false;                // --strip: no EXIF or ICC profile in the outputs
    std::string background = "white";  // --background: what alpha is flattened onto in a JPEG
    bool skip_existing = false;
    bool overwrite = false;
    int jobs = 0;       // -j: decode/encode threads; 0 = one per core
    int in_flight = 0;  // --in-flight: images held at once; 0 = -j plus half as many
    // -f, in order: one filter, or a chain (core/chain.hpp); {"none"}: no filter.
    std::vector<std::string> filter_specs;
    std::string combine;  // --combine: several -f as a bank ("" = a chain)
    // A convolution layer in place of -f (cli/layer_command.hpp): --weights
    // W.npy, --bias b.npy, --activation, --pool, --allow-tf32.
    std::string weights;
    std::string bias;
    std::string activation = "none";
    std::string pool = "none";
    bool allow_tf32 = false;
    std::string kernel = "auto";
    std::string output;
    std::string format;  // output extension when writing stdout
    std::string border = "reflect101";
    bool border_given = false;  // --border was given: a layer pads with zeros otherwise
    std::optional<double> border_value;
    std::string anchor;  // "X,Y"; empty means the centre
    bool flip = false;
    double scale = 1.0;
    double delta = 0.0;
    bool take_abs = false;
    bool normalize = false;
    std::string depth = "same";
    std::string alpha = "keep";
    bool timings = false;
    int repeat = 1;
    int warmup = 0;
    std::string json_path;
    EncodeOptions encode;
    std::uint64_t max_pixels = kDefaultMaxPixels;  // --max-pixels; 0: no limit
    // --encoder: where a PNG output's rows are compressed. auto: on the GPU
    // for an image a CUDA variant filtered, where the device encoder takes
    // the output; cpu: by the workers; gpu: as auto, refused before any
    // work where the GPU cannot encode the outputs (check_gpu_encoder).
    std::string encoder = "auto";
    // --decoder: where JPEG inputs are decoded. auto: by the GPU's decoder
    // for images a CUDA variant filters, in a long batch, where nvJPEG loads;
    // cpu: by the workers; gpu: as auto in any run, refused before any
    // work where the GPU cannot decode (check_gpu_decoder).
    std::string decoder = "auto";
    // --pinned-slots: page-locked upload slots of a GPU batch (0: none);
    // unset, 3 for 16 images or more on a CUDA variant, else none.
    std::optional<int> pinned_slots;
    // --devices all|N|LIST: the GPUs a batch filters on (batch/devices.hpp);
    // unset: the first.
    std::optional<std::string> devices;
    // --gpu-threads: GPU threads a device in a batch unless JPEGs are
    // decoded on the GPU (batch/devices.hpp); unset, two where the device
    // has the memory.
    std::optional<int> gpu_threads;
};

void add_filter_options(CLI::App& app, FilterOptions& options);

// -f none writes the image as decoded. The options that shape a filter's
// result (--border, --scale, --depth, ...) would do nothing: UsageError.
// Those that choose or time the filter (-k, --repeat, --warmup) would do
// nothing either, but a script that runs several filters with one -k, none
// among them, is reasonable: they come back as a warning, "" when none was
// given. Options are known given by differing from their defaults.
std::string check_options_without_filter(const FilterOptions& options);

// --max-pixels N (the filter command's and compare's): default
// kDefaultMaxPixels, 16384x16384.
void add_max_pixels_option(CLI::App& app, std::uint64_t& max_pixels);

// Runs the main job; returns the exit code (0, or 1 if an input failed).
int run_filter_command(const FilterOptions& options);

}  // namespace cudaconv
