// Running a pipelined plan (Alpa's PipeshardParallel): every stage's programs
// (pipeshard_stages.h) on its sub-mesh, the micro-batches in the order of the plan's schedule
// (pipeline/schedule.h, the simulator's), values between stages moved tile to tile
// (spmd/cross_mesh.h), each device running its own static list (runtime/pipeline_executor.h):
//
//   F(s, m): receive micro-batch m's inputs of stage s, run its forward, send what it sends on
//   B(s, m): receive the cotangents of what it sent, run its backward, add its weights'
//            gradients to their sums, send its inputs' gradients back
//   then, once per step on every stage: the update on the summed gradients / M
//
//   PipeshardExecutable exe = ParallelizePipeshard(step, cluster, plan, table.configs).value();
//   exe.Place(carried);                   // the model step's weights, optimizer state, t
//   double loss = exe.Step(batch).value();  // the batch's micro-batches stacked along dim 0
//   std::vector<ir::Literal> now = exe.Fetch().value();
//
// The step is the model's train step with M micro-batches (autodiff/train_step.h): the same
// carried values in the same order, the mean of the micro-batches' losses and gradients, so a
// run can be checked against the reference interpreter on one device.
//
// A weight read by several stages (GPT's tied embedding) has a copy on each, whose gradient sums
// are added together before the update.
//
// Under MPI each process runs one device (BindProcess): every rank builds the same executable
// and makes the same calls with the same arguments, keeps its own device's tiles, runs its own
// list, and gets the step's loss and the devices' profiles from the others.
#ifndef ALPA_API_PIPESHARD_EXECUTABLE_H_
#define ALPA_API_PIPESHARD_EXECUTABLE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "api/pipeshard_stages.h"
#include "autodiff/train_step.h"
#include "cluster/cluster_spec.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "pipeline/schedule.h"
#include "pipeline/stage_memory.h"
#include "plan/layer_costs.h"
#include "plan/pipeshard_planner.h"
#include "runtime/communicator.h"
#include "runtime/device_threads.h"
#include "runtime/mailbox.h"
#include "runtime/pipeline_executor.h"
#include "support/status.h"

namespace alpa::api {

// The model to pipeline: its loss at the micro-batch size, its weights, how it trains
// (training.num_micro_batches is the step's M).
struct PipeshardStep {
  const ir::Module* loss = nullptr;
  std::vector<int64_t> weights;
  autodiff::TrainStepOptions training;
};

struct PipeshardRunOptions {
  StageProgramOptions stages;
  runtime::KernelChoice kernels = runtime::KernelChoice::kFast;
  // Each device's memory; a device past it fails the step naming the buffer. 0: no limit.
  int64_t memory_limit_bytes = 0;
  double timeout_seconds = 10;  // a receive or collective waiting longer fails the step
};

class PipeshardExecutable {
 public:
  // From now on this process runs device world.rank() alone, its messages in `mailbox` (both
  // MpiWorld's), every other device being another process making the same calls: Place keeps
  // this device's tiles, Step runs its list and returns the step's loss on every process, Fetch
  // is collective (every process calls it), and last_run() holds every device's profile. Before
  // Place. Errors: a world of another size than the plan's devices (how many to start).
  Status BindProcess(runtime::Communicator& world, runtime::Mailbox& mailbox);

  // Keeps `carried` (the model step's weights, their optimizer state, then t) as every stage's
  // tiles of the values it reads.
  Status Place(const std::vector<ir::Literal>& carried);
  // One training step on `batch` (the model's batch parameters, M micro-batches stacked along
  // dimension 0); returns the mean of the micro-batches' losses. With `trace_epoch`, every
  // device's instructions are timed (last_run()).
  Result<double> Step(
      const std::vector<ir::Literal>& batch,
      std::optional<std::chrono::steady_clock::time_point> trace_epoch = std::nullopt);
  // The carried values, whole, from the devices of the first stage holding each.
  Result<std::vector<ir::Literal>> Fetch() const;

