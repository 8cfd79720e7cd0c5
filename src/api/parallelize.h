// The C++ entry point that matches `alpa run`: Parallelize(train_step, cluster, options) plans a
// training step on a mesh of the cluster's devices with a parallel method (auto-sharding under
// the method's pins), partitions it into the program every device runs (spmd/partitioner.h) and
// returns an executable that runs it on in-process devices (one thread each, real collectives).
//
//   ParallelExecutable exe = Parallelize({module, parameters}, cluster, {.method = kData}).value();
//   std::vector<ir::Literal> results = exe.Run(arguments).value();  // the unsplit step's results
//   exe.peak_memory_bytes();  // the largest per-device peak measured so far
//
// Run takes and returns whole (global) values: it splits each argument into the devices' tiles
// in the layout the plan chose for it and assembles each result from the devices' tiles, so a
// caller threads values from one step to the next exactly as with the reference interpreter.
// The updated values come back in the layouts their parameters are read in (the plan prices that
// resharding), so the next step's split is the same as this one's. The devices' threads start
// with the first Run and serve every later one (runtime/device_threads.h).
#ifndef ALPA_API_PARALLELIZE_H_
#define ALPA_API_PARALLELIZE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autodiff/train_step.h"
#include "cluster/cluster_spec.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/communicator.h"
#include "runtime/device_executor.h"
#include "runtime/device_threads.h"
#include "runtime/instruction_list.h"
#include "sharding/auto_sharding.h"
#include "sharding/parallel_methods.h"
#include "sharding/pins.h"
#include "sharding/sharding_spec.h"
#include "spmd/collective_stats.h"
#include "support/status.h"

namespace alpa::api {

// A training step and what each of its entry parameters is (batch, weight, optimizer state) with
// the result that replaces it in the next step (sharding::StepParameters). A module without roles
// (an HLO file) has no parameters listed; only kShard plans it.
struct TrainStep {
  const ir::Module* module = nullptr;
  std::vector<sharding::MethodParameter> parameters;
};

// A step built by autodiff::BuildTrainStep, whose parameters are laid out as `layout`
// (autodiff::StepParameterLayout): step(W..., state..., t, B...) -> (loss, W'..., state'..., t+1).
Result<TrainStep> DescribeTrainStep(const ir::Module& step,
                                    const std::vector<autodiff::StepParameter>& layout);

struct ParallelizeOptions {
  sharding::ParallelMethod method = sharding::ParallelMethod::kShard;
  // Empty: for kShard the best of CandidateMeshShapes(devices) by estimated step time; for the
  // other methods the 1-D mesh of every device.
  std::vector<int64_t> mesh_shape;
  // The mesh axis the batch parameters are split along (Alpa's force_batch_dim_to_mesh_dim);
  // -1 leaves it to the solver. The data-parallel methods always split the batch along axis 0.
  int64_t batch_axis = -1;
  // Solver settings, memory budget, and pins (layouts or strategies by instruction), which take
  // precedence over the method's.
  sharding::AutoShardingOptions auto_sharding;
  // Run every device's instructions through the reference interpreter's handlers instead of the
  // fast kernels (runtime/fast_kernels.h): slower, for comparing the two.
  bool reference_kernels = false;
};

// (N), then (a, N/a) for every divisor 1 < a < N: the logical shapes Alpa's intra-op pass tries.
std::vector<std::vector<int64_t>> CandidateMeshShapes(int64_t devices);

// One mesh shape's plan.
struct PlannedMesh {
  std::vector<int64_t> shape;
  sharding::ShardingSolution solution;
  int64_t pins = 0;  // instructions pinned on it
};

struct PlannedMeshes {
  std::vector<PlannedMesh> fastest_first;  // by estimated step time; shape order on ties
  int64_t shapes_tried = 0;
};

// Pins of one mesh shape that rank after the caller's (AutoShardingOptions::pinned_outputs) and
// before the method's: sharding text expressible on some shapes only (a user's shardings file,
// an HLO file's annotations). An error drops the shape, unless it is the only one.
using MeshPins = std::function<Result<sharding::Pins>(const std::vector<int64_t>& shape)>;

// Auto-shards `step` on every mesh shape `options` allows (its mesh_shape, or CandidateMeshShapes
// for kShard, or the 1-D mesh of every device, keeping the shapes that have the batch axis),
// all in parallel. A shape the caller did not ask for may fail (out of memory, a pin it cannot
// express) where another fits; with one shape, its error is the error. `alpa plan` and
// Parallelize both search this way.
Result<PlannedMeshes> PlanMeshes(const TrainStep& step, const cluster::ClusterSpec& cluster,
                                 const ParallelizeOptions& options, const MeshPins& mesh_pins = {});

class ParallelExecutable {
 public:
  // Runs one step on the mesh's devices. `arguments` are the step's whole parameters in order;
  // the result is the root's elements (its value alone when it is not a tuple), whole. Errors
  // name the device and the instruction that failed; a device whose live buffers would exceed
  // the plan's memory budget fails the step as out of memory, naming the buffer. With
  // `trace_epoch`, each device records when it ran each instruction (seconds since the epoch,
  // in last_run()'s events).
  Result<std::vector<ir::Literal>> Run(
      const std::vector<ir::Literal>& arguments,
      std::optional<std::chrono::steady_clock::time_point> trace_epoch = std::nullopt);

