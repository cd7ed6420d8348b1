// --devices as a user meets it: bad values and impossible requests stop
// before any work, with one line; a machine without a GPU says what it
// has; each image's --json line names its device and the summary counts
// each device's images. The [gpu] cases check that several devices give
// the outputs one device gives, byte for byte.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/npy.hpp"
#include "kernels/runtime/device_info.hpp"
#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

// `count` inputs, in/NNN.png, from the samples in turn.
void make_inputs(const TempDir& dir, int count) {
    const char* samples[] = {"camera-crop.png", "chelsea-crop.png", "camera16-crop.png"};
    for (int i = 0; i < count; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "in/%03d.png", i);
        copy_sample(samples[i % 3], dir / name);
    }
}

std::vector<int> present_devices() {
    std::vector<int> present;
    for (const DeviceInfo& d : probe_devices().devices) present.push_back(d.index);
    return present;
}

// Every file under `a` is under `b` with the same bytes, and the other way.
void check_same_files(const fs::path& a, const fs::path& b) {
    std::set<std::string> names_a, names_b;
    for (const auto& e : fs::recursive_directory_iterator(a)) {
        if (e.is_regular_file()) names_a.insert(fs::relative(e.path(), a).string());
    }
    for (const auto& e : fs::recursive_directory_iterator(b)) {
        if (e.is_regular_file()) names_b.insert(fs::relative(e.path(), b).string());
    }
    REQUIRE(names_a == names_b);
    for (const std::string& name : names_a) {
        INFO(name);
        CHECK(read_bytes(a / name) == read_bytes(b / name));
    }
}

}  // namespace

TEST_CASE("devices: refuses values that name no device, before any work", "[cli][batch][devices]") {
    TempDir dir;
    make_inputs(dir, 2);
    const std::map<std::string, std::string> refusals{
        {"0", "a count of devices is at least 1"},
        {"-1", "expected all, a count of devices (2), or two or more device numbers (0,2)"},
        {"a", "expected all, a count of devices (2)"},
        {"", "expected all, a count of devices (2)"},  // given, but empty: --devices ""
        {"0,0", "device 0 is named twice"},
        {"0,,1", "\"\" is not a device number"},
        {"0,a", "\"a\" is not a device number"},
    };
    for (const auto& [value, reason] : refusals) {
        INFO("--devices=" << value);
        const auto r =
            run_cudaconv({"in", "-f", "edge", "-o", "out/", "--devices", value}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("error: --devices \"" + value + "\": " + reason));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(!fs::exists(dir / "out"));
    }
}

