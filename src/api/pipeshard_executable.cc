#include "api/pipeshard_executable.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

#include "api/pipeline_lowering.h"
#include "spmd/literal_split.h"

namespace alpa::api {
namespace {

// Rows [first, first + rows) of `value` along dimension 0 (contiguous in row-major order).
ir::Literal SliceRows(const ir::Literal& value, int64_t first, int64_t rows) {
  std::vector<int64_t> dims = value.shape().dims();
  const int64_t row_bytes = value.size_bytes() / dims[0];
  dims[0] = rows;
  ir::Literal slice =
      ir::Literal::CreateUninitialized(ir::Shape::Array(value.shape().dtype(), dims));
  std::memcpy(slice.data(), value.data() + first * row_bytes,
              static_cast<size_t>(rows * row_bytes));
  return slice;
}

// Stages j and k share devices exactly when j % S == k % S (S device groups); the groups tile
// the devices 0 .. N-1 of the cluster.
Status CheckStageDevices(const plan::PipeshardPlan& plan, int64_t cluster_devices) {
  const int64_t groups = static_cast<int64_t>(plan.stages.size()) / plan.num_chunks;
  std::map<int64_t, int64_t> group_of_device;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const int64_t group = static_cast<int64_t>(s) % groups;
    const std::vector<int64_t>& devices = plan.stages[s].devices;
    if (devices != plan.stages[static_cast<size_t>(group)].devices) {
      return InvalidArgument("stage {} runs on devices {} but shares stage {}'s devices {}", s,
                             devices, group, plan.stages[static_cast<size_t>(group)].devices);
    }
    for (int64_t d : devices) {
      if (d < 0 || d >= cluster_devices) {
        return InvalidArgument("stage {} names device {}; the cluster has devices 0..{}", s, d,
                               cluster_devices - 1);
      }
      auto [it, added] = group_of_device.emplace(d, group);
      if (!added && it->second != group) {
        return InvalidArgument("stages {} and {} overlap on device {}", it->second, s, d);
      }
    }
  }
  if (static_cast<int64_t>(group_of_device.size()) != cluster_devices) {
    return InvalidArgument("the plan's stages use {} of the cluster's {} devices",
                           group_of_device.size(), cluster_devices);
  }
  return Status::Ok();
}

}  // namespace

Result<PipeshardExecutable> ParallelizePipeshard(const PipeshardStep& step,
                                                 const cluster::ClusterSpec& cluster,
                                                 const plan::PipeshardPlan& plan,
                                                 const std::vector<plan::MeshConfig>& configs,
                                                 const PipeshardRunOptions& options) {
  if (step.loss == nullptr || step.loss->entry() == nullptr) {
    return InvalidArgument("ParallelizePipeshard needs a loss module with an entry");
  }
  if (plan.stages.empty() || plan.num_chunks < 1 ||
      plan.stages.size() % static_cast<size_t>(plan.num_chunks) != 0) {
    return InvalidArgument("a pipelined plan needs stages in whole chunks ({} stages, {} chunks)",
                           plan.stages.size(), plan.num_chunks);
  }
  const int64_t micro_batches = step.training.num_micro_batches;
  if (plan.num_micro_batches != micro_batches) {
    return InvalidArgument("the plan is for {} micro-batches, the train step has {}",
                           plan.num_micro_batches, micro_batches);
  }
  ALPA_RETURN_IF_ERROR(CheckStageDevices(plan, cluster::TotalDevices(cluster)));
  const autodiff::UpdateProgram* update = step.training.update.get();
  if (update != nullptr && step.training.update_weights.empty() &&
      update->num_weights != static_cast<int64_t>(step.weights.size())) {
    return InvalidArgument("the update program updates {} weights; the model has {}",
                           update->num_weights, step.weights.size());
  }

  PipeshardExecutable exe;
  exe.step_ = step;
  exe.options_ = options;
  exe.num_chunks_ = plan.num_chunks;
  ALPA_ASSIGN_OR_RETURN(std::vector<StageProgram> stages,
                        BuildStagePrograms(*step.loss, step.weights, step.training, cluster, plan,
                                           configs, options.stages));
  exe.stages_ = std::make_shared<std::vector<StageProgram>>(std::move(stages));
  std::vector<pipeline::StageMemory> memory;
  for (const StageProgram& stage : *exe.stages_) {
    memory.push_back(plan::StageMemoryOf(stage.figures));
  }
  ALPA_ASSIGN_OR_RETURN(
      exe.compiled_memory_,
      pipeline::PipelinePeakMemory(memory, plan.schedule, static_cast<int>(micro_batches),
                                   static_cast<int>(plan.num_chunks)));
  const int64_t groups = static_cast<int64_t>(plan.stages.size()) / plan.num_chunks;
  ALPA_ASSIGN_OR_RETURN(
      exe.schedule_,
      pipeline::MakeSchedule(plan.schedule, static_cast<int>(groups),
                             static_cast<int>(micro_batches), static_cast<int>(plan.num_chunks)));
  exe.state_counts_ = autodiff::StateCounts(*step.loss, step.weights, step.training);
  ALPA_RETURN_IF_ERROR(LowerPipeline(exe));
  for (const runtime::PipelineDevice& device : exe.devices_) {
    exe.slots_.emplace_back(static_cast<size_t>(device.slot_count));
  }
  return exe;
}

