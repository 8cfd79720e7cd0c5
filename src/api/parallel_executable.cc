#include "api/parallel_executable.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "cluster/mesh.h"
#include "runtime/spmd_executor.h"
#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"

namespace alpa::api {

int64_t ParallelExecutable::device_count() const { return spmd::DeviceCount(mesh_shape_); }

ParallelExecutable::HeldDevices ParallelExecutable::Held(
    const runtime::Communicator* communicator) const {
  if (communicator != nullptr) return {communicator->rank(), 1};
  return {0, device_count()};
}

Result<std::vector<std::vector<ir::Literal>>> ParallelExecutable::Split(
    const std::vector<ir::Literal>& values, const std::vector<int64_t>& parameters,
    runtime::Communicator* communicator) const {
  const ir::Computation& entry = *step_->entry();
  const auto [first, held] = Held(communicator);
  std::vector<std::vector<ir::Literal>> per_device(static_cast<size_t>(held));
  for (size_t i = 0; i < values.size(); ++i) {
    const auto p = static_cast<size_t>(parameters[i]);
    Result<std::vector<ir::Literal>> tiles =
        spmd::SplitLiteral(values[i], parameter_specs_[p], mesh_shape_);
    if (!tiles.ok()) {
      return tiles.status().WithContext(
          fmt::format("argument {} (%{})", p, entry.parameters()[p]->name()));
    }
    for (int64_t d = 0; d < held; ++d) {
      per_device[static_cast<size_t>(d)].push_back(std::move((*tiles)[first + d]));
    }
  }
  return per_device;
}

Result<std::vector<ir::Literal>> ParallelExecutable::Assemble(
    std::vector<std::vector<ir::Literal>> tiles, const std::vector<int64_t>& leaves,
    runtime::Communicator* communicator) const {
  if (communicator != nullptr) {
    // Every process assembles the whole values: each leaf's tiles (equal in size, the splits
    // being even) are all-gathered over every device.
    const int64_t devices = device_count();
    const std::vector<int64_t> everyone = runtime::WorldGroup(devices);
    std::vector<std::vector<ir::Literal>> gathered_tiles(static_cast<size_t>(devices));
    for (ir::Literal& tile : tiles.front()) {
      std::vector<std::byte> gathered(static_cast<size_t>(tile.size_bytes() * devices));
      ALPA_RETURN_IF_ERROR(communicator->AllGather(
          everyone, {ir::DType::kU8, tile.data(), tile.size_bytes()},
          {ir::DType::kU8, gathered.data(), static_cast<int64_t>(gathered.size())}));
      for (int64_t d = 0; d < devices; ++d) {
        ir::Literal copy = ir::Literal::CreateZeros(tile.shape());
        std::memcpy(copy.data(), gathered.data() + d * tile.size_bytes(),
                    static_cast<size_t>(tile.size_bytes()));
        gathered_tiles[static_cast<size_t>(d)].push_back(std::move(copy));
      }
    }
    tiles = std::move(gathered_tiles);
  }
  const ir::Shape& root = step_->entry()->root()->shape();
  std::vector<ir::Literal> values;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const auto leaf = static_cast<size_t>(leaves[i]);
    std::vector<ir::Literal> leaf_tiles;
    for (std::vector<ir::Literal>& device : tiles) leaf_tiles.push_back(std::move(device[i]));
    const ir::Shape& shape = root.IsTuple() ? root.tuple_shapes()[leaf] : root;
    Result<ir::Literal> whole =
        spmd::AssembleLiteral(leaf_tiles, result_specs_[leaf], mesh_shape_, shape);
    if (!whole.ok()) return whole.status().WithContext(fmt::format("result element {}", leaf));
    values.push_back(std::move(whole).value());
  }
  return values;
}

