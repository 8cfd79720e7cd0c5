#include "api/parallelize.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <unordered_map>
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

// The mesh shapes to plan on, each checked against the cluster and the batch axis.
Result<std::vector<std::vector<int64_t>>> MeshShapes(int64_t devices,
                                                     const ParallelizeOptions& options,
                                                     int64_t batch_axis) {
  if (options.mesh_shape.empty()) {
    std::vector<std::vector<int64_t>> shapes = options.method == ParallelMethod::kShard
                                                   ? CandidateMeshShapes(devices)
                                                   : std::vector<std::vector<int64_t>>{{devices}};
    // A forced batch axis only applies to the shapes that have it.
    std::erase_if(shapes, [batch_axis](const std::vector<int64_t>& shape) {
      return batch_axis >= static_cast<int64_t>(shape.size());
    });
    if (shapes.empty()) {
      return InvalidArgument("no mesh shape of {} devices has a batch axis {}", devices,
                             batch_axis);
    }
    return shapes;
  }
  const std::string mesh = cluster::ShapeString(options.mesh_shape);
  if (options.method != ParallelMethod::kShard &&
      options.mesh_shape != std::vector<int64_t>{devices}) {
    return InvalidArgument(
        "mesh {}: method {} runs on the 1-D mesh of all {} devices (the batch split over every "
        "device); leave the mesh out, or use method shard for other meshes",
        mesh, sharding::ParallelMethodName(options.method), devices);
  }
  if (batch_axis >= static_cast<int64_t>(options.mesh_shape.size())) {
    return InvalidArgument("batch axis {}: the mesh {} has axes 0 to {}", batch_axis, mesh,
                           options.mesh_shape.size() - 1);
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

Result<PlannedMeshes> PlanMeshes(const TrainStep& step, const cluster::ClusterSpec& cluster,
                                 const ParallelizeOptions& options, const MeshPins& mesh_pins) {
  const cluster::PhysicalMesh devices = cluster::WholeClusterMesh(cluster);
  // The data-parallel methods split the batch along axis 0 unless told another.
  const int64_t batch_axis = options.method == ParallelMethod::kShard
                                 ? options.batch_axis
                                 : std::max<int64_t>(options.batch_axis, 0);
  ALPA_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> shapes,
                        MeshShapes(devices.size(), options, batch_axis));
  sharding::AutoShardingOptions base = options.auto_sharding;
  base.force_batch_axis = batch_axis;
  base.next_values = NextValues(step);
  for (const sharding::MethodParameter& parameter : step.parameters) {
    if (parameter.role == cost::ParameterRole::kBatch) {
      base.batch_parameters.push_back(parameter.name);
    }
  }
  // Each shape's pins, in precedence order: the caller's, `mesh_pins`', the method's.
  auto pins_for = [&](const std::vector<int64_t>& shape) -> Result<sharding::Pins> {
    sharding::Pins pins = options.auto_sharding.pinned_outputs;
    if (mesh_pins) {
      ALPA_ASSIGN_OR_RETURN(sharding::Pins given, mesh_pins(shape));
      sharding::MergePins(pins, given);
    }
    ALPA_ASSIGN_OR_RETURN(sharding::Pins rules,
                          sharding::MethodPins(options.method, shape, step.parameters));
    sharding::MergePins(pins, rules);
    return pins;
  };
  std::vector<cluster::LogicalMesh> meshes;
  std::vector<sharding::AutoShardingOptions> mesh_options;
  Status last_error;
  for (const std::vector<int64_t>& shape : shapes) {
    ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh mesh,
                          cluster::MakeLogicalMesh(cluster, devices, shape));
    Result<sharding::Pins> pins = pins_for(shape);
    if (!pins.ok()) {
      if (shapes.size() == 1) return pins.status();
      last_error = pins.status().WithContext("mesh " + cluster::ShapeString(shape));
      continue;
    }
    meshes.push_back(std::move(mesh));
    mesh_options.push_back(base);
    mesh_options.back().pinned_outputs = std::move(pins).value();
  }
  std::vector<Result<sharding::ShardingSolution>> solutions =
      sharding::AutoShardMeshes(*step.module->entry(), cluster, meshes, mesh_options);
  PlannedMeshes planned;
  planned.shapes_tried = static_cast<int64_t>(shapes.size());
  for (size_t m = 0; m < meshes.size(); ++m) {
    if (!solutions[m].ok()) {
      if (shapes.size() == 1 || solutions[m].status().code() != StatusCode::kResourceExhausted) {
        return solutions[m].status();
      }
      last_error = solutions[m].status();
      continue;
    }
    planned.fastest_first.push_back(
        PlannedMesh{meshes[m].shape, std::move(solutions[m]).value(),
                    static_cast<int64_t>(mesh_options[m].pinned_outputs.size())});
  }
  if (planned.fastest_first.empty()) return last_error;
  std::stable_sort(planned.fastest_first.begin(), planned.fastest_first.end(),
                   [](const PlannedMesh& a, const PlannedMesh& b) {
                     return a.solution.estimate.step_seconds() < b.solution.estimate.step_seconds();
                   });
  return planned;
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
  if (threads_ == nullptr) threads_ = std::make_shared<runtime::DeviceThreads>(device_count());
  run_options.threads = threads_.get();
  ALPA_ASSIGN_OR_RETURN(
      runtime::SpmdRun run,
      runtime::RunSpmdProgram(*instructions_, std::move(per_device), run_options));
  RecordRun(std::move(run.profiles));
  return AssembleResults(std::move(run.outputs));
}

