// `cudaconv bench` as a user runs it: tiny sizes on the CPU, so the tests
// are fast and pass with or without a GPU.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> read_lines(const fs::path& p) {
    std::ifstream in(p);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

nlohmann::json read_json(const fs::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

// The variants `list kernels` prints, in order, without the composites'
// named paths and their parameters (indented under each): bench -k all
// must cover them.
std::vector<std::string> registered_variants() {
    const auto r = run_cudaconv({"list", "kernels"});
    std::vector<std::string> names;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == ' ') continue;
        names.push_back(line.substr(0, line.find(' ')));
    }
    return names;
}

}  // namespace

TEST_CASE("bench with cpu-ref times, verifies and writes CSV and JSON", "[cli][bench]") {
    TempDir dir;
    const auto r = run_cudaconv({"bench", "--size", "23x11x3,9x7x1", "-f", "edge,random:3", "-f",
                                 "3x1:1,2,1", "--depth", "u8,f32", "-k", "cpu-ref", "--warmup", "0",
                                 "--repeat", "2", "--csv", "b.csv", "--json", "b.json"},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // Which reference checked each job is a -v line; the table names it.
    CHECK_THAT(r.err, !Catch::Contains("reference"));
    CHECK_THAT(r.out, Catch::Contains("checked against cpu-ref"));
    // The table: one per filter and depth, variants down, sizes across.
    CHECK_THAT(r.out, Catch::StartsWith("cudaconv bench, "));
    CHECK_THAT(r.out, Catch::Contains("warmup 0, repeat 2"));
    CHECK_THAT(r.out, Catch::Contains("edge (3x3), u8: median µs"));
    CHECK_THAT(r.out, Catch::Contains("3x1:1,2,1 (3x1), f32"));
    CHECK_THAT(r.out, Catch::Matches("(.|\n)*\nvariant +23x11x3 +9x7x1\n"
                                     "cpu-ref +[0-9.]+ µs [0-9.]+ GB/s +[0-9.]+ µs(.|\n)*"));
    CHECK_THAT(r.out, Catch::Contains("checked against cpu-ref (23x11x3, 9x7x1)"));

    const auto csv = read_lines(dir / "b.csv");
    REQUIRE(csv.size() == 1 + 2 * 3 * 2);  // sizes x filters x depths
    CHECK_THAT(csv[0], Catch::StartsWith("variant,filter,filter_width,filter_height,width,height,"
                                         "channels,depth,border,"));
    CHECK_THAT(csv[0], Catch::Contains("median_us,min_us,max_us,mpix_per_s,gb_per_s,copy_share,"
                                       "status,reference,reason"));
    CHECK(csv[1].rfind("cpu-ref,edge,3,3,23,11,3,u8,reflect101,23,11,2,", 0) == 0);
    for (std::size_t i = 1; i < csv.size(); ++i) {
        CAPTURE(csv[i]);
        CHECK_THAT(csv[i], Catch::EndsWith(",ok,cpu-ref,"));
    }
    // The inline filter's commas are quoted.
    CHECK_THAT(csv.back(), Catch::StartsWith("cpu-ref,\"3x1:1,2,1\",3,1,9,7,1,f32,"));

    const auto json = read_json(dir / "b.json");
    CHECK(json["context"]["warmup"] == 0);
    CHECK(json["context"]["repeat"] == 2);
    CHECK(json["context"]["verify"] == true);
    CHECK(json["context"]["border"] == "reflect101");
    CHECK(json["context"]["timing"] == "device");
    const auto& results = json["results"];
    REQUIRE(results.size() == 12);
    for (const auto& row : results) {
        CAPTURE(row.dump());
        CHECK(row["variant"] == "cpu-ref");
        CHECK(row["status"] == "ok");
        CHECK(row["runs"] == 2);
        CHECK(row["median_us"].get<double>() > 0.0);
        CHECK(row["min_us"].get<double>() <= row["max_us"].get<double>());
        CHECK(row["mpix_per_s"].get<double>() > 0.0);
        CHECK(row["gb_per_s"].get<double>() > 0.0);
        CHECK(row["copy_share"].is_null());
        CHECK(row["verification"]["failures"] == 0);
    }
    CHECK(results[0]["image"]["width"] == 23);
    CHECK(results[0]["filter"]["spec"] == "edge");
    CHECK(results[2]["filter"]["spec"] == "3x1:1,2,1");
    CHECK(results[6]["image"]["depth"] == "f32");
}

TEST_CASE("bench's JSON names the path a composite CPU variant took", "[cli][bench]") {
    TempDir dir;
    const auto r =
        run_cudaconv({"bench", "--size", "37x9x3", "-f", "sobel-x,gaussian:5", "--depth", "u8",
                      "-k", "cpu", "--warmup", "0", "--repeat", "2", "--json", "-", "-q"},
                     dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto results = nlohmann::json::parse(r.out)["results"];
    REQUIRE(results.size() == 2);
    CHECK(results[0]["path"] == "cpu.int16");     // integer taps on u8
    CHECK(results[1]["path"] == "cpu.two-pass");  // rank 1, 5x5
}

TEST_CASE("bench -k all has a row for every variant: timed or refused", "[cli][bench]") {
    TempDir dir;
    const auto r = run_cudaconv({"bench", "--size", "16x8x1", "-f", "box:3", "--depth", "u8",
                                 "--warmup", "0", "--repeat", "1", "--json", "-", "-q"},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // --json - takes stdout; the table moves to stderr.
    CHECK_THAT(r.err, Catch::Contains("box:3 (3x3), u8"));
    const auto json = nlohmann::json::parse(r.out);
    const auto variants = registered_variants();
    REQUIRE(json["results"].size() == variants.size());
    for (std::size_t i = 0; i < variants.size(); ++i) {
        const auto& row = json["results"][i];
        CAPTURE(row.dump());
        CHECK(row["variant"] == variants[i]);
        CHECK((row["status"] == "ok" || row["status"] == "refused"));
        if (row["status"] == "refused") {
            CHECK_FALSE(row["reason"].get<std::string>().empty());
            CHECK(row["median_us"].is_null());
        }
    }
    CHECK(json["results"][0]["variant"] == "cpu-ref");
    CHECK(json["results"][0]["status"] == "ok");
    if (json["context"]["device"].is_null()) {
        CHECK_THAT(r.err, Catch::Contains("no CUDA device"));
    }
}

// --peer opencv: rows after the variants', marked peers, verified as they
// are: cv::filter2D for a dense filter, cv::sepFilter2D for a rank-1 one;
// refused, with the reason, where OpenCV has no such border.
TEST_CASE("bench --peer opencv times OpenCV beside the variants, marked a peer", "[cli][bench]") {
    TempDir dir;
    for (const char* border : {"reflect101", "replicate", "wrap"}) {
        const auto r = run_cudaconv({"bench",
                                     "--size",
                                     "37x23x3,16x9x1",
                                     "-f",
                                     "random:5,gaussian:sigma=1.5,box:3",
                                     "--depth",
                                     "u8,u16,f32",
                                     "-k",
                                     "cpu",
                                     "--peer",
                                     "opencv",
                                     "--border",
                                     border,
                                     "--warmup",
                                     "0",
                                     "--repeat",
                                     "1",
                                     "--json",
                                     "-",
                                     "-q"},
                                    dir.path());
        INFO(border << ": " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.err, Catch::Contains("opencv: a peer, not a cudaconv variant"));
        const auto json = nlohmann::json::parse(r.out);
        int peers = 0;
        for (const auto& row : json["results"]) {
            CAPTURE(row.dump());
            const bool peer = row["variant"] == "opencv";
            CHECK(row["peer"] == peer);
            if (!peer) continue;
            ++peers;
            if (std::string(border) == "wrap") {
                CHECK(row["status"] == "refused");
                CHECK_THAT(row["reason"].get<std::string>(), Catch::Contains("no wrap border"));
            } else {
                CHECK(row["status"] == "ok");  // verified against the reference
            }
        }
        CHECK(peers == 2 * 3 * 3);  // sizes x filters x depths
    }
    const auto bad =
        run_cudaconv({"bench", "--size", "8x8", "-k", "cpu", "--peer", "numpy"}, dir.path());
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--peer \"numpy\": unknown peer (choose opencv)"));
}

TEST_CASE("bench --no-verify labels times unverified", "[cli][bench]") {
    const auto r =
        run_cudaconv({"bench", "--size", "8x8", "-f", "edge", "--depth", "u16", "-k", "cpu-ref",
                      "--warmup", "0", "--repeat", "1", "--no-verify", "--csv", "-", "-q"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("\ncpu-ref,edge,3,3,8,8,3,u16,"));
    CHECK_THAT(r.out, Catch::EndsWith(",unverified,,\n"));
    CHECK_THAT(r.err, Catch::Contains("outputs NOT verified"));
}

TEST_CASE("bench --timing launch is said in the table's header and the JSON", "[cli][bench]") {
    const auto r =
        run_cudaconv({"bench", "--size", "8x8", "-f", "edge", "-k", "cpu-ref,naive", "--warmup",
                      "0", "--repeat", "1", "--timing", "launch", "--json", "-", "-q"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto json = nlohmann::json::parse(r.out);
    CHECK(json["context"]["timing"] == "launch");
    // Where CUDA rows were timed, the header says how.
    if (!json["context"]["device"].is_null()) {
        CHECK_THAT(r.err, Catch::Contains("CUDA times include the host's launch latency"));
    } else {
        CHECK_THAT(r.err, !Catch::Contains("CUDA times"));
    }
}

TEST_CASE("bench usage errors exit 2 with one line", "[cli][bench][errors]") {
    TempDir dir;
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"-k", "cpu-ref,warp-speed"}, "-k \"warp-speed\": unknown variant"},
        {{"--size", "64"}, "--size \"64\""},
        {{"--size", "8x8x2"}, "channels must be 1, 3 or 4"},
        {{"-f", "random:0"}, "random:0"},
        {{"-f", "edge,,box:3"}, "empty filter"},
        {{"--depth", "f64"}, "--depth \"f64\""},
        {{"--border", "sideways"}, "--border \"sideways\""},
        {{"--repeat", "0"}, "--repeat"},
        {{"--timing", "sometimes"}, "--timing"},
        {{"--csv", "-", "--json", "-"}, "both write to stdout"},
        {{"--json", "no/such/folder/b.json"}, "the folder no/such/folder does not exist"},
        {{"--csv", sample("camera.png") + "/b.csv"}, "camera.png is a file, not a folder"},
    };
    for (const auto& [extra, message] : cases) {
        std::vector<std::string> args{"bench", "--size", "8x8"};
        if (extra.front() != "-k") args.insert(args.end(), {"-k", "cpu-ref"});
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_cudaconv(args, dir.path());
        CAPTURE(extra, r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(message));
        CHECK(r.out.empty());
    }
    CHECK(dir.entries().empty());
}

}  // namespace cudaconv::test