int64_t PipeshardExecutable::CarriedCount() const {
  int64_t count = static_cast<int64_t>(step_.weights.size()) + state_counts_.shared;
  for (int64_t states : state_counts_.per_weight) count += states;
  return count;
}

// The model step carries (W..., the states of W_0, of W_1, ..., the shared states: t); a stage's
// step likewise for its own weights, and every shared state.
int64_t PipeshardExecutable::CarriedIndex(const StageProgram& stage, size_t p) const {
  const spmd::StageParameter role = stage.roles.parameters[p];
  if (role == spmd::StageParameter::kSharedState) {
    const auto first = std::find(stage.roles.parameters.begin(), stage.roles.parameters.end(),
                                 spmd::StageParameter::kSharedState);
    const int64_t j = static_cast<int64_t>(p) - (first - stage.roles.parameters.begin());
    return CarriedCount() - state_counts_.shared + j;
  }
  const int64_t stage_weights = static_cast<int64_t>(stage.model_weights.size());
  int64_t i = static_cast<int64_t>(p);  // the stage's weight
  int64_t state = -1;                   // and which of its states, for an optimizer state
  if (role == spmd::StageParameter::kOptimizerState) {
    state = static_cast<int64_t>(p) - stage_weights;
    for (i = 0; state >= stage.states_per_weight[static_cast<size_t>(i)]; ++i) {
      state -= stage.states_per_weight[static_cast<size_t>(i)];
    }
  }
  const int64_t model_weight = stage.model_weights[static_cast<size_t>(i)];
  const int64_t k =
      std::find(step_.weights.begin(), step_.weights.end(), model_weight) - step_.weights.begin();
  if (state < 0) return k;
  int64_t index = static_cast<int64_t>(step_.weights.size()) + state;
  for (int64_t w = 0; w < k; ++w) index += state_counts_.per_weight[static_cast<size_t>(w)];
  return index;
}

std::vector<std::pair<int64_t, sharding::ShardingSpec>> PipeshardExecutable::CarriedPlacement()
    const {
  std::vector<std::pair<int64_t, sharding::ShardingSpec>> placement(
      static_cast<size_t>(CarriedCount()), {-1, sharding::ShardingSpec()});
  for (size_t s = stages_->size(); s-- > 0;) {  // the first stage's placement written last
    const StageProgram& stage = (*stages_)[s];
    for (size_t p = 0; p < stage.roles.parameters.size(); ++p) {
      if (!spmd::IsStateParameter(stage.roles.parameters[p])) continue;
      placement[static_cast<size_t>(CarriedIndex(stage, p))] = {static_cast<int64_t>(s),
                                                                stage.parameter_specs[p]};
    }
  }
  return placement;
}

Status PipeshardExecutable::BindProcess(runtime::Communicator& world, runtime::Mailbox& mailbox) {
  if (world.world_size() != device_count()) {
    return InvalidArgument(
        "the plan has {} devices but mpirun started {} processes; run mpirun -np {}",
        device_count(), world.world_size(), device_count());
  }
  world_ = &world;
  mailbox_ = &mailbox;
  placed_ = false;
  return Status::Ok();
}

