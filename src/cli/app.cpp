#include "cli/app.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <spdlog/spdlog.h>

#include "batch/interrupt.hpp"
#include "cli/bench_command.hpp"
#include "cli/compare_command.hpp"
#include "cli/filter_options.hpp"
#include "cli/help_format.hpp"
#include "cli/list_command.hpp"
#include "cli/logging.hpp"
#include "cli/parse_errors.hpp"
#include "cli/version.hpp"
#include "base/errors.hpp"
#include "base/printable.hpp"
#include "io/codec_messages.hpp"
#include "io/image_io.hpp"
#include "io/made_folders.hpp"

namespace cudaconv {
namespace {

// What `cudaconv` alone prints (on stderr, exit 2), and the start of --help.
constexpr const char* kUsage = R"(  cudaconv INPUT... -f FILTER -o OUTPUT [OPTIONS]
  cudaconv INPUT... --weights W.npy [--bias B.npy] -o OUTPUT.npy [OPTIONS]
  cudaconv list filters|kernels|devices
  cudaconv compare A B [--max-abs N ...]
  cudaconv bench [--size WxH,...] [-f FILTER,...] [-k all|NAME,...]
  cudaconv help [list|compare|bench])";

constexpr const char* kExamples = R"(Examples:
  cudaconv photo.jpg -f edge -o edges.png
  cudaconv photo.jpg -f gaussian:sigma=2 -k cpu-ref -o blurred.png --timings
  cudaconv scan.png -f sobel-x --depth f32 -o gradient.tif
  cudaconv a.png b.png -f 3x3:0,-1,0,-1,5,-1,0,-1,0 -o out/{stem}-sharp.{ext}
  cudaconv - -f filters/samples/gaussian5x5.mat -o - --format png <a.png >b.png
  cudaconv x.npy --weights w.npy --bias b.npy --activation relu -o y.npy
  cudaconv list filters | kernels | devices
  cudaconv compare out.png golden.png --max-abs 1  (see cudaconv compare --help)

Exit codes: 0 success, 1 an input or output failed, 2 usage or configuration
error.)";

// CLI11 reports --help and --version as "errors" with exit code 0.
int handle_parse_result(CLI::App& app, const CLI::ParseError& e,
                        const std::vector<std::string>& args) {
    if (e.get_exit_code() == 0) return app.exit(e);
    spdlog::error("{} (see --help)", parse_error_message(app, e, args));
    return kExitUsage;
}

// Every command the same way: its options and the logging options, a parse
// (usage errors exit 2, --help 0), the logging applied, then the command.
template <typename Options>
int parse_and_run(CLI::App& app, int argc, char** argv, void (*add_options)(CLI::App&, Options&),
                  int (*run)(const Options&)) {
    Options options;
    LogOptions log;
    use_wrapped_help(app);
    add_options(app, options);
    add_log_options(app, log);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return handle_parse_result(app, e, std::vector<std::string>(argv + 1, argv + argc));
    }
    apply_log_options(log);
    return run(options);
}

int run_list(int argc, char** argv) {
    CLI::App app{"List the named filters, the variants of this build, or the CUDA devices.",
                 "cudaconv list"};
    return parse_and_run<ListOptions>(app, argc - 1, argv + 1, add_list_options, run_list_command);
}

int run_compare(int argc, char** argv) {
    CLI::App app{"Compare an image with the expected one (or two folders of them, matched by\n"
                 "relative path): max-abs, max-rel, mean-abs, RMSE, PSNR, differing pixels and\n"
                 "the worst pixel. Exit 0 within the limits, 1 outside them, 2 on error.\n"
                 "With no limit given the images must be identical.",
                 "cudaconv compare"};
    app.footer(R"(Examples:
  cudaconv compare out.png golden/out.png --max-abs 1
  cudaconv compare out.pfm golden/out.pfm --max-rel 1e-5 --diff diff.png
  cudaconv compare out/ golden/ --max-abs 1 --max-differing 0.1% --json)");
    return parse_and_run<CompareOptions>(app, argc - 1, argv + 1, add_compare_options,
                                         run_compare_command);
}

int run_bench(int argc, char** argv) {
    CLI::App app{"Time every variant (or those named) on seeded random images, verify each\n"
                 "output against the reference, and print a table (variants down, sizes\n"
                 "across), CSV and JSON. Exit 0, or 1 when an output was wrong or a run failed.",
                 "cudaconv bench"};
    return parse_and_run<BenchOptions>(app, argc - 1, argv + 1, add_bench_options,
                                       run_bench_command);
}

