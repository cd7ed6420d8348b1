#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace cudaconv {

struct ListOptions {
    std::string what;  // filters | kernels | devices
};

void add_list_options(CLI::App& app, ListOptions& options);
int run_list_command(const ListOptions& options);

}  // namespace cudaconv
