#include "api/parallelize.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include "cluster/mesh.h"
#include "plan/layer_costs.h"
#include "runtime/spmd_executor.h"
#include "sharding/pins.h"
#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"
#include "spmd/partitioner.h"

namespace alpa::api {
namespace {

using sharding::ParallelMethod;

// The mesh shapes to plan on, each checked against the cluster.
Result<std::vector<std::vector<int64_t>>> MeshShapes(int64_t devices,
                                                     const ParallelizeOptions& options) {
  if (options.mesh_shape.empty()) {
    return options.method == ParallelMethod::kShard ? CandidateMeshShapes(devices)
                                                    : std::vector<std::vector<int64_t>>{{devices}};
  }
  if (options.method != ParallelMethod::kShard &&
      options.mesh_shape != std::vector<int64_t>{devices}) {
    return InvalidArgument(
        "mesh {}: method {} runs on the 1-D mesh of all {} devices (the batch split over every "
        "device); use method shard for other meshes",
        cluster::ShapeString(options.mesh_shape), sharding::ParallelMethodName(options.method),
        devices);
  }
  return std::vector<std::vector<int64_t>>{options.mesh_shape};
}

// Parameter name -> the instruction computing the value the next step reads in its place.
std::map<std::string, std::string> NextValues(const TrainStep& step) {
  std::map<std::string, std::string> next_values;
  for (const sharding::MethodParameter& parameter : step.parameters) {
    if (!parameter.next_value.empty()) next_values[parameter.name] = parameter.next_value;
  }
  return next_values;
}

struct PlannedMesh {
  std::vector<int64_t> shape;
  sharding::ShardingSolution solution;
};

// AutoShard on every shape under the method's pins, fastest estimate first. A shape the user did
// not ask for may fail (out of memory, a pin it cannot express) where another fits.
Result<std::vector<PlannedMesh>> PlanMeshes(const TrainStep& step,
                                            const cluster::ClusterSpec& cluster,
                                            const ParallelizeOptions& options) {
  const cluster::PhysicalMesh devices = cluster::WholeClusterMesh(cluster);
  ALPA_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> shapes,
                        MeshShapes(devices.size(), options));
  const int64_t batch_axis = options.method == ParallelMethod::kShard ? options.batch_axis : 0;
  sharding::AutoShardingOptions base = options.auto_sharding;
  base.force_batch_axis = batch_axis;
  base.next_values = NextValues(step);
  for (const sharding::MethodParameter& parameter : step.parameters) {
    if (parameter.role == cost::ParameterRole::kBatch) {
      base.batch_parameters.push_back(parameter.name);
    }
  }
  std::vector<cluster::LogicalMesh> meshes;
  std::vector<sharding::AutoShardingOptions> mesh_options;
  Status last_error = InvalidArgument("no mesh shape of {} devices has a batch axis {}",
                                      devices.size(), batch_axis);
  for (const std::vector<int64_t>& shape : shapes) {
    if (batch_axis >= static_cast<int64_t>(shape.size())) continue;
    ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh mesh,
                          cluster::MakeLogicalMesh(cluster, devices, shape));
    Result<sharding::Pins> pins = sharding::MethodPins(options.method, shape, step.parameters);
    if (!pins.ok()) {
      if (shapes.size() == 1) return pins.status();
      last_error = pins.status().WithContext("mesh " + cluster::ShapeString(shape));
      continue;
    }
    meshes.push_back(std::move(mesh));
    mesh_options.push_back(base);
    // The caller's pins first, then the method's for what they leave free.
    sharding::MergePins(mesh_options.back().pinned_outputs, *pins);
  }
  std::vector<Result<sharding::ShardingSolution>> solutions =
      sharding::AutoShardMeshes(*step.module->entry(), cluster, meshes, mesh_options);
  std::vector<PlannedMesh> planned;
  for (size_t m = 0; m < meshes.size(); ++m) {
    if (!solutions[m].ok()) {
      if (shapes.size() == 1 || solutions[m].status().code() != StatusCode::kResourceExhausted) {
        return solutions[m].status();
      }
      last_error = solutions[m].status();
      continue;
    }
    planned.push_back(PlannedMesh{meshes[m].shape, std::move(solutions[m]).value()});
  }
  if (planned.empty()) return last_error;
  std::stable_sort(planned.begin(), planned.end(), [](const PlannedMesh& a, const PlannedMesh& b) {
    return a.solution.estimate.step_seconds() < b.solution.estimate.step_seconds();
  });
  return planned;
}

}  // namespace

Result<TrainStep> DescribeTrainStep(const ir::Module& step,
                                    const std::vector<autodiff::StepParameter>& layout) {
  std::vector<cost::ParameterRole> roles;
  for (autodiff::StepParameter kind : layout) roles.push_back(plan::RoleOfStepParameter(kind));
  ALPA_ASSIGN_OR_RETURN(
      std::vector<sharding::MethodParameter> parameters,
      sharding::StepParameters(*step.entry(), roles, autodiff::StepNextValueElements(layout)));
  return TrainStep{&step, std::move(parameters)};
}