void ParallelExecutable::FindCarriedValues(const std::map<std::string, int64_t>& next_leaves) {
  // A parameter stays on the devices when its next value comes back in its own layout, in a leaf
  // no other parameter takes (the partitioner lays out the first leaf holding a next value as its
  // parameter; two parameters sharing one would leave one of them in another layout).
  const std::vector<ir::Instruction*>& parameters = step_->entry()->parameters();
  std::vector<bool> taken(result_specs_.size());
  for (size_t p = 0; p < parameters.size(); ++p) {
    auto next = next_leaves.find(parameters[p]->name());
    const auto leaf = next != next_leaves.end() ? static_cast<size_t>(next->second) : taken.size();
    if (leaf < taken.size() && !taken[leaf] && result_specs_[leaf] == parameter_specs_[p]) {
      taken[leaf] = true;
      carried_parameters_.push_back(static_cast<int64_t>(p));
      carried_leaves_.push_back(static_cast<int64_t>(leaf));
    } else {
      fresh_parameters_.push_back(static_cast<int64_t>(p));
    }
  }
  for (size_t leaf = 0; leaf < taken.size(); ++leaf) {
    if (!taken[leaf]) fresh_leaves_.push_back(static_cast<int64_t>(leaf));
  }
}

void ParallelExecutable::RecordRun(std::vector<runtime::ExecutionProfile> profiles) {
  last_run_ = std::move(profiles);
  for (const runtime::ExecutionProfile& profile : last_run_) {
    peak_memory_bytes_ = std::max(peak_memory_bytes_, profile.peak_bytes);
  }
}

Result<std::vector<std::vector<ir::Literal>>> ParallelExecutable::Execute(
    std::vector<std::vector<ir::Literal>> arguments, runtime::Communicator* communicator,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  runtime::ExecuteOptions execute;
  execute.memory_limit_bytes = solution_.memory_budget_bytes;
  execute.trace = trace_epoch.has_value();
  if (trace_epoch) execute.epoch = *trace_epoch;
  if (communicator == nullptr) {
    runtime::SpmdRunOptions run_options;
    run_options.execute = execute;
    if (threads_ == nullptr) threads_ = std::make_shared<runtime::DeviceThreads>(device_count());
    run_options.threads = threads_.get();
    ALPA_ASSIGN_OR_RETURN(
        runtime::SpmdRun run,
        runtime::RunSpmdProgram(*instructions_, std::move(arguments), run_options));
    RecordRun(std::move(run.profiles));
    return std::move(run.outputs);
  }
  return ExecuteAsDevice(std::move(arguments.front()), *communicator, execute, trace_epoch);
}

Result<std::vector<ir::Literal>> ParallelExecutable::RunWhole(
    const std::vector<ir::Literal>& arguments, runtime::Communicator* communicator,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  const ir::Computation& entry = *step_->entry();
  if (arguments.size() != static_cast<size_t>(entry.parameter_count())) {
    return InvalidArgument("%{} takes {} arguments, not {}", entry.name(), entry.parameter_count(),
                           arguments.size());
  }
  std::vector<int64_t> parameters(arguments.size());
  std::iota(parameters.begin(), parameters.end(), 0);
  ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<ir::Literal>> tiles,
                        Split(arguments, parameters, communicator));
  ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<ir::Literal>> outputs,
                        Execute(std::move(tiles), communicator, trace_epoch));
  std::vector<int64_t> leaves(result_specs_.size());
  std::iota(leaves.begin(), leaves.end(), 0);
  return Assemble(std::move(outputs), leaves, communicator);
}

Result<std::vector<ir::Literal>> ParallelExecutable::Run(
    const std::vector<ir::Literal>& arguments,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  return RunWhole(arguments, nullptr, trace_epoch);
}

Result<std::vector<ir::Literal>> ParallelExecutable::RunAsDevice(
    runtime::Communicator& communicator, const std::vector<ir::Literal>& arguments,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  ALPA_RETURN_IF_ERROR(CheckProcessCount(communicator.world_size()));
  return RunWhole(arguments, &communicator, trace_epoch);
}

