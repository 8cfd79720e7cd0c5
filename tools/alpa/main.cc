// `alpa`: the command-line entry point. Each sub-command lives in its own file; this file only
// wires them to CLI11 and turns every outcome into an exit code (command_util.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <string>

#include "kernels/elementwise.h"
#include "tools/alpa/cluster_command.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/eval_command.h"
#include "tools/alpa/explain_command.h"
#include "tools/alpa/grad_command.h"
#include "tools/alpa/inspect_command.h"
#include "tools/alpa/plan_command.h"
#include "tools/alpa/profile_command.h"
#include "tools/alpa/run_command.h"
#include "tools/alpa/simulate_command.h"
#include "tools/alpa/solve_command.h"
#include "tools/alpa/zoo_command.h"

#ifndef ALPA_VERSION
#error "ALPA_VERSION is defined by tools/alpa/CMakeLists.txt"
#endif

int main(int argc, char** argv) {
  using namespace alpa::tools;
  CLI::App app(
      "Alpa C++: plans and runs the parallel execution of XLA HLO training steps.\n"
      "MODEL arguments are XLA HLO text files (plain or .gz), as dumped by JAX, TensorFlow or "
      "PyTorch/XLA, or the names of models of the zoo (`alpa zoo` lists them), which accept "
      "overrides of their config (--layers, --hidden, --batch, ...).",
      "alpa");
  app.set_version_flag("--version", "alpa " ALPA_VERSION);
  app.require_subcommand(1);

  InspectOptions inspect;
  EvalOptions eval;
  RunOptions run;
  GradCommandOptions grad;
  ZooListOptions zoo;
  ClusterOptions cluster;
  ProfileCommandOptions profile;
  SimulateOptions simulate;
  SolveCommandOptions solve;
  PlanOptions plan;
  ExplainOptions explain;
  CLI::App* inspect_command = AddInspectCommand(app, inspect);
  CLI::App* eval_command = AddEvalCommand(app, eval);
  CLI::App* run_command = AddRunCommand(app, run);
  CLI::App* grad_command = AddGradCommand(app, grad);
  CLI::App* zoo_command = AddZooCommand(app, zoo);
  CLI::App* cluster_command = AddClusterCommand(app, cluster);
  CLI::App* profile_command = AddProfileCommand(app, profile);
  CLI::App* simulate_command = AddSimulateCommand(app, simulate);
  CLI::App* solve_command = AddSolveCommand(app, solve);
  CLI::App* plan_command = AddPlanCommand(app, plan);
  CLI::App* explain_command = AddExplainCommand(app, explain);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own exit codes (105, 106, ...) mean nothing to scripts: a bad command line is bad
    // input like any other, reported in the same "alpa: error: " form as the rest.
    std::string help = "alpa --help";
    for (const CLI::App* command :
         {inspect_command, eval_command, run_command, grad_command, zoo_command, cluster_command,
          profile_command, simulate_command, solve_command, plan_command, explain_command}) {
      if (command->parsed()) help = "alpa " + command->get_name() + " --help";
    }
    if (cluster.show->parsed()) help = "alpa cluster show --help";
    fmt::print(stderr, "alpa: error: {}\nRun '{}' for more information.\n", e.what(), help);
    return kExitBadInput;
  }
  if (const std::string problem = alpa::kernels::VectorInstructionSetCapError(); !problem.empty()) {
    fmt::print(stderr, "alpa: error: {}\n", problem);
    return kExitBadInput;
  }
  try {
    if (inspect_command->parsed()) return RunInspect(inspect);
    if (eval_command->parsed()) return RunEval(eval);
    if (run_command->parsed()) {
      run.arguments.assign(argv + 1, argv + argc);  // what --elastic relaunches
      return RunRun(run);
    }
    if (grad_command->parsed()) return RunGrad(grad);
    if (zoo_command->parsed()) return RunZoo(zoo);
    if (cluster_command->parsed()) return RunCluster(cluster);
    if (profile_command->parsed()) return RunProfile(profile);
    if (simulate_command->parsed()) return RunSimulate(simulate);
    if (solve_command->parsed()) return RunSolve(solve);
    if (plan_command->parsed()) return RunPlan(plan);
    if (explain_command->parsed()) return RunExplain(explain);
  } catch (const std::exception& e) {
    // Errors a user can cause are Status values; an exception that gets here is a bug, reported as
    // one (exit 1) rather than as an abort that looks like a crash.
    fmt::print(stderr, "alpa: internal error: {}\nPlease report it.\n", e.what());
    return kExitInternalError;
  }
  fmt::print(stderr, "alpa: error: no command given; see alpa --help\n");
  return kExitBadInput;
}
