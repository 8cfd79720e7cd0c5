// The executable Parallelize (parallelize.h) returns: the partitioned program of a training step
// and the in-process devices (one thread each, real collectives) or MPI ranks that run it.
//
//   ParallelExecutable exe = Parallelize({module, parameters}, cluster, {.method = kData}).value();
//   std::vector<ir::Literal> results = exe.Run(arguments).value();  // the unsplit step's results
//   exe.peak_memory_bytes();  // the largest per-device peak measured so far
//
// Run takes and returns whole (global) values: it splits each argument into the devices' tiles
// in the layout the plan chose for it and assembles each result from the devices' tiles, so a
// caller threads values from one step to the next exactly as with the reference interpreter.
// The updated values come back in the layouts their parameters are read in (the plan prices that
// resharding), so the next step's split is the same as this one's. A training loop keeps them on
// the devices instead, split once and fetched whole only when asked:
//
//   DeviceState state = exe.Place(carried).value();         // weights, optimizer state, t
//   for (...) loss = exe.Step(state, {batch}).value()[0];    // the batch in, the loss out
//   std::vector<ir::Literal> now = exe.Fetch(state).value(); // whole again
//
// The devices' threads start with the first run and serve every later one
// (runtime/device_threads.h).
#ifndef ALPA_API_PARALLEL_EXECUTABLE_H_
#define ALPA_API_PARALLEL_EXECUTABLE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/communicator.h"
#include "runtime/device_executor.h"
#include "runtime/device_threads.h"
#include "runtime/instruction_list.h"
#include "sharding/auto_sharding.h"
#include "sharding/sharding_spec.h"
#include "spmd/collective_stats.h"
#include "support/status.h"

namespace alpa::api {

struct TrainStep;           // parallelize.h
struct ParallelizeOptions;  // parallelize.h

// The values a step carries to the next, kept on the devices between steps: each carried
// parameter's tiles (ParallelExecutable::carried_parameters), every device's in the layout the
// plan reads it in. In one process it holds every device's tiles; under MPI, its own device's.
// A failed Step leaves it empty (its tiles were handed to the devices): Place the values again.
class DeviceState {
 public:
  bool empty() const { return tiles_.empty(); }
  // The mesh device tiles()[0] belongs to, and the tiles: by device held, then carried parameter.
  int64_t first_device() const { return first_device_; }
  const std::vector<std::vector<ir::Literal>>& tiles() const { return tiles_; }

 private:
  friend class ParallelExecutable;
  int64_t first_device_ = 0;                     // the mesh device tiles_[0] belongs to
  std::vector<std::vector<ir::Literal>> tiles_;  // by device held, then carried parameter
};

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

  // The parameters a step carries to the next (ascending): those a root element replaces in the
  // next step (TrainStep::parameters' next values). The others are the fresh arguments: the batch.
  const std::vector<int64_t>& carried_parameters() const { return carried_parameters_; }
  // The root element replacing each carried parameter; the other parameters (ascending) and the
  // root elements that replace none (what Step returns, in root order).
  const std::vector<int64_t>& carried_leaves() const { return carried_leaves_; }
  const std::vector<int64_t>& fresh_parameters() const { return fresh_parameters_; }
  const std::vector<int64_t>& fresh_leaves() const { return fresh_leaves_; }

  // The devices' tiles of the carried parameters' whole values (in carried_parameters() order),
  // split once. With a communicator (MPI), only its rank's device's tiles.
  Result<DeviceState> Place(const std::vector<ir::Literal>& carried,
                            runtime::Communicator* communicator = nullptr) const;
  // The carried values' tiles as given (by device held, then carried parameter), checked against
  // the program's local shapes: a state restored from a checkpoint (api/checkpointing.h). With a
  // communicator, its rank's device's alone.
  Result<DeviceState> Adopt(std::vector<std::vector<ir::Literal>> tiles,
                            runtime::Communicator* communicator = nullptr) const;
  // Runs one step on the carried values in `state` and the whole `fresh` arguments (the other
  // parameters, in order): each carried parameter's tiles are replaced by its next value's,
  // which stay on the devices. Returns the root elements that replace no parameter (the loss),
  // whole, in root order. With a communicator, as RunAsDevice, on a state Placed with it. Errors
  // as Run's.
  Result<std::vector<ir::Literal>> Step(
      DeviceState& state, const std::vector<ir::Literal>& fresh,
      runtime::Communicator* communicator = nullptr,
      std::optional<std::chrono::steady_clock::time_point> trace_epoch = std::nullopt);
  // The carried values, whole, assembled from the devices' tiles; under MPI all-gathered, so
  // every process must call it.
  Result<std::vector<ir::Literal>> Fetch(const DeviceState& state,
                                         runtime::Communicator* communicator = nullptr) const;

