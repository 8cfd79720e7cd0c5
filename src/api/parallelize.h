// The C++ entry point that matches `alpa run`: Parallelize(train_step, cluster, options) plans a
// training step on a mesh of the cluster's devices with a parallel method (auto-sharding under
// the method's pins), partitions it into the program every device runs (spmd/partitioner.h) and
// returns an executable that runs it on in-process devices (one thread each, real collectives).
//
//   ParallelExecutable exe = Parallelize({module, parameters}, cluster, {.method = kData}).value();
//   std::vector<ir::Literal> results = exe.Run(arguments).value();  // the unsplit step's results
//   exe.peak_memory_bytes();  // the largest per-device peak measured so far
//
// What the executable does with values, whole or kept on the devices between steps, is in
// parallel_executable.h.
#ifndef ALPA_API_PARALLELIZE_H_
#define ALPA_API_PARALLELIZE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/parallel_executable.h"
#include "autodiff/train_step.h"
#include "cluster/cluster_spec.h"
#include "ir/module.h"
#include "sharding/auto_sharding.h"
#include "sharding/parallel_methods.h"
#include "sharding/pins.h"
#include "sharding/sharding_spec.h"
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

// Pins of one mesh shape that rank after the caller's (AutoShardingOptions::pinned_outputs) and
// before the method's: sharding text expressible on some shapes only (a user's shardings file,
// an HLO file's annotations). An error drops the shape, unless it is the only one.
using MeshPins = std::function<Result<sharding::Pins>(const std::vector<int64_t>& shape)>;

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
  // Pins of each mesh shape tried (e.g. sharding::PinsFromHloShardings: the module's own
  // annotations, JAX's with_sharding_constraint among them); empty: none.
  MeshPins mesh_pins;
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

// Auto-shards `step` on every mesh shape `options` allows (its mesh_shape, or CandidateMeshShapes
// for kShard, or the 1-D mesh of every device, keeping the shapes that have the batch axis),
// all in parallel. A shape the caller did not ask for may fail (out of memory, a pin it cannot
// express) where another fits; with one shape, its error is the error. `alpa plan` and
// Parallelize both search this way.
Result<PlannedMeshes> PlanMeshes(const TrainStep& step, const cluster::ClusterSpec& cluster,
                                 const ParallelizeOptions& options);

// Plans `step` (which must outlive the executable) on the whole cluster and partitions the fastest
// plan the partitioner can lower. Errors: a bad method or mesh for the cluster (named), the
// planner's (a step that fits on no mesh shape says how much memory it needs), an op or a
// resharding the partitioner cannot lower yet on any planned mesh (named).
Result<ParallelExecutable> Parallelize(const TrainStep& step, const cluster::ClusterSpec& cluster,
                                       const ParallelizeOptions& options);

}  // namespace alpa::api

#endif  // ALPA_API_PARALLELIZE_H_
