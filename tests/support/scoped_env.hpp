#pragma once
// Sets (or, given nullptr, unsets) an environment variable for one scope and
// puts back what was there, whatever leaves the scope: for what the product
// reads from its environment outside its variants (OPENCV_TEMP_PATH, the
// batch's settings). Variants read none: a test reaches a path by its name
// (fast.strips) and sets tuning values with RunOptions::tuning.
#include <cstdlib>
#include <optional>
#include <string>

namespace cudaconv::test {

class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* before = std::getenv(name)) before_ = before;
        if (value) {
            setenv(name, value, 1);
        } else {
            unsetenv(name);
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ~ScopedEnv() {
        if (before_) {
            setenv(name_, before_->c_str(), 1);
        } else {
            unsetenv(name_);
        }
    }

private:
    const char* name_;
    std::optional<std::string> before_;
};

}  // namespace cudaconv::test
