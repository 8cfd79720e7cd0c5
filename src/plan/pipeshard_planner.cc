#include "plan/pipeshard_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "pipeline/alpa_formula.h"
#include "pipeline/simulator.h"
#include "pipeline/stage_dp.h"
#include "pipeline/stage_memory.h"
#include "pipeline/submesh_slicing.h"
#include "plan/stage_composition.h"
#include "plan/stage_handover.h"
#include "support/units.h"

namespace alpa::plan {
namespace {

constexpr int64_t kUnlimitedSuccessors = int64_t{1} << 20;

template <typename... Args>
Status DoesNotFit(fmt::format_string<Args...> format, Args&&... args) {
  return Status(StatusCode::kResourceExhausted, fmt::format(format, std::forward<Args>(args)...));
}

const cluster::DeviceSpec& DeviceOf(const std::vector<cluster::HostType>& types,
                                    const MeshConfig& config) {
  return types[static_cast<size_t>(config.submesh.host_type)].host.device;
}

int64_t DeviceMemory(const cluster::ClusterSpec& cluster, const MeshConfig& config) {
  return DeviceOf(cluster::HostTypes(cluster), config).memory_bytes;
}

// The fullest device's peak under the plan's schedule.
int64_t PeakOfFullestDevice(const PipeshardPlan& plan) {
  int64_t peak = 0;
  for (const PlannedStage& stage : plan.stages) peak = std::max(peak, stage.peak_memory_bytes);
  return peak;
}

// `a` is better than `b` when faster; at the same step time, when its fullest device holds
// less. Schedules tie in time where the stages never wait on each other (one stage runs its
// micro-batches back to back under GPipe and 1F1B alike; the simulator's sums differ only in
// rounding), and there 1F1B keeps one micro-batch's activations where GPipe keeps all.
bool BetterPlan(const PipeshardPlan& a, const PipeshardPlan& b) {
  constexpr double kSameTime = 1e-9;  // relative: rounding, not a faster plan
  if (a.step_time_s < b.step_time_s * (1 - kSameTime)) return true;
  if (b.step_time_s < a.step_time_s * (1 - kSameTime)) return false;
  return PeakOfFullestDevice(a) < PeakOfFullestDevice(b);
}

// Alpa's max_n_succ_stages: how many stages may follow one that holds `in flight` = successors
// + 1 micro-batches under 1F1B; -1 when not even one fits.
int64_t MaxSuccessors(const StageFigures& stage, int64_t memory_bytes) {
  const int64_t free_bytes = memory_bytes - stage.static_bytes - stage.temporary_bytes();
  if (free_bytes < stage.activation_bytes) return -1;
  if (stage.static_bytes + stage.update_temporary_bytes() > memory_bytes) return -1;
  if (stage.activation_bytes == 0) return kUnlimitedSuccessors;
  return std::min(kUnlimitedSuccessors, free_bytes / stage.activation_bytes - 1);
}

// The gradient sums of the weights several stages read (header): each holder's update waits for
// every other holder's.
Status AddSharedWeightExchanges(const LayerCostTable& table, const cluster::ClusterSpec& cluster,
                                const std::vector<StageChoice>& stages,
                                const std::vector<std::vector<int64_t>>& devices,
                                PipeshardPlan& plan) {
  for (const auto& [weight, _] : table.weight_bytes) {
    std::vector<size_t> holders;
    for (size_t j = 0; j < stages.size(); ++j) {
      for (int64_t layer = stages[j].first_layer; layer <= stages[j].last_layer; ++layer) {
        const std::vector<int64_t>& read = table.weights[static_cast<size_t>(layer)];
        if (std::find(read.begin(), read.end(), weight) != read.end()) {
          holders.push_back(j);
          break;
        }
      }
    }
    if (holders.size() < 2) continue;
    for (size_t j : holders) {
      for (size_t h : holders) {
        if (devices[h] == devices[j]) continue;
        ALPA_ASSIGN_OR_RETURN(GradientExchange exchange,
                              PriceGradientExchange(table, cluster, weight, stages[h], devices[h],
                                                    stages[j], devices[j]));
        plan.stages[j].update_s += exchange.seconds;
        plan.transfer_bytes_per_step += exchange.between_meshes_bytes;
        plan.gather_bytes_per_step += exchange.within_receiver_bytes;
      }
    }
  }
  return Status::Ok();
}

Status CheckCoverage(const LayerCostTable& table, const std::vector<StageChoice>& stages) {
  if (stages.empty()) return InvalidArgument("no stages");
  int64_t next = 0;
  for (size_t j = 0; j < stages.size(); ++j) {
    const StageChoice& stage = stages[j];
    if (stage.first_layer != next) {
      return InvalidArgument(
          "stage {} starts at layer {}, but layer {} is next: stages must cover layers 0..{} in "
          "order, each once",
          j, stage.first_layer, next, table.num_layers - 1);
    }
    if (stage.last_layer < stage.first_layer || stage.last_layer >= table.num_layers) {
      return InvalidArgument("stage {}: layers {}..{} are not a range of 0..{}", j,
                             stage.first_layer, stage.last_layer, table.num_layers - 1);
    }
    if (stage.config < 0 || stage.config >= static_cast<int64_t>(table.configs.size())) {
      return InvalidArgument("stage {}: no mesh configuration {}", j, stage.config);
    }
    next = stage.last_layer + 1;
  }
  if (next != table.num_layers) {
    return InvalidArgument("the stages end at layer {}; the model has layers 0..{}", next - 1,
                           table.num_layers - 1);
  }
  return Status::Ok();
}

// Each host type's hosts are sliced among the stages on sub-meshes of that type, in pipeline
// order (one type: Alpa's slicing of the whole cluster).
Result<std::vector<std::vector<int64_t>>> StageDevices(const LayerCostTable& table,
                                                       const cluster::ClusterSpec& cluster,
                                                       const std::vector<StageChoice>& stages) {
  const std::vector<cluster::HostType> types = cluster::HostTypes(cluster);
  const std::vector<int64_t> first_device = cluster::FirstDeviceOfHosts(cluster);
  std::vector<std::vector<int64_t>> devices(stages.size());
  for (size_t t = 0; t < types.size(); ++t) {
    std::vector<size_t> on_type;
    std::vector<pipeline::SubmeshShape> shapes;
    for (size_t j = 0; j < stages.size(); ++j) {
      const cluster::Submesh& submesh =
          table.configs[static_cast<size_t>(stages[j].config)].submesh;
      if (submesh.host_type != static_cast<int64_t>(t)) continue;
      on_type.push_back(j);
      shapes.push_back({HostsOf(submesh), submesh.shape.back()});
    }
    const int64_t per_host = types[t].host.devices;
    Result<std::vector<std::vector<int64_t>>> sliced =
        pipeline::SliceSubmeshes(static_cast<int64_t>(types[t].hosts.size()), per_host, shapes);
    if (!sliced.ok()) {
      return types.size() == 1
                 ? sliced.status()
                 : sliced.status().WithContext(fmt::format(
                       "the {} hosts of {}", types[t].hosts.size(), types[t].host.device.name));
    }
    for (size_t k = 0; k < on_type.size(); ++k) {
      for (int64_t local : (*sliced)[k]) {  // local ids number the type's hosts in order
        const int64_t host = types[t].hosts[static_cast<size_t>(local / per_host)];
        devices[on_type[k]].push_back(first_device[static_cast<size_t>(host)] + local % per_host);
      }
    }
  }
  return devices;
}

// Why no plan was found: what the whole model needs per device as one stage on every device (the
// least the planned layers could need, one micro-batch in flight), what of it is the train state
// and what the micro-batch, and what would make it fit. The estimate of the devices needed
// divides the whole need evenly over them:
//   devices ~ ceil(needed * N / memory)
// which sharding the train state (as ZeRO does, and the intra-op plans may choose) approaches.
Status NothingFits(const LayerCostTable& table, const cluster::ClusterSpec& cluster) {
  const int64_t total_devices = cluster::TotalDevices(cluster);
  auto needed = [](const StageFigures& stage) {
    return stage.static_bytes + stage.activation_bytes + stage.temporary_bytes();
  };
  std::optional<StageFigures> least;
  size_t least_config = 0;
  for (size_t c = 0; c < table.configs.size(); ++c) {
    if (table.configs[c].submesh.devices() != total_devices) continue;
    StageFigures whole = ComposeStage(table, 0, table.num_layers - 1, static_cast<int64_t>(c));
    if (whole.fits && (!least || needed(whole) < needed(*least))) {
      least = std::move(whole);
      least_config = c;
    }
  }
  if (!least) {
    return NotFound("no stage plan fits the cluster's {} devices", total_devices);
  }
  const int64_t least_needed = needed(*least);
  const int64_t memory = DeviceMemory(cluster, table.configs[least_config]);
  const int64_t devices_needed = static_cast<int64_t>(
      std::ceil(static_cast<double>(least_needed) * static_cast<double>(total_devices) /
                static_cast<double>(std::max<int64_t>(memory, 1))));
  std::string remedies = fmt::format(
      "about {} such devices, the need spread evenly over them (the weights, gradients and "
      "optimizer state sharded as ZeRO does)",
      devices_needed);
  if (least->static_bytes < memory) {
    // The train state fits: what one micro-batch adds can be made smaller.
    remedies +=
        "; smaller micro-batches (more of them), whose activations and temporaries shrink with "
        "their rows";
    if (!table.remat) {
      remedies +=
          "; rematerialisation (each layer's activations recomputed in its backward "
          "pass, only its inputs kept)";
    }
  } else {
    remedies +=
        "; the train state alone exceeds the device's memory, so neither smaller "
        "micro-batches nor rematerialisation can make it fit";
  }
  return NotFound(
      "no stage plan fits the cluster's {} devices: even the whole model as one stage on all of "
      "them ({}) needs {} per device with one micro-batch of {} row(s) in flight (weights, "
      "gradients and optimizer state {}, activations {}, temporaries {}), and they have {}; "
      "what would make it fit: {}; or devices with more memory",
      total_devices, MeshConfigName(table.configs[least_config]), FormatBytes(least_needed),
      table.micro_batch_size, FormatBytes(least->static_bytes),
      FormatBytes(least->activation_bytes), FormatBytes(least->temporary_bytes()),
      FormatBytes(memory), remedies);
}

// S, the device groups of V = S · num_chunks virtual stages. With several chunks, under
// interleaved 1F1B only, stage j reuses stage j % S's devices and must have its configuration.
Result<size_t> DeviceGroups(const std::vector<StageChoice>& stages, pipeline::ScheduleKind schedule,
                            int64_t num_chunks) {
  if (num_chunks < 1 || std::ssize(stages) % num_chunks != 0) {
    return InvalidArgument("{} stages do not make {} chunks per device", stages.size(), num_chunks);
  }
  if (num_chunks > 1 && schedule != pipeline::ScheduleKind::kInterleaved1F1B) {
    return InvalidArgument("{} chunks per device need interleaved 1F1B, not {}", num_chunks,
                           pipeline::ScheduleKindName(schedule));
  }
  const size_t groups = stages.size() / static_cast<size_t>(num_chunks);
  for (size_t j = groups; j < stages.size(); ++j) {
    if (stages[j].config != stages[j % groups].config) {
      return InvalidArgument(
          "stage {} runs on the devices of stage {} (interleaved, {} chunks) and needs its mesh "
          "configuration",
          j, j % groups, num_chunks);
    }
  }
  return groups;
}

}  // namespace

Result<PipeshardPlan> EvaluateStages(const LayerCostTable& table,
                                     const cluster::ClusterSpec& cluster,
                                     const std::vector<StageChoice>& stages,
                                     pipeline::ScheduleKind schedule, int64_t num_micro_batches,
                                     int64_t num_chunks) {
  ALPA_RETURN_IF_ERROR(CheckCoverage(table, stages));
  ALPA_ASSIGN_OR_RETURN(const size_t groups, DeviceGroups(stages, schedule, num_chunks));
  ALPA_ASSIGN_OR_RETURN(
      std::vector<std::vector<int64_t>> devices,
      StageDevices(table, cluster,
                   {stages.begin(), stages.begin() + std::ssize(stages) / num_chunks}));
  const std::vector<cluster::HostType> types = cluster::HostTypes(cluster);
  for (size_t j = groups; j < stages.size(); ++j) devices.push_back(devices[j % groups]);
  PipeshardPlan plan;
  plan.schedule = schedule;
  plan.num_chunks = num_chunks;
  plan.num_micro_batches = num_micro_batches;
  pipeline::PipelineSpec spec;
  spec.num_micro_batches = static_cast<int>(num_micro_batches);
  spec.schedule = schedule;
  spec.num_chunks = static_cast<int>(num_chunks);
  std::vector<pipeline::StageMemory> memory;
  std::vector<double> stage_times;
  for (size_t j = 0; j < stages.size(); ++j) {
    const StageChoice& choice = stages[j];
    const StageFigures figures =
        ComposeStage(table, choice.first_layer, choice.last_layer, choice.config);
    const MeshConfig& config = table.configs[static_cast<size_t>(choice.config)];
    if (!figures.fits) {
      return DoesNotFit("stage {} (layers {}..{}) has no intra-op plan on {}", j,
                        choice.first_layer, choice.last_layer, MeshConfigName(config));
    }
    PlannedStage stage{.choice = choice,
                       .devices = devices[j],
                       .forward_s = figures.forward_s,
                       .backward_s = figures.backward_s,
                       .update_s = figures.update_s,
                       .static_bytes = figures.static_bytes,
                       .activation_bytes = figures.activation_bytes,
                       .temporary_bytes = figures.temporary_bytes(),
                       .update_temporary_bytes = figures.update_temporary_bytes(),
                       .memory_bytes = DeviceOf(types, config).memory_bytes,
                       .device_type = DeviceOf(types, config).name,
                       .collectives = figures.collectives,
                       .edge_layouts = EdgeLayoutsOf(table, choice)};
    pipeline::StageSpec& simulated = spec.stages.emplace_back();
    simulated.forward_s = figures.forward_s;
    simulated.backward_s = figures.backward_s;
    simulated.static_bytes = figures.static_bytes;
    simulated.activation_bytes = figures.activation_bytes;
    memory.push_back(StageMemoryOf(figures));
    stage_times.push_back(figures.forward_s + figures.backward_s);
    if (j > 0) {
      StageHandover handover;  // none between stages on the same devices
      if (devices[j - 1] != devices[j]) {
        ALPA_ASSIGN_OR_RETURN(handover, PriceStageHandover(table, cluster, stages[j - 1],
                                                           devices[j - 1], stages[j], devices[j]));
      }
      spec.forward_transfer_s.push_back(handover.forward_s);
      spec.backward_transfer_s.push_back(handover.backward_s);
      plan.transfer_bytes_per_step += num_micro_batches * handover.between_meshes_bytes;
      plan.gather_bytes_per_step += num_micro_batches * handover.within_receiver_bytes;
    }
    plan.stages.push_back(std::move(stage));
  }
  plan.forward_transfer_s = spec.forward_transfer_s;
  ALPA_RETURN_IF_ERROR(AddSharedWeightExchanges(table, cluster, stages, devices, plan));
  ALPA_ASSIGN_OR_RETURN(pipeline::SimulationResult simulation, pipeline::SimulatePipeline(spec));
  ALPA_ASSIGN_OR_RETURN(
      pipeline::PipelineMemory peak,
      pipeline::PipelinePeakMemory(memory, schedule, spec.num_micro_batches, spec.num_chunks));
  // Each device group finishes its last backward, then updates the weights of its stages.
  std::vector<double> end(groups, 0.0);
  for (const pipeline::TaskTiming& task : simulation.tasks) {
    double& last = end[static_cast<size_t>(task.device)];
    last = std::max(last, task.end_s);
  }
  for (size_t j = 0; j < stages.size(); ++j) end[j % groups] += plan.stages[j].update_s;
  plan.step_time_s = *std::max_element(end.begin(), end.end());
  std::vector<double> group_times(groups, 0.0);
  for (size_t j = 0; j < stages.size(); ++j) group_times[j % groups] += stage_times[j];
  for (size_t j = 0; j < stages.size(); ++j) {
    PlannedStage& stage = plan.stages[j];
    const pipeline::DeviceMemory& device = peak.devices[j % groups];
    stage.peak_memory_bytes = device.peak_bytes;
    stage.micro_batches_in_flight = device.peak_in_flight;
    stage.pending_gradient_bytes = device.pending_gradient_bytes;
    if (num_chunks > 1) {
      stage.static_bytes = device.static_bytes;
      stage.activation_bytes = device.activation_bytes / std::max(device.peak_in_flight, 1);
      stage.temporary_bytes = device.temporary_bytes;
      stage.update_temporary_bytes = device.update_temporary_bytes;
    }
    if (stage.peak_memory_bytes > stage.memory_bytes) {
      return DoesNotFit(
          "stage {} (layers {}..{}) needs {} per device under {} with {} micro-batches; its "
          "devices have {}",
          j, stage.choice.first_layer, stage.choice.last_layer,
          FormatBytes(stage.peak_memory_bytes), pipeline::ScheduleKindName(schedule),
          num_micro_batches, FormatBytes(stage.memory_bytes));
    }
  }
  plan.pipeline_s = simulation.step_time_s;
  plan.bubble_fraction = simulation.bubble_fraction;
  plan.alpa_formula_s =  // over the device groups: each group's stages are one stage to Alpa
      pipeline::AlpaPipelineLatency(group_times, static_cast<int>(num_micro_batches));
  plan.simulation = std::move(simulation);
  return plan;
}

Result<PipeshardPlan> EvaluateSchedules(const LayerCostTable& table,
                                        const cluster::ClusterSpec& cluster,
                                        const std::vector<StageChoice>& stages,
                                        const std::vector<pipeline::ScheduleKind>& schedules,
                                        int64_t num_micro_batches, int64_t num_chunks) {
  using pipeline::ScheduleKind;
  auto listed = [&](ScheduleKind kind) {
    return std::ranges::find(schedules, kind) != schedules.end();
  };
  std::optional<Result<PipeshardPlan>> best;
  for (ScheduleKind schedule : schedules) {
    const bool runs_chunks = schedule == ScheduleKind::kInterleaved1F1B;
    if (num_chunks > 1 ? !runs_chunks : runs_chunks && listed(ScheduleKind::k1F1B)) continue;
    Result<PipeshardPlan> plan =
        EvaluateStages(table, cluster, stages, schedule, num_micro_batches, num_chunks);
    if (!best || (plan.ok() && (!best->ok() || BetterPlan(*plan, **best)))) {
      best = std::move(plan);
    }
  }
  if (!best) {
    return InvalidArgument(
        "no schedule to evaluate the stages under{}",
        num_chunks > 1 ? " (several chunks per device need interleaved 1F1B)" : "");
  }
  return std::move(*best);
}

std::optional<CandidateStages> InterleaveStages(const std::vector<StageChoice>& stages,
                                                int64_t num_chunks) {
  const auto groups = static_cast<int64_t>(stages.size());
  if (groups < 2 || num_chunks < 2) return std::nullopt;
  CandidateStages interleaved{.stages = {}, .num_chunks = num_chunks};
  int64_t next_layer = stages.front().first_layer;
  for (int64_t chunk = 0; chunk < num_chunks; ++chunk) {
    for (const StageChoice& group : stages) {
      const int64_t layers = group.last_layer - group.first_layer + 1;
      if (layers < num_chunks) return std::nullopt;
      const int64_t size = layers / num_chunks + (chunk < layers % num_chunks ? 1 : 0);
      interleaved.stages.push_back({next_layer, next_layer + size - 1, group.config});
      next_layer += size;
    }
  }
  return interleaved;
}

Result<PipeshardPlan> PlanPipeshard(const LayerCostTable& table,
                                    const cluster::ClusterSpec& cluster,
                                    const PipeshardOptions& options) {
  // Sub-mesh choices in the order of the configurations, each with its configurations.
  std::vector<cluster::Submesh> submeshes;
  std::vector<std::vector<int64_t>> configs_of;
  for (size_t c = 0; c < table.configs.size(); ++c) {
    const cluster::Submesh& submesh = table.configs[c].submesh;
    auto it = std::find(submeshes.begin(), submeshes.end(), submesh);
    if (it == submeshes.end()) {
      submeshes.push_back(submesh);
      configs_of.emplace_back();
      it = submeshes.end() - 1;
    }
    configs_of[static_cast<size_t>(it - submeshes.begin())].push_back(static_cast<int64_t>(c));
  }
  size_t num_configs = 0;
  for (const auto& configs : configs_of) num_configs = std::max(num_configs, configs.size());

  const int64_t total_devices = cluster::TotalDevices(cluster);
  const double total_flops = std::accumulate(table.flops.begin(), table.flops.end(), 0.0);
  std::vector<int64_t> submesh_devices;
  for (const cluster::Submesh& submesh : submeshes) submesh_devices.push_back(submesh.devices());
  pipeline::StageCostTable dp = pipeline::StageCostTable::Make(table.num_layers, submesh_devices,
                                                               static_cast<int64_t>(num_configs));
  // Each host type is a pool of devices the plan must use exactly.
  const std::vector<cluster::HostType> types = cluster::HostTypes(cluster);
  std::vector<int64_t> devices_per_pool;
  for (const cluster::HostType& type : types) {
    devices_per_pool.push_back(static_cast<int64_t>(type.hosts.size()) * type.host.devices);
  }
  for (const cluster::Submesh& submesh : submeshes) dp.submesh_pools.push_back(submesh.host_type);
  for (int64_t first = 0; first < table.num_layers; ++first) {
    for (size_t s = 0; s < submeshes.size(); ++s) {
      const double device_share =
          static_cast<double>(submeshes[s].devices()) / static_cast<double>(total_devices);
      for (size_t i = 0; i < configs_of[s].size(); ++i) {
        const int64_t config = configs_of[s][i];
        const int64_t memory =
            DeviceOf(types, table.configs[static_cast<size_t>(config)]).memory_bytes;
        // Each stage extends the one before: once a layer has no plan on the configuration, or
        // the stage's FLOPs outgrow its share of the devices, every longer stage does too.
        StageComposer stage(table, first, config);
        while (stage.last() + 1 < table.num_layers) {
          stage.Extend();
          const int64_t last = stage.last();
          const StageFigures& figures = stage.figures();
          const double flops_share = total_flops > 0 ? figures.flops / total_flops : 0;
          const double tolerance = 1 + options.imbalance_tolerance;
          if (!figures.fits || device_share * tolerance < flops_share) break;
          if (device_share > flops_share * tolerance) continue;
          const size_t index =
              dp.Index(first, last, static_cast<int64_t>(s), static_cast<int64_t>(i));
          // The once-per-step update, spread over the micro-batches: Alpa's objective
          // sum t + (B - 1) max t then counts it exactly for one stage (B t + u) and roughly
          // for several (the simulator prices each stage's update exactly afterwards). Without
          // it the DP ranks plans by their pipelines alone and misses the ones whose updates
          // are cheap (gpt-tiny on 8 devices, one micro-batch: 511 us against 30.9 us).
          dp.time_s[index] = figures.forward_s + figures.backward_s +
                             figures.update_s / static_cast<double>(options.num_micro_batches);
          dp.max_successors[index] = MaxSuccessors(figures, memory);
        }
      }
    }
  }
  ALPA_ASSIGN_OR_RETURN(
      pipeline::StageDpResult solved,
      pipeline::SolveStageDp(dp, {.num_devices = total_devices,
                                  .devices_per_pool = devices_per_pool,
                                  .num_micro_batches = static_cast<int>(options.num_micro_batches),
                                  .max_candidates = options.max_candidates}));

  std::vector<CandidateStages> candidates;
  for (const pipeline::StagePlanCandidate& candidate : solved.candidates) {
    std::vector<StageChoice>& stages = candidates.emplace_back().stages;
    for (const pipeline::DpStage& stage : candidate.stages) {
      stages.push_back(
          {stage.first_layer, stage.last_layer,
           configs_of[static_cast<size_t>(stage.submesh)][static_cast<size_t>(stage.config)]});
    }
  }
  // The DP plans one chunk per device group; under interleaved 1F1B each of its plans is also
  // tried in two (the bubble shrinks by about half, for more transfers and memory).
  if (std::ranges::count(options.schedules, pipeline::ScheduleKind::kInterleaved1F1B) > 0) {
    for (size_t k = 0; k < solved.candidates.size(); ++k) {
      if (std::optional<CandidateStages> interleaved = InterleaveStages(candidates[k].stages, 2)) {
        candidates.push_back(std::move(interleaved).value());
      }
    }
  }
  const size_t from_dp = candidates.size();
  candidates.insert(candidates.end(), options.extra_candidates.begin(),
                    options.extra_candidates.end());
  std::optional<PipeshardPlan> best;
  Status last_error = NothingFits(table, cluster);
  int64_t evaluated = 0;
  std::vector<EvaluatedCandidate> records;
  for (size_t k = 0; k < candidates.size(); ++k) {
    evaluated += static_cast<int64_t>(options.schedules.size());
    Result<PipeshardPlan> plan =
        EvaluateSchedules(table, cluster, candidates[k].stages, options.schedules,
                          options.num_micro_batches, candidates[k].num_chunks);
    EvaluatedCandidate& record = records.emplace_back();
    record.stages = candidates[k];
    record.source = k < solved.candidates.size() ? "stage DP"
                    : k < from_dp                ? "stage DP in 2 chunks"
                                                 : "given";
    if (k < solved.candidates.size()) record.dp_objective_s = solved.candidates[k].latency_s;
    if (!plan.ok()) {
      record.error = plan.status().message();
      // Why nothing fits is told by the DP's plans; an extra candidate's failure says less.
      if (k < solved.candidates.size()) last_error = plan.status();
      continue;
    }
    record.step_time_s = plan->step_time_s;
    record.schedule = pipeline::ScheduleKindName(plan->schedule);
    if (!best || BetterPlan(*plan, *best)) best = std::move(plan).value();
  }
  if (!best) return last_error;
  best->candidates_evaluated = evaluated;
  best->evaluated = std::move(records);
  return std::move(best).value();
}

}  // namespace alpa::plan