  int64_t device_count() const { return static_cast<int64_t>(devices_.size()); }
  const std::vector<StageProgram>& stages() const { return *stages_; }
  const pipeline::Schedule& schedule() const { return schedule_; }
  // Bytes one step moves between devices across stages (every micro-batch's activations and
  // cotangents, and the tied weights' gradient sums): the cross-mesh plans'
  // bytes_between_devices, the all-gathers inside receiving meshes included.
  int64_t cross_mesh_bytes() const { return cross_mesh_bytes_; }
  // Of those, the bytes from one stage's devices to another's (bytes_between_meshes): what
  // crosses the link between sub-meshes.
  int64_t between_meshes_bytes() const { return between_meshes_bytes_; }
  // For each carried value: the first stage that holds it, and its layout on that stage's mesh.
  std::vector<std::pair<int64_t, sharding::ShardingSpec>> CarriedPlacement() const;
  // Each device group's memory at its peak as its stages were compiled: their costs under the
  // solutions they run (StageProgram::figures) under the plan's schedule
  // (pipeline/stage_memory.h), by group (the devices of plan stage j are group j % groups).
  // The prediction a run's measured peaks answer to; the plan's own
  // (PlannedStage::peak_memory_bytes) composes its stages from their layers' costs.
  const pipeline::PipelineMemory& compiled_memory() const { return compiled_memory_; }
  // Each device's profile of the last step (peak memory, busy time, events when traced).
  const std::vector<runtime::PipelineProfile>& last_run() const { return last_run_; }
  // Every device's static list (for tests and --trace).
  const std::vector<runtime::PipelineDevice>& device_programs() const { return devices_; }

 private:
  friend Result<PipeshardExecutable> ParallelizePipeshard(const PipeshardStep&,
                                                          const cluster::ClusterSpec&,
                                                          const plan::PipeshardPlan&,
                                                          const std::vector<plan::MeshConfig>&,
                                                          const PipeshardRunOptions&);
  friend class PipelineLowering;  // pipeline_lowering.cc
  PipeshardExecutable() = default;
  // The model step's carried values: weights, their optimizer states, t.
  int64_t CarriedCount() const;
  // The index in them of the stage's step parameter p (a weight, optimizer state or t).
  int64_t CarriedIndex(const StageProgram& stage, size_t p) const;
  // Whether this process runs `device`: every device in-process, its rank's alone under MPI.
  bool Holds(int64_t device) const { return world_ == nullptr || world_->rank() == device; }
  // Runs the devices' lists: all on threads of this process, or this process's under MPI.
  Result<std::vector<runtime::PipelineProfile>> RunDevices(const runtime::PipelineRunOptions& run);
  // Under MPI: stage `s`'s value of its step parameter `p`, whole, from the tiles of the
  // processes of its devices (each broadcast to every process).
  Result<ir::Literal> GatherStateValue(size_t s, size_t p) const;

  // Where a stage's values live on one of its devices.
  struct StageSlots {
    std::vector<int64_t> state;  // by step parameter (weights, optimizer state, t), else -1
    // [m][step parameter]: each micro-batch's inputs (received, cotangents, batch), else -1.
    std::vector<std::vector<int64_t>> inputs;
    // [m][step parameter]: for the batch, the device's host input its forward loads, else -1.
    std::vector<std::vector<int64_t>> host_inputs;
    std::vector<int64_t> loss;  // [m]: the loss (stages with the model's loss)
  };

  PipeshardStep step_;
  std::shared_ptr<std::vector<StageProgram>> stages_;
  pipeline::Schedule schedule_;
  int64_t num_chunks_ = 1;
  std::vector<runtime::PipelineDevice> devices_;
  // slots_of_[stage][position on its mesh]
  std::vector<std::vector<StageSlots>> slots_of_;
  std::vector<std::vector<ir::Literal>> slots_;        // by device
  std::vector<std::vector<ir::Literal>> host_inputs_;  // by device: this step's batch tiles
  autodiff::StepStateCounts state_counts_;             // of the model's step
  std::shared_ptr<runtime::DeviceThreads> threads_;    // in-process: started by the first step
  runtime::Communicator* world_ = nullptr;             // under MPI (BindProcess), else null
  runtime::Mailbox* mailbox_ = nullptr;
  PipeshardRunOptions options_;
  pipeline::PipelineMemory compiled_memory_;
  int64_t cross_mesh_bytes_ = 0;
  int64_t between_meshes_bytes_ = 0;
  bool placed_ = false;
  std::vector<runtime::PipelineProfile> last_run_;
};

// Builds the stages' programs for `plan` (made by the pipeshard planner over `configs`, the
// layer cost table's) and compiles every device's list. Errors: a plan whose stages do not match
// the model or the cluster (named), a weight read by several stages (not supported yet), a stage
// that does not plan or partition.
Result<PipeshardExecutable> ParallelizePipeshard(const PipeshardStep& step,
                                                 const cluster::ClusterSpec& cluster,
                                                 const plan::PipeshardPlan& plan,
                                                 const std::vector<plan::MeshConfig>& configs,
                                                 const PipeshardRunOptions& options = {});

}  // namespace alpa::api

#endif  // ALPA_API_PIPESHARD_EXECUTABLE_H_