  // Runs one step as device communicator.rank() of the mesh, every other device being another
  // process (an MPI rank) making the same call with the same arguments: each process splits the
  // whole arguments, runs its own tile of the program with its collectives over `communicator`,
  // and all-gathers the result tiles, so every process returns the whole results, as Run does.
  // The communicator's world must have the mesh's device count (CheckProcessCount). last_run()
  // has each device's peak, and with `trace_epoch` every device's events, all-gathered too: each
  // process times its events on its host's monotonic clock, shifted to this process's epoch, so
  // the devices of one host share a timeline (those of other hosts are offset by their clocks).
  Result<std::vector<ir::Literal>> RunAsDevice(
      runtime::Communicator& communicator, const std::vector<ir::Literal>& arguments,
      std::optional<std::chrono::steady_clock::time_point> trace_epoch = std::nullopt);
  // Ok when `processes` (one per device) can run this executable; else how many to start.
  Status CheckProcessCount(int64_t processes) const;

  // What each device measured in the last Run (empty before the first): its peak bytes, the
  // instruction that reached it, and the events when traced.
  const std::vector<runtime::ExecutionProfile>& last_run() const { return last_run_; }
  // The largest per-device peak measured over every Run so far (0 before the first). The plan's
  // prediction is estimate().peak_memory_bytes.
  int64_t peak_memory_bytes() const { return peak_memory_bytes_; }

  const std::vector<int64_t>& mesh_shape() const { return mesh_shape_; }
  int64_t device_count() const;
  // The program every device runs (local shapes, partition-id, collectives).
  const ir::Module& program() const { return *program_; }
  const sharding::ShardingSolution& solution() const { return solution_; }
  // The cost model's estimate of one step: time, collectives, per-device peak memory.
  const sharding::ShardingEstimate& estimate() const { return solution_.estimate; }
  // The collectives one step runs, counted in the program (equal to estimate().communication).
  const spmd::CollectiveStats& comm_stats() const { return comm_stats_; }
  // Seconds spent planning and partitioning.
  double compile_time_s() const { return compile_time_s_; }
  // Faster plans (by the estimate) of other mesh shapes the partitioner could not lower yet,
  // each "mesh [a,b]: why"; empty when the fastest plan runs.
  const std::vector<std::string>& passed_over() const { return passed_over_; }
  // The layout of each parameter and of each result element.
  const std::vector<sharding::ShardingSpec>& parameter_specs() const { return parameter_specs_; }
  const std::vector<sharding::ShardingSpec>& result_specs() const { return result_specs_; }

 private:
  friend Result<ParallelExecutable> Parallelize(const TrainStep&, const cluster::ClusterSpec&,
                                                const ParallelizeOptions&);
  ParallelExecutable() = default;
  // Each device's tiles of the whole arguments, by device then parameter.
  Result<std::vector<std::vector<ir::Literal>>> SplitArguments(
      const std::vector<ir::Literal>& arguments) const;
  // The whole results from each device's result leaves (by device then leaf).
  Result<std::vector<ir::Literal>> AssembleResults(
      std::vector<std::vector<ir::Literal>> outputs) const;
  void RecordRun(std::vector<runtime::ExecutionProfile> profiles);
  // Every device's events, each process's own `events` timed from `epoch` (RunAsDevice).
  Result<std::vector<std::vector<runtime::ExecutionEvent>>> GatherEvents(
      runtime::Communicator& communicator, const std::vector<runtime::ExecutionEvent>& events,
      std::chrono::steady_clock::time_point epoch) const;

  const ir::Module* step_ = nullptr;
  std::vector<int64_t> mesh_shape_;
  sharding::ShardingSolution solution_;
  std::shared_ptr<const ir::Module> program_;
  std::shared_ptr<const runtime::InstructionList> instructions_;  // program_'s
  // The in-process devices' threads, started by the first Run and kept for the next ones.
  std::shared_ptr<runtime::DeviceThreads> threads_;
  spmd::CollectiveStats comm_stats_;
  std::vector<sharding::ShardingSpec> parameter_specs_;
  std::vector<sharding::ShardingSpec> result_specs_;
  std::vector<std::string> passed_over_;
  double compile_time_s_ = 0;
  std::vector<runtime::ExecutionProfile> last_run_;
  int64_t peak_memory_bytes_ = 0;
};

// Plans `step` (which must outlive the executable) on the whole cluster and partitions the fastest
// plan the partitioner can lower. Errors: a bad method or mesh for the cluster (named), the
// planner's (a step that fits on no mesh shape says how much memory it needs), an op or a
// resharding the partitioner cannot lower yet on any planned mesh (named).
Result<ParallelExecutable> Parallelize(const TrainStep& step, const cluster::ClusterSpec& cluster,
                                       const ParallelizeOptions& options);

}  // namespace alpa::api

#endif  // ALPA_API_PARALLELIZE_H_