Status ParallelExecutable::CheckProcessCount(int64_t processes) const {
  if (processes == device_count()) return Status::Ok();
  return InvalidArgument(
      "the plan's mesh {} has {} devices but mpirun started {} processes; run mpirun -np {}",
      cluster::ShapeString(mesh_shape_), device_count(), processes, device_count());
}

Result<std::vector<std::vector<runtime::ExecutionEvent>>> ParallelExecutable::GatherEvents(
    runtime::Communicator& communicator, const std::vector<runtime::ExecutionEvent>& events,
    std::chrono::steady_clock::time_point epoch) const {
  // Each event as (step index, start, duration) in nanoseconds, the start on the host's monotonic
  // clock; every device runs the same list, so the counts are equal unless a step failed.
  const std::vector<runtime::InstructionStep>& list = instructions_->steps;
  std::unordered_map<const ir::Instruction*, int64_t> step_of;
  for (size_t i = 0; i < list.size(); ++i) step_of[list[i].instruction] = static_cast<int64_t>(i);
  const auto nanoseconds = [](double seconds) { return static_cast<int64_t>(seconds * 1e9); };
  const int64_t epoch_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(epoch.time_since_epoch()).count();
  std::vector<int64_t> own;
  for (const runtime::ExecutionEvent& event : events) {
    own.insert(own.end(), {step_of.at(event.instruction), epoch_ns + nanoseconds(event.start_s),
                           nanoseconds(event.duration_s)});
  }
  const int64_t devices = device_count();
  std::vector<int64_t> everyone(static_cast<size_t>(devices));
  std::iota(everyone.begin(), everyone.end(), 0);
  const std::vector<int64_t> count = {static_cast<int64_t>(own.size())};
  std::vector<int64_t> counts(static_cast<size_t>(devices));
  ALPA_RETURN_IF_ERROR(communicator.AllGather(everyone, runtime::ViewOf(ir::DType::kS64, count),
                                              runtime::ViewOf(ir::DType::kS64, counts)));
  if (std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) != counts.end()) {
    return Internal("the devices recorded different numbers of events ({})",
                    fmt::join(counts, ", "));
  }
  std::vector<int64_t> all(own.size() * static_cast<size_t>(devices));
  ALPA_RETURN_IF_ERROR(communicator.AllGather(everyone, runtime::ViewOf(ir::DType::kS64, own),
                                              runtime::ViewOf(ir::DType::kS64, all)));
  std::vector<std::vector<runtime::ExecutionEvent>> gathered(static_cast<size_t>(devices));
  for (size_t d = 0; d < gathered.size(); ++d) {
    for (size_t e = 0; e < own.size(); e += 3) {
      const int64_t* event = &all[d * own.size() + e];
      const runtime::InstructionStep& step = list[static_cast<size_t>(event[0])];
      gathered[d].push_back({step.instruction, step.collective,
                             static_cast<double>(event[1] - epoch_ns) * 1e-9,
                             static_cast<double>(event[2]) * 1e-9});
    }
  }
  return gathered;
}

Result<std::vector<ir::Literal>> ParallelExecutable::RunAsDevice(
    runtime::Communicator& communicator, const std::vector<ir::Literal>& arguments,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  const int64_t devices = device_count();
  ALPA_RETURN_IF_ERROR(CheckProcessCount(communicator.world_size()));
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
  execute.trace = trace_epoch.has_value();
  if (trace_epoch) execute.epoch = *trace_epoch;
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
  if (trace_epoch) {
    ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<runtime::ExecutionEvent>> events,
                          GatherEvents(communicator, profile.events, *trace_epoch));
    for (size_t d = 0; d < profiles.size(); ++d) profiles[d].events = std::move(events[d]);
  }
  RecordRun(std::move(profiles));
  return AssembleResults(std::move(outputs));
}

Result<ParallelExecutable> Parallelize(const TrainStep& step, const cluster::ClusterSpec& cluster,
                                       const ParallelizeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ir::Computation& entry = *step.module->entry();
  ALPA_ASSIGN_OR_RETURN(PlannedMeshes planned_meshes, PlanMeshes(step, cluster, options));
  std::vector<PlannedMesh>& candidates = planned_meshes.fastest_first;
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
    ALPA_ASSIGN_OR_RETURN(
        runtime::InstructionList instructions,
        runtime::CompileInstructionList(
            *executable.program_, options.reference_kernels ? runtime::KernelChoice::kReference
                                                            : runtime::KernelChoice::kFast));
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
