// zplan: profile a machine, estimate memory, search and simulate ZeRO-3 / ZeRO-Infinity plans.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/process_env.h"
#include "planner/cli/commands.h"

int main(int argc, char** argv) {
  zinf::EnsurePassiveOpenMpWait(argv);
  CLI::App app{"zplan: plan ZeRO-3 / ZeRO-Infinity training (memory per tier, step time, schedule search).\n"
               "Exit codes: 0 ok, 1 runtime failure, 2 bad input or usage, 3 no feasible plan."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "zplan 0.1.0");
  int rc = 0;
  auto set_rc = [&rc](int r) { rc = r; };
  zinf::RegisterEstimate(app, set_rc);
  zinf::RegisterPlan(app, set_rc);
  zinf::RegisterSweep(app, set_rc);
  zinf::RegisterSimulate(app, set_rc);
  zinf::RegisterProfile(app, set_rc);
  zinf::RegisterCatalog(app, set_rc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int r = app.exit(e);
    return r == 0 ? 0 : 2;
  }
  return rc;
}