std::vector<std::vector<int64_t>> CandidateMeshShapes(int64_t devices) {
  std::vector<std::vector<int64_t>> shapes = {{devices}};
  for (int64_t a = 2; a < devices; ++a) {
    if (devices % a == 0) shapes.push_back({a, devices / a});
  }
  return shapes;
}

int64_t ParallelExecutable::device_count() const { return spmd::DeviceCount(mesh_shape_); }

Result<std::vector<std::vector<ir::Literal>>> ParallelExecutable::SplitArguments(
    const std::vector<ir::Literal>& arguments) const {
  const ir::Computation& entry = *step_->entry();
  if (arguments.size() != static_cast<size_t>(entry.parameter_count())) {
    return InvalidArgument("%{} takes {} arguments, not {}", entry.name(), entry.parameter_count(),
                           arguments.size());
  }
  const auto devices = static_cast<size_t>(device_count());
  std::vector<std::vector<ir::Literal>> per_device(devices);
  for (size_t p = 0; p < arguments.size(); ++p) {
    Result<std::vector<ir::Literal>> tiles =
        spmd::SplitLiteral(arguments[p], parameter_specs_[p], mesh_shape_);
    if (!tiles.ok()) {
      return tiles.status().WithContext(
          fmt::format("argument {} (%{})", p, entry.parameters()[p]->name()));
    }
    for (size_t d = 0; d < devices; ++d) per_device[d].push_back(std::move((*tiles)[d]));
  }
  return per_device;
}

Result<std::vector<ir::Literal>> ParallelExecutable::AssembleResults(
    std::vector<std::vector<ir::Literal>> outputs) const {
  const ir::Shape& root = step_->entry()->root()->shape();
  std::vector<ir::Literal> results;
  for (size_t leaf = 0; leaf < result_specs_.size(); ++leaf) {
    std::vector<ir::Literal> tiles;
    for (std::vector<ir::Literal>& device : outputs) tiles.push_back(std::move(device[leaf]));
    const ir::Shape& shape = root.IsTuple() ? root.tuple_shapes()[leaf] : root;
    Result<ir::Literal> whole =
        spmd::AssembleLiteral(tiles, result_specs_[leaf], mesh_shape_, shape);
    if (!whole.ok()) return whole.status().WithContext(fmt::format("result element {}", leaf));
    results.push_back(std::move(whole).value());
  }
  return results;
}

void ParallelExecutable::RecordRun(std::vector<runtime::ExecutionProfile> profiles) {
  last_run_ = std::move(profiles);
  for (const runtime::ExecutionProfile& profile : last_run_) {
    peak_memory_bytes_ = std::max(peak_memory_bytes_, profile.peak_bytes);
  }
}

Result<std::vector<ir::Literal>> ParallelExecutable::Run(
    const std::vector<ir::Literal>& arguments,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<ir::Literal>> per_device,
                        SplitArguments(arguments));
  runtime::SpmdRunOptions run_options;
  run_options.execute.memory_limit_bytes = solution_.memory_budget_bytes;
  run_options.execute.trace = trace_epoch.has_value();
  if (trace_epoch) run_options.execute.epoch = *trace_epoch;
  ALPA_ASSIGN_OR_RETURN(
      runtime::SpmdRun run,
      runtime::RunSpmdProgram(*instructions_, std::move(per_device), run_options));
  RecordRun(std::move(run.profiles));
  return AssembleResults(std::move(run.outputs));
}