Status PipeshardExecutable::Place(const std::vector<ir::Literal>& carried) {
  if (static_cast<int64_t>(carried.size()) != CarriedCount()) {
    return InvalidArgument("Place: {} carried values for a step that carries {}", carried.size(),
                           CarriedCount());
  }
  for (auto& device : slots_) {
    for (ir::Literal& slot : device) slot = ir::Literal();
  }
  for (size_t s = 0; s < stages_->size(); ++s) {
    const StageProgram& stage = (*stages_)[s];
    for (size_t p = 0; p < stage.roles.parameters.size(); ++p) {
      if (!spmd::IsStateParameter(stage.roles.parameters[p])) continue;
      const int64_t index = CarriedIndex(stage, p);
      ALPA_ASSIGN_OR_RETURN(std::vector<ir::Literal> tiles,
                            spmd::SplitLiteral(carried[static_cast<size_t>(index)],
                                               stage.parameter_specs[p], stage.mesh_shape));
      for (size_t position = 0; position < tiles.size(); ++position) {
        const int64_t device = stage.devices[position];
        if (!Holds(device)) continue;
        slots_[static_cast<size_t>(device)][static_cast<size_t>(slots_of_[s][position].state[p])] =
            std::move(tiles[position]);
      }
    }
  }
  placed_ = true;
  return Status::Ok();
}

Result<double> PipeshardExecutable::Step(
    const std::vector<ir::Literal>& batch,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  if (!placed_) return FailedPrecondition("Step before Place (or after a failed step)");
  const ir::Computation& loss = *step_.loss->entry();
  std::vector<int64_t> batch_index(static_cast<size_t>(loss.parameter_count()), -1);
  int64_t batch_count = 0;
  for (int64_t p = 0; p < loss.parameter_count(); ++p) {
    if (std::find(step_.weights.begin(), step_.weights.end(), p) == step_.weights.end()) {
      batch_index[static_cast<size_t>(p)] = batch_count++;
    }
  }
  if (static_cast<int64_t>(batch.size()) != batch_count) {
    return InvalidArgument("Step: {} batch values for a model with {} batch parameters",
                           batch.size(), batch_count);
  }
  const int64_t micro_batches = schedule_.num_micro_batches;
  for (size_t s = 0; s < stages_->size(); ++s) {
    const StageProgram& stage = (*stages_)[s];
    for (size_t p = 0; p < stage.roles.parameters.size(); ++p) {
      if (stage.roles.parameters[p] != spmd::StageParameter::kBatch) continue;
      const ir::Instruction& parameter = *stage.step->entry()->parameters()[p];
      const int64_t loss_parameter = stage.loss_parameter[p];
      const int64_t model_parameter =
          stage.loss.model_parameter[static_cast<size_t>(loss_parameter)];
      const ir::Literal& whole =
          batch[static_cast<size_t>(batch_index[static_cast<size_t>(model_parameter)])];
      const int64_t rows = parameter.shape().dims().empty() ? 0 : parameter.shape().dims()[0];
      if (whole.shape().rank() == 0 || whole.shape().dims()[0] != rows * micro_batches) {
        return InvalidArgument(
            "Step: batch parameter %{} is {}; {} micro-batches of {} need {} rows",
            loss.parameters()[static_cast<size_t>(model_parameter)]->name(),
            whole.shape().ToString(), micro_batches, parameter.shape().ToString(),
            rows * micro_batches);
      }
      for (int64_t m = 0; m < micro_batches; ++m) {
        ALPA_ASSIGN_OR_RETURN(std::vector<ir::Literal> tiles,
                              spmd::SplitLiteral(SliceRows(whole, m * rows, rows),
                                                 stage.parameter_specs[p], stage.mesh_shape));
        for (size_t position = 0; position < tiles.size(); ++position) {
          if (!Holds(stage.devices[position])) continue;
          host_inputs_[static_cast<size_t>(stage.devices[position])][static_cast<size_t>(
              slots_of_[s][position].host_inputs[static_cast<size_t>(m)][p])] =
              std::move(tiles[position]);
        }
      }
    }
  }
  runtime::PipelineRunOptions run;
  run.communicator.timeout_seconds = options_.timeout_seconds;
  run.memory_limit_bytes = options_.memory_limit_bytes;
  if (trace_epoch) {
    run.trace = true;
    run.epoch = *trace_epoch;
  }
  Result<std::vector<runtime::PipelineProfile>> profiles = RunDevices(run);
  if (!profiles.ok()) {
    placed_ = false;
    return profiles.status();
  }
  last_run_ = std::move(profiles).value();
  double loss_sum = 0;
  for (size_t s = 0; s < stages_->size(); ++s) {
    const int64_t device = (*stages_)[s].devices[0];
    if (!(*stages_)[s].loss.has_loss || !Holds(device)) continue;
    for (int64_t slot : slots_of_[s][0].loss) {
      ir::Literal& value = slots_[static_cast<size_t>(device)][static_cast<size_t>(slot)];
      loss_sum += value.GetDouble(0);
      value = ir::Literal();
    }
  }
  if (world_ != nullptr) {  // the loss's device tells every process
    const std::vector<int64_t> everyone = runtime::WorldGroup(device_count());
    std::vector<double> sum = {loss_sum};
    ALPA_RETURN_IF_ERROR(world_->AllReduce(everyone, runtime::ReduceOp::kSum,
                                           runtime::ViewOf(ir::DType::kF64, sum),
                                           runtime::ViewOf(ir::DType::kF64, sum)));
    loss_sum = sum[0];
  }
  return loss_sum / static_cast<double>(micro_batches);
}