Status ParallelExecutable::CheckHeld(const DeviceState& state,
                                     runtime::Communicator* communicator) const {
  if (communicator != nullptr) ALPA_RETURN_IF_ERROR(CheckProcessCount(communicator->world_size()));
  const auto [first, held] = Held(communicator);
  if (state.tiles_.empty()) {
    return FailedPrecondition(
        "the device state holds no values (a failed step handed them to the devices); Place "
        "the carried values again");
  }
  if (state.first_device_ != first || static_cast<int64_t>(state.tiles_.size()) != held) {
    return InvalidArgument(
        "the device state holds devices {} to {}, but this run is of devices {} to {}; Place it "
        "with the same communicator",
        state.first_device_, state.first_device_ + static_cast<int64_t>(state.tiles_.size()) - 1,
        first, first + held - 1);
  }
  return Status::Ok();
}

Result<DeviceState> ParallelExecutable::Place(const std::vector<ir::Literal>& carried,
                                              runtime::Communicator* communicator) const {
  if (communicator != nullptr) ALPA_RETURN_IF_ERROR(CheckProcessCount(communicator->world_size()));
  if (carried.size() != carried_parameters_.size()) {
    return InvalidArgument("%{} carries {} values from step to step, not {}",
                           step_->entry()->name(), carried_parameters_.size(), carried.size());
  }
  DeviceState state;
  state.first_device_ = Held(communicator).first;
  ALPA_ASSIGN_OR_RETURN(state.tiles_, Split(carried, carried_parameters_, communicator));
  return state;
}

Result<DeviceState> ParallelExecutable::Adopt(std::vector<std::vector<ir::Literal>> tiles,
                                              runtime::Communicator* communicator) const {
  if (communicator != nullptr) ALPA_RETURN_IF_ERROR(CheckProcessCount(communicator->world_size()));
  const auto [first, held] = Held(communicator);
  if (static_cast<int64_t>(tiles.size()) != held) {
    return InvalidArgument("the tiles are of {} devices, this process holds {}", tiles.size(),
                           held);
  }
  const std::vector<ir::Instruction*> locals = program_->entry()->parameters();
  for (size_t d = 0; d < tiles.size(); ++d) {
    if (tiles[d].size() != carried_parameters_.size()) {
      return InvalidArgument("device {} has {} tiles; the step carries {} values", first + d,
                             tiles[d].size(), carried_parameters_.size());
    }
    for (size_t i = 0; i < tiles[d].size(); ++i) {
      const ir::Shape& want = locals[static_cast<size_t>(carried_parameters_[i])]->shape();
      if (tiles[d][i].shape().dtype() != want.dtype() ||
          tiles[d][i].shape().dims() != want.dims()) {
        return InvalidArgument("device {}: the tile of %{} is {}, the program reads {}", first + d,
                               locals[static_cast<size_t>(carried_parameters_[i])]->name(),
                               tiles[d][i].shape().ToString(), want.ToString());
      }
    }
  }
  DeviceState state;
  state.first_device_ = first;
  state.tiles_ = std::move(tiles);
  return state;
}

std::vector<ParallelExecutable::CarriedValue> ParallelExecutable::carried_values() const {
  const std::vector<ir::Instruction*> parameters = step_->entry()->parameters();
  std::vector<CarriedValue> values;
  for (int64_t p : carried_parameters_) {
    const ir::Instruction& parameter = *parameters[static_cast<size_t>(p)];
    values.push_back(
        {parameter.name(), parameter.shape(), parameter_specs_[static_cast<size_t>(p)]});
  }
  return values;
}

