// `alpa run MODEL --cluster SPEC [--method M] [--mesh AxB] [--batch-axis K] [--check]
// [--trace FILE]`: plans the zoo model's train step on the cluster's devices (api/parallelize.h),
// partitions it and trains it on that many in-process devices, printing each step's loss, time
// and measured per-device peak memory beside what the cost model predicted. With --check the
// reference interpreter trains the same model from the same weights and data on one device
// alongside, and the run fails (exit 3) when a loss, a weight or an optimizer state differs
// beyond the printed tolerance (training_check.h). --trace writes every device's timeline
// (execution_trace.h). With --backend mpi each process of `mpirun -np N` is one device
// (runtime/mpi_communicator.h): every rank plans the same step, runs its tile, and rank 0 reports;
// an error on one rank ends them all.
#ifndef ALPA_TOOLS_ALPA_CLUSTER_RUN_H_
#define ALPA_TOOLS_ALPA_CLUSTER_RUN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "api/parallelize.h"
#include "runtime/mpi_communicator.h"
#include "support/status.h"
#include "tools/alpa/training_checkpoints.h"
#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

struct ClusterRunOptions {
  std::string cluster;  // --cluster: empty trains on one device in the interpreter
  std::string method = "shard";
  std::string mesh;  // empty: the planner's choice
  std::optional<int64_t> batch_axis;
  bool check = false;
  std::string trace;  // --trace: the Chrome trace's path; empty: none
  // --backend: "in-process" (devices are threads of this process) or "mpi" (this process is one
  // device, an MPI rank under `mpirun -np N`; rank 0 prints).
  std::string backend = "in-process";
  // --plan: a saved plan to run (plan/plan_document.h) in place of planning afresh.
  std::string plan;
  // --kernels: "fast" (the kernels layer where it has the op) or "reference" (every instruction
  // in the interpreter's handlers).
  std::string kernels = "fast";
  // --method pipeshard: the schedule ("auto": the planner's choice among 1f1b, gpipe and
  // interleaved-1f1b) and a file of manual stages (plan/manual_stages.h).
  std::string schedule = "auto";
  std::string manual_stages;
  // --profile: `alpa profile`'s figures of this machine in place of the preset's, for the
  // pipelined plan's search and its predicted times.
  std::string profile;
};

// The method, mesh, batch axis and kernels the flags give Parallelize; errors name the flag.
Result<api::ParallelizeOptions> ParallelizeOptionsOf(const ClusterRunOptions& options);

// The MPI world for --backend mpi (null for in-process), or why the backend cannot run.
Result<std::unique_ptr<runtime::MpiWorld>> StartBackend(const ClusterRunOptions& options);

// The processes of a run: this one alone in-process, or every MPI rank. Under MPI every rank plans
// and trains and rank 0 alone prints and checks; an error every rank meets alike (planning) ends
// each rank by itself, one rank's error in a step ends them all (MpiWorld::Abort).
class RunRanks {
 public:
  explicit RunRanks(runtime::MpiWorld* mpi) : mpi_(mpi) {}
  // Whether this process prints: in-process, or rank 0.
  bool speaker() const { return mpi_ == nullptr || mpi_->rank() == 0; }
  // The exit code of an error every rank meets alike; the speaker reports it.
  int Fail(const Status& status) const;
  // The exit code of an error in a step (`what` names the model); under MPI it ends every rank.
  int FailStep(const Status& error, const std::string& what) const;
  // Waits for every rank (nothing in-process), so that their steps and timelines start together
  // rather than as each finishes planning.
  Status StartTogether() const;

 private:
  runtime::MpiWorld* mpi_;
};

// What a run trains and prints: how many steps (after the resumed one, with --resume), the seed
// of the initial weights and of each step's batch, its checkpoints, JSON or tables, and the
// progress a supervising `alpa run --elastic` reads.
struct TrainingRun {
  int64_t steps = 10;
  uint64_t seed = 0;
  bool json = false;
  CheckpointFlags checkpoints;
  std::string progress_file;  // elastic_run.h's ProgressLog; empty: none
};

// Returns the process exit code (command_util.h). `f32_step` is the same model built in f32, which
// --check needs for a 16-bit model (training_check.h); null otherwise.
int RunOnCluster(const ZooStep& zoo, const ZooStep* f32_step, const ClusterRunOptions& options,
                 const TrainingRun& run);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_CLUSTER_RUN_H_
