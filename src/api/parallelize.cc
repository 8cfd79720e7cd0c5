#include "api/parallelize.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "cluster/mesh.h"
#include "plan/layer_costs.h"
#include "sharding/pins.h"
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
                                 const ParallelizeOptions& options) {
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
  // Each shape's pins, in precedence order: the caller's, the mesh_pins', the method's.
  auto pins_for = [&](const std::vector<int64_t>& shape) -> Result<sharding::Pins> {
    sharding::Pins pins = options.auto_sharding.pinned_outputs;
    if (options.mesh_pins) {
      ALPA_ASSIGN_OR_RETURN(sharding::Pins given, options.mesh_pins(shape));
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
    Result<std::map<std::string, int64_t>> next_leaves =
        spmd::NextValueLeaves(entry, planned.solution, NextValues(step));
    if (!next_leaves.ok()) return next_leaves.status();
    executable.FindCarriedValues(*next_leaves);
    executable.mesh_shape_ = std::move(planned.shape);
    executable.solution_ = std::move(planned.solution);
    executable.pinned_instructions_ = planned.pins;
    executable.meshes_tried_ = planned_meshes.shapes_tried;
    executable.passed_over_ = std::move(passed_over);
    executable.compile_time_s_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return executable;
  }
  return first_error;
}

}  // namespace alpa::api