Result<std::vector<ir::Literal>> ParallelExecutable::Step(
    DeviceState& state, const std::vector<ir::Literal>& fresh, runtime::Communicator* communicator,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  ALPA_RETURN_IF_ERROR(CheckHeld(state, communicator));
  if (fresh.size() != fresh_parameters_.size()) {
    return InvalidArgument("%{} takes {} fresh arguments a step (those not carried), not {}",
                           step_->entry()->name(), fresh_parameters_.size(), fresh.size());
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<ir::Literal>> fresh_tiles,
                        Split(fresh, fresh_parameters_, communicator));
  // Each device's arguments in parameter order, the carried tiles handed over without a copy.
  std::vector<std::vector<ir::Literal>> arguments(state.tiles_.size());
  for (size_t d = 0; d < arguments.size(); ++d) {
    size_t next_carried = 0, next_fresh = 0;
    for (size_t p = 0; p < carried_parameters_.size() + fresh_parameters_.size(); ++p) {
      const bool carried = next_carried < carried_parameters_.size() &&
                           carried_parameters_[next_carried] == static_cast<int64_t>(p);
      arguments[d].push_back(carried ? std::move(state.tiles_[d][next_carried++])
                                     : std::move(fresh_tiles[d][next_fresh++]));
    }
  }
  state.tiles_.clear();
  ALPA_ASSIGN_OR_RETURN(std::vector<std::vector<ir::Literal>> outputs,
                        Execute(std::move(arguments), communicator, trace_epoch));
  std::vector<std::vector<ir::Literal>> rest(outputs.size());
  state.tiles_.resize(outputs.size());
  for (size_t d = 0; d < outputs.size(); ++d) {
    for (int64_t leaf : carried_leaves_) {
      state.tiles_[d].push_back(std::move(outputs[d][static_cast<size_t>(leaf)]));
    }
    for (int64_t leaf : fresh_leaves_) {
      rest[d].push_back(std::move(outputs[d][static_cast<size_t>(leaf)]));
    }
  }
  return Assemble(std::move(rest), fresh_leaves_, communicator);
}

Result<std::vector<ir::Literal>> ParallelExecutable::Fetch(
    const DeviceState& state, runtime::Communicator* communicator) const {
  ALPA_RETURN_IF_ERROR(CheckHeld(state, communicator));
  return Assemble(state.tiles_, carried_leaves_, communicator);
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
  ALPA_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> all,
                        runtime::AllGatherLists(communicator, own));
  std::vector<size_t> counts;
  for (const std::vector<int64_t>& device : all) counts.push_back(device.size() / 3);
  if (std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) != counts.end()) {
    return Internal("the devices recorded different numbers of events ({})",
                    fmt::join(counts, ", "));
  }
  std::vector<std::vector<runtime::ExecutionEvent>> gathered(all.size());
  for (size_t d = 0; d < gathered.size(); ++d) {
    for (size_t e = 0; e < all[d].size(); e += 3) {
      const int64_t* event = &all[d][e];
      const runtime::InstructionStep& step = list[static_cast<size_t>(event[0])];
      gathered[d].push_back({step.instruction, step.collective, runtime::InterpretedStep(step),
                             static_cast<double>(event[1] - epoch_ns) * 1e-9,
                             static_cast<double>(event[2]) * 1e-9,
                             step.loop != nullptr ? step.loop->loop.fused_values() : 0});
    }
  }
  return gathered;
}

Result<std::vector<std::vector<ir::Literal>>> ParallelExecutable::ExecuteAsDevice(
    std::vector<ir::Literal> arguments, runtime::Communicator& communicator,
    const runtime::ExecuteOptions& execute,
    std::optional<std::chrono::steady_clock::time_point> trace_epoch) {
  const int64_t devices = device_count();
  const int64_t rank = communicator.rank();
  runtime::CommunicatorCollectives collectives(communicator);
  interp::DeviceContext context;
  context.partition_id = rank;
  context.num_partitions = devices;
  context.collectives = &collectives;
  runtime::ExecutionProfile profile;
  Result<ir::Literal> root = runtime::ExecuteInstructionList(*instructions_, std::move(arguments),
                                                             context, execute, &profile);
  if (!root.ok()) return root.status().WithContext(fmt::format("device {}", rank));
  std::vector<std::vector<ir::Literal>> mine(1);
  if (root->shape().IsTuple()) {
    mine[0] = std::move(root->tuple_elements());
  } else {
    mine[0].push_back(std::move(root).value());
  }
  // Each device's peak, all-gathered: its bytes, the step that reached it (-1: the arguments),
  // its arguments.
  const std::vector<int64_t> everyone = runtime::WorldGroup(devices);
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
  return mine;
}

}  // namespace alpa::api
