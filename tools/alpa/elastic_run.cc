#include "tools/alpa/elastic_run.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_store.h"
#include "cluster/cluster_json.h"
#include "cluster/cluster_spec.h"
#include "cluster/presets.h"
#include "runtime/mpi_communicator.h"
#include "support/file.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"

extern char** environ;

namespace alpa::tools {
namespace {

namespace fs = std::filesystem;

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// How far a launched run got, from its progress file.
struct Progress {
  bool started = false;
  std::string plan;  // "shard on mesh [2,2]"
  int64_t first_step = 0;
  int64_t last_step = 0;       // the last step it finished (first_step when none)
  double first_step_time = 0;  // when it finished its first step (0: none)
  double last_step_time = 0;   // when it finished its last
};

Progress ReadProgress(const std::string& path) {
  Progress progress;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    // A run killed mid-write leaves its last line torn: it is skipped.
    const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object() || !event.contains("event")) continue;
    if (event["event"] == "start") {
      progress.started = true;
      progress.plan =
          fmt::format("{} on mesh {}", event.value("method", "?"), event.value("mesh", "?"));
      progress.first_step = progress.last_step = event.value("first_step", int64_t{0});
    } else if (event["event"] == "step") {
      progress.last_step = event.value("step", progress.last_step);
      progress.last_step_time = event.value("unix_time_s", 0.0);
      if (progress.first_step_time == 0) progress.first_step_time = progress.last_step_time;
    }
  }
  return progress;
}

// `arguments` without the option `name` ("--name V", "--name=V", or the flag "--name").
std::vector<std::string> WithoutOption(const std::vector<std::string>& arguments,
                                       const std::string& name, bool takes_value) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == name) {
      if (takes_value) ++i;
      continue;
    }
    if (arguments[i].starts_with(name + "=")) continue;
    kept.push_back(arguments[i]);
  }
  return kept;
}

// Runs `command` (found on PATH) with this process's stdin, stdout and stderr; returns its exit
// status, 128 + N when signal N ended it, as a shell reports it.
Result<int> Launch(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = 0;
  if (const int error = posix_spawnp(&child, argv[0], nullptr, nullptr, argv.data(), environ);
      error != 0) {
    return InvalidArgument("cannot start {}: {}", command.front(), std::strerror(error));
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR)
      return InvalidArgument("waiting for {}: {}", command.front(), std::strerror(errno));
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

struct Attempt {
  int64_t devices = 0;
  std::string cluster;
  int exit_code = 0;
  Progress progress;
  int64_t first_step = 0;  // the step it started after: its checkpoint's, or the run's first
};

void PrintSummary(std::FILE* out, const std::vector<Attempt>& attempts) {
  using Align = Table::Align;
  Table table({"run", "devices", "plan", "steps", "ended"},
              {Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft});
  for (size_t i = 0; i < attempts.size(); ++i) {
    const Attempt& attempt = attempts[i];
    const Progress& progress = attempt.progress;
    std::string ended = attempt.exit_code == 0 ? std::string("done")
                                               : fmt::format("failed (exit {})", attempt.exit_code);
    if (i > 0 && progress.first_step_time > 0) {
      const Progress& before = attempts[i - 1].progress;
      const int64_t lost = before.last_step - attempt.first_step;
      ended += fmt::format("; recovered in {}, {} step{} lost",
                           FormatSeconds(progress.first_step_time - before.last_step_time), lost,
                           lost == 1 ? "" : "s");
    }
    table.AddRow({std::to_string(i + 1), fmt::format("{} ({})", attempt.devices, attempt.cluster),
                  progress.started ? progress.plan : "-",
                  progress.last_step > progress.first_step
                      ? fmt::format("{}-{}", progress.first_step + 1, progress.last_step)
                      : "-",
                  ended});
  }
  fmt::print(out, "\n{}", table.Render());
}

}  // namespace