TEST_CASE("devices: more devices than this machine has, or one it lacks, is exit 2",
          "[cli][batch][devices]") {
    TempDir dir;
    make_inputs(dir, 2);
    const std::vector<int> present = present_devices();
    const std::string there = present.empty()
                                  ? std::string("CUDA devices here: none (")
                                  : "CUDA devices here: " + std::to_string(present.size()) + " (";
    const std::string more = std::to_string(present.size() + 1);
    const std::string missing = "0," + std::to_string(present.size() + 7);
    const std::vector<std::pair<std::string, std::string>> refusals{
        {more, "asks for " + more + (present.empty() ? " device" : " devices")},
        {missing,
         present.empty() ? "no device 0" : "no device " + std::to_string(present.size() + 7)},
    };
    for (const auto& [value, reason] : refusals) {
        INFO("--devices " << value);
        const auto r =
            run_cudaconv({"in", "-f", "edge", "-o", "out/", "--devices", value}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err,
                   Catch::Contains("error: --devices \"" + value + "\": " + reason + "; " + there));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(!fs::exists(dir / "out"));
    }
    if (present.empty()) {
        // What --devices 2 says on a machine without a GPU (this one, in CI).
        const auto r =
            run_cudaconv({"in", "-f", "edge", "-o", "out/", "--devices", "2"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("error: --devices \"2\": asks for 2 devices; CUDA "
                                          "devices here: none ("));
    }
}

TEST_CASE("devices: refused where nothing runs on a GPU", "[cli][batch][devices]") {
    TempDir dir;
    make_inputs(dir, 2);
    const auto cpu = run_cudaconv(
        {"in", "-f", "edge", "-k", "cpu", "-o", "out/", "--devices", "all"}, dir.path());
    CHECK(cpu.exit_code == 2);
    CHECK_THAT(cpu.err, Catch::Contains("error: --devices \"all\": -k cpu filters on the CPU"));
    const auto none =
        run_cudaconv({"in", "-f", "none", "-o", "out/", "--devices", "2"}, dir.path());
    CHECK(none.exit_code == 2);
    CHECK_THAT(none.err, Catch::Contains("error: --devices \"2\": -f none runs nothing on a GPU"));
    // A layer runs on one GPU.
    const std::vector<float> weights(3 * 3 * 3 * 2, 0.25f);
    const std::vector<std::uint8_t> npy = encode_npy({3, 3, 3, 2}, weights.data());
    write_file(dir / "w.npy", std::string(npy.begin(), npy.end()));
    const auto layer = run_cudaconv(
        {"in/000.png", "--weights", "w.npy", "-o", "out.npy", "--devices", "2"}, dir.path());
    CHECK(layer.exit_code == 2);
    CHECK_THAT(layer.err,
               Catch::Contains("error: --devices: a layer (--weights) runs its inputs one after "
                               "another on one GPU"));
    CHECK(!fs::exists(dir / "out"));
    CHECK(!fs::exists(dir / "out.npy"));
}

TEST_CASE("devices: bench --devices refuses what it cannot time, before any work",
          "[cli][devices]") {
    TempDir dir;
    const auto cpu = run_cudaconv({"bench", "--devices", "all", "-k", "cpu"}, dir.path());
    CHECK(cpu.exit_code == 2);
    CHECK_THAT(cpu.err, Catch::Contains("error: --devices \"all\": no CUDA variant among -k's"));
    CHECK(cpu.out.empty());
    const auto zero = run_cudaconv({"bench", "--devices", "0", "-k", "fast"}, dir.path());
    CHECK(zero.exit_code == 2);
    CHECK_THAT(zero.err, Catch::Contains("--devices \"0\": a count of devices is at least 1"));
    const std::string more = std::to_string(present_devices().size() + 1);
    const auto r = run_cudaconv({"bench", "--devices", more, "-k", "fast"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err,
               Catch::Contains("error: --devices \"" + more + "\": asks for " + more + " device"));
    CHECK(r.out.empty());
}

TEST_CASE("devices: bench --devices times the CUDA variants on each device in turn",
          "[cli][devices][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    const std::vector<int> present = present_devices();
    const auto r = run_cudaconv({"bench", "--devices", "all", "-k", "fast,cpu", "--size", "64x48",
                                 "-f", "edge", "--depth", "u8", "--warmup", "0", "--repeat", "2",
                                 "--json", "-", "--csv", "rows.csv"},
                                dir.path());
    REQUIRE(r.exit_code == 0);
    const nlohmann::json report = nlohmann::json::parse(r.out);
    REQUIRE(report.at("devices").size() == present.size());
    for (std::size_t k = 0; k < present.size(); ++k) {
        INFO("device " << present[k]);
        const nlohmann::json& one = report.at("devices")[k];
        CHECK(one.at("context").at("device_index") == present[k]);
        int fast_rows = 0, cpu_rows = 0;
        for (const auto& row : one.at("results")) {
            CHECK(row.at("status") == "ok");
            (row.at("uses_cuda").get<bool>() ? fast_rows : cpu_rows)++;
        }
        CHECK(fast_rows >= 1);
        CHECK(cpu_rows == (k == 0 ? 1 : 0));  // the CPU rows once, with the first device
    }
    const std::string csv = read_bytes(dir / "rows.csv");
    CHECK(csv.rfind("variant,", 0) == 0);
    CHECK(csv.substr(0, csv.find('\n')).find(",reason,device") != std::string::npos);
    CHECK(csv.find(",ok,") != std::string::npos);
}

TEST_CASE("devices: --devices all without a GPU filters on the CPU, as without it",
          "[cli][batch][devices]") {
    if (skip_with_device()) return;  // the [gpu] cases below cover a GPU
    TempDir dir;
    make_inputs(dir, 4);
    const auto r = run_cudaconv(
        {"in", "-f", "edge", "-o", "all/", "--devices", "all", "--json", "-"}, dir.path());
    REQUIRE(r.exit_code == 0);
    const auto plain = run_cudaconv({"in", "-f", "edge", "-o", "plain/"}, dir.path());
    REQUIRE(plain.exit_code == 0);
    check_same_files(dir / "all", dir / "plain");
    for (const auto& [input, line] : json_by_input(r.out)) {
        INFO(input);
        CHECK(line.at("device").is_null());  // filtered on the CPU
    }
    CHECK_FALSE(summary_of(r.out).contains("devices"));
}

TEST_CASE("devices: each image's line names its device, the summary counts them",
          "[cli][batch][devices][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    make_inputs(dir, 24);
    const std::vector<int> present = present_devices();
    for (const std::string kernel : {"fast", "auto"}) {
        INFO("-k " << kernel);
        const fs::path all = "all-" + kernel, one = "one-" + kernel;
        std::vector<std::string> args{
            "in",        "-f",  "edge",   "-k", kernel, "-o", all.string() + "/",
            "--devices", "all", "--json", "-"};
        // fast's filter repeated, so that the images outlast the second
        // device's start-up and it takes some (the outputs are the same:
        // --repeat only times the filter).
        if (kernel == "fast") args.insert(args.end(), {"--repeat", "2000"});
        const auto r = run_cudaconv(args, dir.path());
        REQUIRE(r.exit_code == 0);
        const auto single = run_cudaconv(
            {"in", "-f", "edge", "-k", kernel, "-o", one.string() + "/", "--devices", "1"},
            dir.path());
        REQUIRE(single.exit_code == 0);
        check_same_files(dir / all, dir / one);
        std::map<int, int> counted;
        int on_gpu = 0;
        for (const auto& [input, line] : json_by_input(r.out)) {
            INFO(input << ": " << line.at("variant"));
            const std::string variant = line.at("variant").get<std::string>();
            if (variant == "cpu" || variant == "cpu-ref") {  // auto may choose the CPU
                CHECK(line.at("device").is_null());
                continue;
            }
            REQUIRE(line.at("device").is_number_integer());
            const int device = line.at("device").get<int>();
            CHECK(std::find(present.begin(), present.end(), device) != present.end());
            ++counted[device];
            ++on_gpu;
        }
        if (kernel == "fast") {
            CHECK(on_gpu == 24);
            // Two devices at least took images, where there are two.
            CHECK(counted.size() >= std::min<std::size_t>(2, present.size()));
        }
        const nlohmann::json summary = summary_of(r.out);
        REQUIRE(summary.contains("devices"));
        CHECK(summary.at("devices").size() == present.size());  // every device, 0 or more
        int total = 0;
        for (const auto& entry : summary.at("devices")) {
            const int device = entry.at("device").get<int>();
            const int done = entry.at("done").get<int>();
            CHECK(done == counted[device]);
            total += done;
        }
        CHECK(total == on_gpu);
    }
}

TEST_CASE("devices: by default a batch runs on the first device alone",
          "[cli][batch][devices][gpu]") {
    if (skip_without_two_devices()) return;
    TempDir dir;
    make_inputs(dir, 100);
    const auto r =
        run_cudaconv({"in", "-f", "edge", "-k", "fast", "-o", "out/", "--json", "-"}, dir.path());
    REQUIRE(r.exit_code == 0);
    const nlohmann::json summary = summary_of(r.out);
    // One device lists none (the summary's devices are several devices').
    CHECK((!summary.contains("devices") || summary.at("devices").size() <= 1));
    for (const auto& [input, line] : json_by_input(r.out)) {
        INFO(input);
        CHECK(line.at("device") == 0);
    }
}

// A batch the CPU decodes runs two GPU threads a device (batch/devices.hpp):
// their outputs are one thread's, byte for byte, for a filter and for a
// chain whose steps each put their taps in constant memory.
TEST_CASE("devices: two GPU threads a device give one thread's outputs",
          "[cli][batch][devices][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    make_inputs(dir, 24);
    const std::vector<std::vector<std::string>> jobs{
        {"-f", "edge", "-k", "fast"},
        {"-f", "gaussian:sigma=2", "-f", "gaussian:sigma=3", "--border", "replicate", "-k",
         "fast-separable"},
    };
    int job_number = 0;
    for (const std::vector<std::string>& job : jobs) {
        const std::string name = std::to_string(job_number++);
        INFO(job[1] << " " << job[job.size() - 1]);
        const auto run = [&](const std::string& threads, const fs::path& out) {
            std::vector<std::string> args{"in",   "-o", out.string() + "/", "-vv", "--gpu-threads",
                                          threads};
            args.insert(args.end(), job.begin(), job.end());
            return run_cudaconv(args, dir.path());
        };
        const auto two = run("2", "two" + name);
        REQUIRE(two.exit_code == 0);
        CHECK_THAT(two.err, Catch::Contains("2 GPU threads a device"));
        const auto one = run("1", "one" + name);
        REQUIRE(one.exit_code == 0);
        CHECK_THAT(one.err, Catch::Contains("1 GPU thread a device"));
        check_same_files(dir / ("two" + name), dir / ("one" + name));
    }
}

}  // namespace cudaconv::test
