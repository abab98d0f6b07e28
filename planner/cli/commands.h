// zplan subcommands: each registers itself on the CLI app and reports its exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

#include "planner/cli/common.h"

namespace zinf {

void RegisterEstimate(CLI::App& app, std::function<void(int)> set_rc);
void RegisterPlan(CLI::App& app, std::function<void(int)> set_rc);
void RegisterSweep(CLI::App& app, std::function<void(int)> set_rc);
void RegisterSimulate(CLI::App& app, std::function<void(int)> set_rc);
void RegisterProfile(CLI::App& app, std::function<void(int)> set_rc);
void RegisterCatalog(CLI::App& app, std::function<void(int)> set_rc);

}  // namespace zinf