int run_filter(int argc, char** argv) {
    CLI::App app{std::string("Convolve images with a filter on the CPU or a CUDA GPU.\n") + kUsage,
                 "cudaconv"};
    app.footer(kExamples);
    // Gathered only when asked: it opens cuDNN and nvJPEG.
    app.set_version_flag("--version", [] { return version_text(gather_version_facts()); });
    return parse_and_run<FilterOptions>(app, argc, argv, add_filter_options, run_filter_command);
}

// `cudaconv help [COMMAND]`: that command's --help, on stdout.
int run_help(int argc, char** argv) {
    const std::string topic = argc > 2 ? argv[2] : "";
    std::string help = "--help";
    if (topic.empty()) {
        char* args[] = {argv[0], help.data()};
        return run_filter(2, args);
    }
    std::string command = topic;
    char* args[] = {argv[0], command.data(), help.data()};
    if (topic == "list") return run_list(3, args);
    if (topic == "compare") return run_compare(3, args);
    if (topic == "bench") return run_bench(3, args);
    throw UsageError(fmt::format("help: no command \"{}\" (list, compare or bench; cudaconv "
                                 "--help for filtering)",
                                 printable(topic)));
}

// The places that can fail name their file themselves; these catches are
// the net under them: one line, never a bare std::bad_alloc, "filesystem
// error: ..." or OpenCV's source file and line.
int run_command_line(int argc, char** argv) {
    init_logging();
    configure_opencv_io();
    install_interrupt_handler();
    const std::string command = argc > 1 ? argv[1] : "";
    // What ran out of memory, when nothing closer to it could say.
    const char* doing = command == "list"      ? "listing"
                        : command == "compare" ? "comparing"
                        : command == "bench"   ? "benchmarking"
                                               : "filtering";
    try {
        if (argc == 1) {  // nothing asked: what can be, rather than a missing option
            std::fprintf(stderr,
                         "Usage:\n%s\n'cudaconv --help' lists every option, 'cudaconv list "
                         "filters' the filters.\n",
                         kUsage);
            return kExitUsage;
        }
        if (command == "help") return run_help(argc, argv);
        if (command == "list") return run_list(argc, argv);
        if (command == "compare") return run_compare(argc, argv);
        if (command == "bench") return run_bench(argc, argv);
        return run_filter(argc, argv);
    } catch (const UsageError& e) {
        spdlog::error("{}", e.what());
        return kExitUsage;
    } catch (const std::bad_alloc&) {
        spdlog::error("out of memory while {}", doing);
        return kExitWorkFailed;
    } catch (const std::filesystem::filesystem_error& e) {
        spdlog::error("{}", describe(e));
        return kExitWorkFailed;
    } catch (const cv::Exception& e) {
        const std::string text = detail::one_line(e.err);
        if (e.code == cv::Error::StsNoMem) {
            spdlog::error("out of memory while {} (OpenCV: {})", doing, text);
        } else {
            spdlog::error("OpenCV: {}", text);
        }
        return kExitWorkFailed;
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return kExitWorkFailed;
    }
}

// What the command printed on stdout through stdio or iostreams (lists,
// help, compare's report, --timings) is flushed here: where some of it
// could not be written (a full disk, a closed pipe), the run says so and
// fails, as `cp` and `sort` do, rather than exit 0 with its output lost.
int finish_stdout(int code) {
    std::cout.flush();
    int err = std::fflush(stdout) != 0 ? errno : 0;
    if (!std::ferror(stdout)) return code;
    // An earlier flush failed, its errno gone: a write of nothing still
    // names a descriptor that takes no writes (stdout closed at start).
    if (err == 0 && ::write(STDOUT_FILENO, "", 0) < 0) err = errno;
    spdlog::error("<stdout>: cannot write{}",
                  err != 0 ? ": " + std::generic_category().message(err) : std::string());
    return code == kExitOk ? kExitWorkFailed : code;
}

}  // namespace

int run_app(int argc, char** argv) {
    const int code = run_command_line(argc, argv);
    // Folders made for outputs that none went into: a failed run leaves
    // none behind (io/made_folders.hpp).
    remove_empty_made_folders();
    return finish_stdout(code);
}

}  // namespace cudaconv