int RunElastic(const RunOptions& options, const std::vector<std::string>& arguments) {
  const ClusterRunOptions& run = options.cluster;
  if (options.checkpoints.dir.empty()) {
    return ReportError(InvalidArgument(
        "--elastic resumes from checkpoints: give --checkpoint-dir (and --checkpoint-every N to "
        "lose at most N steps)"));
  }
  if (run.cluster.empty()) return ReportError(InvalidArgument("--elastic needs --cluster"));
  if (!run.mesh.empty() || !run.plan.empty() || !run.manual_stages.empty()) {
    return ReportError(InvalidArgument(
        "--mesh, --plan and --manual-stages fix the device count; --elastic re-plans on the "
        "devices left: leave the plan to the planner"));
  }
  if (runtime::LaunchedByMpirun()) {
    return ReportError(InvalidArgument(
        "start alpa run --elastic by itself, not under mpirun: it launches mpirun -np N itself, "
        "and again on the ranks left when one is lost"));
  }
  Result<cluster::ClusterSpec> spec = cluster::ParseClusterArgument(run.cluster);
  if (!spec.ok()) return ReportError(spec.status().WithContext("--cluster"));
  std::FILE* out = options.json ? stderr : stdout;  // --json keeps stdout for the runs' JSON

  int64_t from = 0;  // the step training starts after
  std::string resume = options.checkpoints.resume;
  if (!resume.empty()) {
    Result<checkpoint::Checkpoint> start = checkpoint::Checkpoint::Open(resume);
    if (!start.ok()) return ReportError(start.status().WithContext("--resume"));
    from = start->manifest().step;
  }
  const int64_t target = from + options.steps;
  std::vector<std::string> base = arguments;
  for (const auto& [name, takes_value] :
       {std::pair{"--elastic", false}, std::pair{"--cluster", true}, std::pair{"--steps", true},
        std::pair{"--resume", true}, std::pair{"--progress-file", true}}) {
    base = WithoutOption(base, name, takes_value);
  }
  std::error_code error;
  const fs::path scratch =
      fs::temp_directory_path(error) / fmt::format("alpa-elastic-{}", getpid());
  fs::create_directories(scratch, error);
  if (error)
    return ReportError(
        InvalidArgument("{}: cannot create ({})", scratch.string(), error.message()));
  const std::string self = fs::read_symlink("/proc/self/exe", error).string();

  std::string cluster_argument = run.cluster;
  std::vector<Attempt> attempts;
  for (;;) {
    Attempt& attempt = attempts.emplace_back();
    attempt.devices = cluster::TotalDevices(*spec);
    attempt.cluster = cluster_argument;
    attempt.first_step = from;
    const std::string progress = (scratch / fmt::format("run-{}.jsonl", attempts.size())).string();
    std::vector<std::string> command;
    if (run.backend == "mpi") {
      command = {"mpirun", "-np", std::to_string(attempt.devices), "--oversubscribe"};
      if (geteuid() == 0) command.push_back("--allow-run-as-root");
    }
    command.push_back(self);
    command.insert(command.end(), base.begin(), base.end());
    command.insert(command.end(), {"--cluster", cluster_argument, "--steps",
                                   std::to_string(target - from), "--progress-file", progress});
    if (!resume.empty()) command.insert(command.end(), {"--resume", resume});
    fmt::print(out, "elastic     run {} on {} device{} ({}): steps {} to {}\n", attempts.size(),
               attempt.devices, attempt.devices == 1 ? "" : "s", cluster_argument, from + 1,
               target);
    Result<int> code = Launch(command);
    if (!code.ok()) return ReportError(code.status());
    attempt.exit_code = *code;
    attempt.progress = ReadProgress(progress);
    if (attempt.exit_code == 0) break;
    if (!attempt.progress.started) {
      fmt::print(out, "elastic     run {} ended before training (exit {}): not relaunched\n",
                 attempts.size(), attempt.exit_code);
      PrintSummary(out, attempts);
      return attempt.exit_code;
    }
    if (attempt.devices == 1) {
      PrintSummary(out, attempts);
      return ReportError(FailedPrecondition(
          "run {} failed on its one device (exit {}); no device is left to re-plan on",
          attempts.size(), attempt.exit_code));
    }
    Result<checkpoint::Checkpoint> last = checkpoint::Checkpoint::Open(options.checkpoints.dir);
    if (last.ok()) {
      from = last->manifest().step;
      resume = options.checkpoints.dir;
    }
    *spec = cluster::WithoutDevice(*spec, attempt.devices - 1);
    // `local` on one host is the same cores less one: local:N-1 says so shorter than a file.
    if (run.cluster.starts_with("local") && spec->hosts.size() == 1) {
      cluster_argument = fmt::format("local:{}", spec->hosts[0].devices);
    } else {
      cluster_argument = (scratch / fmt::format("cluster-{}.json", attempts.size())).string();
      if (const Status written = WriteStringToFile(cluster_argument, cluster::ClusterJson(*spec));
          !written.ok()) {
        return ReportError(written);
      }
    }
    fmt::print(out,
               "elastic     run {} failed after step {} (exit {}); re-planning for {} devices and "
               "resuming after step {}{}: {} step{} lost\n",
               attempts.size(), attempt.progress.last_step, attempt.exit_code, attempt.devices - 1,
               from, resume.empty() ? " (no checkpoint: from the start)" : "",
               attempt.progress.last_step - from,
               attempt.progress.last_step - from == 1 ? "" : "s");
  }
  fs::remove_all(scratch, error);
  PrintSummary(out, attempts);
  return kExitOk;
}

ProgressLog::ProgressLog(const std::string& path) {
  if (!path.empty()) file_ = std::fopen(path.c_str(), "a");
}

ProgressLog::~ProgressLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void ProgressLog::Start(const std::string& method, const std::string& mesh, int64_t devices,
                        int64_t first_step) {
  Write(nlohmann::json({{"event", "start"},
                        {"method", method},
                        {"mesh", mesh},
                        {"devices", devices},
                        {"first_step", first_step},
                        {"unix_time_s", UnixSeconds()}})
            .dump());
}

void ProgressLog::Step(int64_t step) {
  Write(nlohmann::json({{"event", "step"}, {"step", step}, {"unix_time_s", UnixSeconds()}}).dump());
}

void ProgressLog::Write(const std::string& line) {
  if (file_ == nullptr) return;
  std::fputs((line + "\n").c_str(), file_);
  std::fflush(file_);
}

}  // namespace alpa::tools