Result<std::vector<runtime::PipelineProfile>> PipeshardExecutable::RunDevices(
    const runtime::PipelineRunOptions& run) {
  if (world_ == nullptr) {
    if (threads_ == nullptr) threads_ = std::make_shared<runtime::DeviceThreads>(device_count());
    runtime::PipelineRunOptions on_threads = run;
    on_threads.threads = threads_.get();
    return runtime::RunPipeline(devices_, slots_, on_threads, &host_inputs_);
  }
  const size_t d = static_cast<size_t>(world_->rank());
  ALPA_ASSIGN_OR_RETURN(runtime::PipelineProfile own,
                        runtime::RunPipelineDevice(devices_[d], slots_[d], *world_, *mailbox_, run,
                                                   &host_inputs_[d]));
  return runtime::GatherPipelineProfiles(*world_, devices_, own, run.trace, run.epoch);
}

Result<std::vector<ir::Literal>> PipeshardExecutable::Fetch() const {
  if (!placed_) return FailedPrecondition("Fetch before Place (or after a failed step)");
  const int64_t total = CarriedCount();
  std::vector<ir::Literal> carried(static_cast<size_t>(total));
  std::vector<bool> done(static_cast<size_t>(total), false);
  for (size_t s = 0; s < stages_->size(); ++s) {
    const StageProgram& stage = (*stages_)[s];
    for (size_t p = 0; p < stage.roles.parameters.size(); ++p) {
      if (!spmd::IsStateParameter(stage.roles.parameters[p])) continue;
      const int64_t index = CarriedIndex(stage, p);
      if (done[static_cast<size_t>(index)]) continue;
      done[static_cast<size_t>(index)] = true;
      if (world_ != nullptr) {
        ALPA_ASSIGN_OR_RETURN(carried[static_cast<size_t>(index)], GatherStateValue(s, p));
        continue;
      }
      std::vector<ir::Literal> tiles;
      for (size_t position = 0; position < stage.devices.size(); ++position) {
        tiles.push_back(slots_[static_cast<size_t>(stage.devices[position])]
                              [static_cast<size_t>(slots_of_[s][position].state[p])]);
      }
      ALPA_ASSIGN_OR_RETURN(carried[static_cast<size_t>(index)],
                            spmd::AssembleLiteral(tiles, stage.parameter_specs[p], stage.mesh_shape,
                                                  stage.step->entry()->parameters()[p]->shape()));
    }
  }
  return carried;
}

Result<ir::Literal> PipeshardExecutable::GatherStateValue(size_t s, size_t p) const {
  const StageProgram& stage = (*stages_)[s];
  const ir::Shape& whole = stage.step->entry()->parameters()[p]->shape();
  ALPA_ASSIGN_OR_RETURN(const ir::Shape tile,
                        spmd::LocalShape(whole, stage.parameter_specs[p], stage.mesh_shape,
                                         stage.step->entry()->parameters()[p]->name()));
  const std::vector<int64_t> everyone = runtime::WorldGroup(device_count());
  std::vector<ir::Literal> tiles;
  for (size_t position = 0; position < stage.devices.size(); ++position) {
    const int64_t device = stage.devices[position];
    ir::Literal value = Holds(device) ? slots_[static_cast<size_t>(device)]
                                              [static_cast<size_t>(slots_of_[s][position].state[p])]
                                      : ir::Literal::CreateUninitialized(tile);
    ALPA_RETURN_IF_ERROR(world_->Broadcast(
        everyone, device, {value.shape().dtype(), value.data(), value.element_count()}));
    tiles.push_back(std::move(value));
  }
  return spmd::AssembleLiteral(tiles, stage.parameter_specs[p], stage.mesh_shape, whole);
}

}  // namespace alpa::api