Result<std::vector<ir::Literal>> ParallelExecutable::RunAsDevice(
    runtime::Communicator& communicator, const std::vector<ir::Literal>& arguments) {
  const int64_t devices = device_count();
  if (communicator.world_size() != devices) {
    return InvalidArgument(
        "the plan's mesh {} has {} devices but {} processes were started; start {} (mpirun -np "
        "{})",
        cluster::ShapeString(mesh_shape_), devices, communicator.world_size(), devices, devices);
  }
  const int64_t rank = communicator.rank();
  ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<ir::Literal>> per_device,
                        SplitArguments(arguments));
  runtime::CommunicatorCollectives collectives(communicator);
  interp::DeviceContext context;
  context.partition_id = rank;
  context.num_partitions = devices;
  context.collectives = &collectives;
  runtime::ExecuteOptions execute;
  execute.memory_limit_bytes = solution_.memory_budget_bytes;
  runtime::ExecutionProfile profile;
  Result<ir::Literal> root = runtime::ExecuteInstructionList(
      *instructions_, std::move(per_device[static_cast<size_t>(rank)]), context, execute, &profile);
  if (!root.ok()) return root.status().WithContext(fmt::format("device {}", rank));
  std::vector<ir::Literal> mine;
  if (root->shape().IsTuple()) {
    mine = std::move(root->tuple_elements());
  } else {
    mine.push_back(std::move(root).value());
  }
  // Every process assembles the whole results: each leaf's tiles (equal in size, the splits being
  // even) and each device's peak are all-gathered over every device.
  std::vector<int64_t> everyone(static_cast<size_t>(devices));
  std::iota(everyone.begin(), everyone.end(), 0);
  std::vector<std::vector<ir::Literal>> outputs(static_cast<size_t>(devices));
  for (ir::Literal& tile : mine) {
    std::vector<std::byte> gathered(static_cast<size_t>(tile.size_bytes() * devices));
    ALPA_RETURN_IF_ERROR(communicator.AllGather(
        everyone, {ir::DType::kU8, tile.data(), tile.size_bytes()},
        {ir::DType::kU8, gathered.data(), static_cast<int64_t>(gathered.size())}));
    for (int64_t d = 0; d < devices; ++d) {
      ir::Literal copy = ir::Literal::CreateZeros(tile.shape());
      std::memcpy(copy.data(), gathered.data() + d * tile.size_bytes(),
                  static_cast<size_t>(tile.size_bytes()));
      outputs[static_cast<size_t>(d)].push_back(std::move(copy));
    }
  }
  // Each device's peak: its bytes, the step that reached it (-1: the arguments), its arguments.
  const std::vector<runtime::InstructionStep>& list = instructions_->steps;
  const auto peak_step = std::find_if(list.begin(), list.end(), [&](const auto& step) {
    return step.instruction == profile.peak_instruction;
  });
  const std::vector<int64_t> own = {profile.peak_bytes,
                                    peak_step == list.end() ? -1 : peak_step - list.begin(),
                                    profile.argument_bytes};
  std::vector<int64_t> peaks(own.size() * static_cast<size_t>(devices));
  ALPA_RETURN_IF_ERROR(communicator.AllGather(everyone, runtime::ViewOf(ir::DType::kS64, own),
                                              runtime::ViewOf(ir::DType::kS64, peaks)));
  std::vector<runtime::ExecutionProfile> profiles(static_cast<size_t>(devices));
  for (size_t d = 0; d < profiles.size(); ++d) {
    profiles[d].peak_bytes = peaks[3 * d];
    const int64_t step = peaks[3 * d + 1];
    profiles[d].peak_instruction = step < 0 ? nullptr : list[static_cast<size_t>(step)].instruction;
    profiles[d].argument_bytes = peaks[3 * d + 2];
  }
  RecordRun(std::move(profiles));
  return AssembleResults(std::move(outputs));
}

Result<ParallelExecutable> Parallelize(const TrainStep& step, const cluster::ClusterSpec& cluster,
                                       const ParallelizeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ir::Computation& entry = *step.module->entry();
  ALPA_ASSIGN_OR_RETURN(std::vector<PlannedMesh> candidates, PlanMeshes(step, cluster, options));
  // The fastest plan the partitioner can lower: a resharding it cannot emit yet (named in the
  // error) moves on to the next mesh shape, and the executable says which it passed over.
  std::vector<std::string> passed_over;
  Status first_error;
  for (PlannedMesh& planned : candidates) {
    spmd::PartitionOptions partition;
    ALPA_ASSIGN_OR_RETURN(partition.result_specs,
                          spmd::NextValueResultSpecs(entry, planned.solution, NextValues(step)));
    Result<std::unique_ptr<ir::Module>> program =
        spmd::PartitionComputation(entry, planned.solution, planned.shape, partition);
    if (!program.ok()) {
      if (program.status().code() != StatusCode::kUnimplemented) return program.status();
      if (first_error.ok()) first_error = program.status();
      passed_over.push_back(fmt::format("mesh {}: {}", cluster::ShapeString(planned.shape),
                                        program.status().message()));
      continue;
    }
    ParallelExecutable executable;
    executable.step_ = step.module;
    executable.comm_stats_ = spmd::CountCollectives(*(*program)->entry());
    executable.program_ = std::move(program).value();
    ALPA_ASSIGN_OR_RETURN(runtime::InstructionList instructions,
                          runtime::CompileInstructionList(*executable.program_));
    executable.instructions_ =
        std::make_shared<const runtime::InstructionList>(std::move(instructions));
    for (const ir::Instruction* parameter : entry.parameters()) {
      executable.parameter_specs_.push_back(
          planned.solution.Chosen(planned.solution.graph.NodeOf(*parameter)).output[0]);
    }
    executable.result_specs_ = spmd::ResultSpecs(entry, planned.solution, partition);
    executable.mesh_shape_ = std::move(planned.shape);
    executable.solution_ = std::move(planned.solution);
    executable.passed_over_ = std::move(passed_over);
    executable.compile_time_s_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return executable;
  }
  return first_error;
}

}  // namespace alpa::api
