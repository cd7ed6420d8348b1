#pragma once
// --json FILE|-: a batch's JSON lines, each written with one write() as it
// is produced, nothing buffered in between, so that a run stopped hard
// (kill -9, a crash) leaves every line it finished.
#include <cstddef>
#include <string>

namespace cudaconv {

class JsonLines {
public:
    // `-` writes stdout. A file is created, refused if it exists unless
    // `overwrite` (then it is truncated); the plan (batch/plan.hpp) has
    // checked it already, so a failure here is an error of the system
    // (permissions, a file made since): WorkError "PATH: problem".
    JsonLines(const std::string& path, bool overwrite);
    ~JsonLines();
    JsonLines(const JsonLines&) = delete;
    JsonLines& operator=(const JsonLines&) = delete;

    // One line, with its '\n'. Throws WorkError "PATH: cannot write:
    // problem" (disk full, EPIPE from a closed pipe), a file cut back to
    // the lines written before; the caller stops writing then.
    void write_line(const std::string& line);

private:
    std::string name_;  // for messages: the path, or "<stdout> (--json -)"
    int fd_ = -1;
    bool owned_ = false;              // closed on destruction (not stdout)
    std::size_t complete_bytes_ = 0;  // the whole lines written to the file
};

}  // namespace cudaconv