  // Each carried parameter (carried_parameters() order): its name, whole shape and layout.
  struct CarriedValue {
    std::string name;
    ir::Shape shape;
    sharding::ShardingSpec spec;
  };
  std::vector<CarriedValue> carried_values() const;

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
  // The plan's instructions pinned (by the caller, the module or the method), and the mesh
  // shapes planned to find it.
  int64_t pinned_instructions() const { return pinned_instructions_; }
  int64_t meshes_tried() const { return meshes_tried_; }
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
  // The mesh devices this process runs: every one in-process, its rank's alone under MPI.
  struct HeldDevices {
    int64_t first = 0;
    int64_t count = 0;
  };
  HeldDevices Held(const runtime::Communicator* communicator) const;
  // Each device's tiles of `values`, whole values of `parameters` (by device, then value): of
  // every device, or with a communicator of its rank's alone.
  Result<std::vector<std::vector<ir::Literal>>> Split(const std::vector<ir::Literal>& values,
                                                      const std::vector<int64_t>& parameters,
                                                      runtime::Communicator* communicator) const;
  // The whole values of result `leaves` from `tiles` (by device held, then leaf): every device's,
  // or under MPI this process's, all-gathered from every process first.
  Result<std::vector<ir::Literal>> Assemble(std::vector<std::vector<ir::Literal>> tiles,
                                            const std::vector<int64_t>& leaves,
                                            runtime::Communicator* communicator) const;
  // Runs the program on the devices this process holds (all in-process, or its rank's under MPI)
  // with `arguments` (by device held, then parameter); returns the outputs likewise and records
  // the run (every device's profile, all-gathered under MPI).
  Result<std::vector<std::vector<ir::Literal>>> Execute(
      std::vector<std::vector<ir::Literal>> arguments, runtime::Communicator* communicator,
      std::optional<std::chrono::steady_clock::time_point> trace_epoch);
  // Execute's MPI part: runs this process's device (`arguments` its tiles).
  Result<std::vector<std::vector<ir::Literal>>> ExecuteAsDevice(
      std::vector<ir::Literal> arguments, runtime::Communicator& communicator,
      const runtime::ExecuteOptions& execute,
      std::optional<std::chrono::steady_clock::time_point> trace_epoch);
  // Ok when `state` holds the devices of this process (all, or under MPI its rank's).
  Status CheckHeld(const DeviceState& state, runtime::Communicator* communicator) const;
  // Run and RunAsDevice: every argument split, every result leaf assembled, in root order.
  Result<std::vector<ir::Literal>> RunWhole(
      const std::vector<ir::Literal>& arguments, runtime::Communicator* communicator,
      std::optional<std::chrono::steady_clock::time_point> trace_epoch);
  // Sets the carried and fresh parameters and leaves from each parameter's next-value leaf.
  void FindCarriedValues(const std::map<std::string, int64_t>& next_leaves);
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
  std::vector<int64_t> carried_parameters_;  // ascending
  std::vector<int64_t> carried_leaves_;      // the root element replacing each
  std::vector<int64_t> fresh_parameters_;    // the others, ascending
  std::vector<int64_t> fresh_leaves_;        // the root elements replacing none
  std::vector<std::string> passed_over_;
  double compile_time_s_ = 0;
  int64_t pinned_instructions_ = 0;
  int64_t meshes_tried_ = 0;
  std::vector<runtime::ExecutionProfile> last_run_;
  int64_t peak_memory_bytes_ = 0;
};

}  // namespace alpa::api

#endif  // ALPA_API_PARALLEL_EXECUTABLE_H_
