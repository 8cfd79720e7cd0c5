#include "runtime/pipeline_executor.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/strided_copy.h"
#include "runtime/device_executor.h"
#include "runtime/spmd_executor.h"
#include "support/units.h"

namespace alpa::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point epoch, Clock::time_point t) {
  return std::chrono::duration<double>(t - epoch).count();
}

bool IsTransfer(const PipelineInstruction& instruction) {
  return instruction.kind == PipelineInstruction::Kind::kSend ||
         instruction.kind == PipelineInstruction::Kind::kReceive;
}

// The collectives of a program on a sub-mesh: its device ids (partition ids) are positions in
// mesh_devices, the world's ranks are global ids.
class MeshCollectives : public interp::CollectiveBackend {
 public:
  MeshCollectives(Communicator& world, const std::vector<int64_t>& mesh_devices)
      : world_(world), mesh_devices_(mesh_devices) {}

  Status AllReduce(interp::CollectiveGroup group, interp::CollectiveReduction reduction,
                   const ir::Literal& input, ir::Literal& output) override {
    return world_.AllReduce(Global(group), reduction, input, output);
  }
  Status AllGather(interp::CollectiveGroup group, const ir::Literal& input,
                   ir::Literal& output) override {
    return world_.AllGather(Global(group), input, output);
  }
  Status ReduceScatter(interp::CollectiveGroup group, interp::CollectiveReduction reduction,
                       const ir::Literal& input, ir::Literal& output) override {
    return world_.ReduceScatter(Global(group), reduction, input, output);
  }
  Status AllToAll(interp::CollectiveGroup group, const ir::Literal& input,
                  ir::Literal& output) override {
    return world_.AllToAll(Global(group), input, output);
  }
  Status CollectivePermute(interp::CollectiveGroup group,
                           std::span<const interp::SourceTargetPair> pairs,
                           const ir::Literal& input, ir::Literal& output) override {
    std::vector<interp::SourceTargetPair> global;
    for (const auto& [source, target] : pairs) global.push_back({Id(source), Id(target)});
    return world_.CollectivePermute(Global(group), global, input, output);
  }
  Status Broadcast(interp::CollectiveGroup group, int64_t root, const ir::Literal& input,
                   ir::Literal& output) override {
    return world_.Broadcast(Global(group), Id(root), input, output);
  }

 private:
  int64_t Id(int64_t partition) const { return mesh_devices_[static_cast<size_t>(partition)]; }
  // The group in global ids; a collective is a blocking call, so one buffer serves them all.
  std::span<const int64_t> Global(interp::CollectiveGroup group) {
    group_.clear();
    for (int64_t partition : group) group_.push_back(Id(partition));
    return group_;
  }

  CommunicatorCollectives world_;
  const std::vector<int64_t>& mesh_devices_;
  std::vector<int64_t> group_;
};

Status Accumulate(ir::Literal& sum, const ir::Literal& value) {
  if (sum.shape() != value.shape()) {
    return Internal("accumulating {} into {}", value.shape().ToString(), sum.shape().ToString());
  }
  const int64_t n = sum.element_count();
  if (sum.shape().dtype() == ir::DType::kF32) {
    kernels::BinaryF32(kernels::BinaryFn::kAdd, sum.typed_data<float>(),
                       value.typed_data<float>(), sum.typed_data<float>(), n);
    return Status::Ok();
  }
  for (int64_t i = 0; i < n; ++i) sum.SetDouble(i, sum.GetDouble(i) + value.GetDouble(i));
  return Status::Ok();
}

// The copy between `box` of a row-major array of `dims` and a dense array of the box's sizes
// (kernels/strided_copy.h), `into_box` saying which way; `offset` is the box's first element.
kernels::StridedView BoxView(const std::vector<int64_t>& dims, const Box& box, bool into_box,
                             int64_t& offset) {
  const std::vector<int64_t> array_strides = ir::RowMajorStrides(dims);
  const std::vector<int64_t> box_strides = ir::RowMajorStrides(box.sizes);
  offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) offset += box.start[d] * array_strides[d];
  return into_box ? kernels::StridedView{box.sizes, box_strides, array_strides}
                  : kernels::StridedView{box.sizes, array_strides, box_strides};
}

Result<ir::Literal> ExtractBox(const ir::Literal& tile, const Box& box) {
  ir::Literal piece =
      ir::Literal::CreateUninitialized(ir::Shape::Array(tile.shape().dtype(), box.sizes));
  const int64_t element = ir::DTypeByteSize(tile.shape().dtype());
  int64_t offset = 0;
  const kernels::StridedView view = BoxView(tile.shape().dims(), box, false, offset);
  ALPA_RETURN_IF_ERROR(
      kernels::StridedCopy(element, view, tile.data() + offset * element, piece.data()));
  return piece;
}

// Writes `piece` into `box` of `tile`, or with `add` adds it to what the box holds.
Status InsertBox(ir::Literal& tile, const Box& box, const ir::Literal& piece, bool add) {
  const ir::Literal* source = &piece;
  ir::Literal sum;
  if (add) {
    ALPA_ASSIGN_OR_RETURN(sum, ExtractBox(tile, box));
    ALPA_RETURN_IF_ERROR(Accumulate(sum, piece));
    source = &sum;
  }
  const int64_t element = ir::DTypeByteSize(tile.shape().dtype());
  int64_t offset = 0;
  const kernels::StridedView view = BoxView(tile.shape().dims(), box, true, offset);
  return kernels::StridedCopy(element, view, source->data(), tile.data() + offset * element);
}

void Scale(ir::Literal& value, double factor) {
  const int64_t n = value.element_count();
  if (value.shape().dtype() == ir::DType::kF32) {
    float* data = value.typed_data<float>();
    const float f = static_cast<float>(factor);
    for (int64_t i = 0; i < n; ++i) data[i] *= f;
    return;
  }
  for (int64_t i = 0; i < n; ++i) value.SetDouble(i, value.GetDouble(i) * factor);
}

// One device's run of its list.
class DeviceRun {
 public:
  DeviceRun(const PipelineDevice& device, std::vector<ir::Literal>& slots,
            std::vector<ir::Literal>* host_inputs, Communicator& world, Mailbox& mailbox,
            const PipelineRunOptions& options, PipelineProfile& profile)
      : device_(device),
        slots_(slots),
        host_inputs_(host_inputs),
        world_(world),
        mailbox_(mailbox),
        options_(options),
        profile_(profile) {
    for (const ir::Literal& slot : slots_) held_ += LiteralBytes(slot);
    profile_.peak_bytes = held_;
  }

  Status Run() {
    for (const MeshProgram& program : device_.programs) {
      collectives_.push_back(std::make_unique<MeshCollectives>(world_, program.mesh_devices));
    }
    for (size_t i = 0; i < device_.instructions.size(); ++i) {
      const PipelineInstruction& instruction = device_.instructions[i];
      index_ = static_cast<int64_t>(i);
      const Clock::time_point start = Clock::now();
      Status status = Execute(instruction);
      if (!status.ok()) return status.WithContext(instruction.label);
      const Clock::time_point end = Clock::now();
      const double seconds = std::chrono::duration<double>(end - start).count();
      if (instruction.kind == PipelineInstruction::Kind::kRun) profile_.busy_s += seconds;
      if (options_.trace) {
        profile_.events.push_back({instruction.label, index_, IsTransfer(instruction),
                                   SecondsSince(options_.epoch, start), seconds});
      }
      for (int64_t slot : instruction.release) Set(slot, ir::Literal());
    }
    return mailbox_.Flush(device_.device);
  }

 private:
  ir::Literal& Slot(int64_t slot) { return slots_[static_cast<size_t>(slot)]; }

  // Replaces a slot's value, keeping the byte count.
  void Set(int64_t slot, ir::Literal value) {
    held_ += LiteralBytes(value) - LiteralBytes(Slot(slot));
    Slot(slot) = std::move(value);
  }

  Status Reached(int64_t bytes, const std::string& label, std::string_view what) {
    if (options_.memory_limit_bytes > 0 && bytes > options_.memory_limit_bytes) {
      return Status(
          StatusCode::kResourceExhausted,
          fmt::format("out of memory: {} takes the device's live buffers to {}, past "
                      "the {} it may use",
                      what, FormatBytes(bytes), FormatBytes(options_.memory_limit_bytes)));
    }
    if (bytes > profile_.peak_bytes) {
      profile_.peak_bytes = bytes;
      profile_.peak_label = label;
      profile_.peak_instruction = index_;
    }
    return Status::Ok();
  }

  Status Execute(const PipelineInstruction& instruction) {
    switch (instruction.kind) {
      case PipelineInstruction::Kind::kRun:
        return RunProgram(instruction);
      case PipelineInstruction::Kind::kSend: {
        ALPA_ASSIGN_OR_RETURN(ir::Literal piece,
                              ExtractBox(Slot(instruction.slot), instruction.box));
        if (instruction.peer != device_.device) profile_.sent_bytes += piece.size_bytes();
        return mailbox_.Post(device_.device, instruction.peer, instruction.tag, std::move(piece));
      }
      case PipelineInstruction::Kind::kReceive: {
        ALPA_ASSIGN_OR_RETURN(
            ir::Literal piece,
            mailbox_.Take(instruction.peer, device_.device, instruction.tag,
                          ir::Shape::Array(instruction.tile.dtype(), instruction.box.sizes)));
        if (Slot(instruction.slot).shape() != instruction.tile) {
          Set(instruction.slot, ir::Literal::CreateZeros(instruction.tile));
        }
        ALPA_RETURN_IF_ERROR(
            InsertBox(Slot(instruction.slot), instruction.box, piece, instruction.add));
        return Reached(held_, instruction.label, "a received tile");
      }
      case PipelineInstruction::Kind::kAccumulate: {
        ir::Literal& source = Slot(instruction.source_slot);
        if (Slot(instruction.slot).shape() != source.shape()) {  // the first: moved, not added
          held_ -= LiteralBytes(Slot(instruction.slot));
          Slot(instruction.slot) = std::move(source);
          source = ir::Literal();
          return Status::Ok();
        }
        return Accumulate(Slot(instruction.slot), source);
      }
      case PipelineInstruction::Kind::kScale:
        Scale(Slot(instruction.slot), instruction.factor);
        return Status::Ok();
      case PipelineInstruction::Kind::kLoad: {
        if (host_inputs_ == nullptr ||
            instruction.host_input >= static_cast<int64_t>(host_inputs_->size())) {
          return InvalidArgument("host input {} was not given", instruction.host_input);
        }
        Set(instruction.slot,
            std::move((*host_inputs_)[static_cast<size_t>(instruction.host_input)]));
        return Reached(held_, instruction.label, "a loaded input");
      }
      case PipelineInstruction::Kind::kZeros:
        Set(instruction.slot, ir::Literal::CreateZeros(instruction.tile));
        return Reached(held_, instruction.label, "a zeroed tile");
    }
    return Internal("unknown pipeline instruction");
  }

  Status RunProgram(const PipelineInstruction& instruction) {
    const MeshProgram& program = device_.programs[static_cast<size_t>(instruction.program)];
    // The arguments leave their slots for the run and come back after it (empty where freed),
    // counted in held_ throughout.
    std::vector<ir::Literal> arguments;
    arguments.reserve(instruction.inputs.size());
    int64_t argument_bytes = 0;
    for (int64_t slot : instruction.inputs) {
      argument_bytes += LiteralBytes(Slot(slot));
      arguments.push_back(std::move(Slot(slot)));
    }
    interp::DeviceContext context;
    const auto& mesh = program.mesh_devices;
    context.partition_id = std::find(mesh.begin(), mesh.end(), device_.device) - mesh.begin();
    context.num_partitions = static_cast<int64_t>(mesh.size());
    context.collectives = collectives_[static_cast<size_t>(instruction.program)].get();
    // The run may free what the instruction frees after it. What its outputs replace (a stage's
    // weights and optimizer state, by the update) lives through the run, as the memory model
    // counts parameters (cost/liveness.h): XLA's in-place update of donated buffers would hold
    // less, and comes with the memory model's update phase.
    std::vector<bool> donated;
    for (int64_t slot : instruction.inputs) {
      donated.push_back(std::count(instruction.release.begin(), instruction.release.end(), slot));
    }
    ExecuteOptions execute;
    ExecutionProfile run;
    Result<ir::Literal> result =
        ExecuteOnBorrowedArguments(*program.list, arguments, context, execute, &run, &donated);
    const int64_t held_before = held_;
    held_ -= argument_bytes;
    for (size_t i = 0; i < arguments.size(); ++i) {
      held_ += LiteralBytes(arguments[i]);
      Slot(instruction.inputs[i]) = std::move(arguments[i]);
    }
    if (!result.ok()) return result.status();
    ALPA_RETURN_IF_ERROR(
        Reached(held_before + run.peak_bytes - run.argument_bytes, instruction.label,
                fmt::format("{} (at %{})", program.name,
                            run.peak_instruction ? run.peak_instruction->name() : "its inputs")));
    ir::Literal value = std::move(result).value();
    std::vector<ir::Literal>& elements = value.tuple_elements();
    if (elements.size() != instruction.outputs.size()) {
      return Internal("{} returned {} values for {} output slots", program.name, elements.size(),
                      instruction.outputs.size());
    }
    for (size_t i = 0; i < elements.size(); ++i) {
      Set(instruction.outputs[i], std::move(elements[i]));
    }
    return Reached(held_, instruction.label, program.name);
  }

  const PipelineDevice& device_;
  std::vector<ir::Literal>& slots_;
  std::vector<ir::Literal>* host_inputs_;
  Communicator& world_;
  Mailbox& mailbox_;
  const PipelineRunOptions& options_;
  PipelineProfile& profile_;
  std::vector<std::unique_ptr<MeshCollectives>> collectives_;  // by program
  int64_t held_ = 0;
  int64_t index_ = -1;  // of the instruction running
};

Status CheckSlotCount(const PipelineDevice& device, std::vector<ir::Literal>& slots) {
  if (static_cast<int64_t>(slots.size()) > device.slot_count) {
    return InvalidArgument("device {}: {} slots for a list of {}", device.device, slots.size(),
                           device.slot_count);
  }
  slots.resize(static_cast<size_t>(device.slot_count));
  return Status::Ok();
}

}  // namespace

Result<std::vector<PipelineProfile>> RunPipeline(
    const std::vector<PipelineDevice>& devices, std::vector<std::vector<ir::Literal>>& slots,
    const PipelineRunOptions& options, std::vector<std::vector<ir::Literal>>* host_inputs) {
  const int64_t count = static_cast<int64_t>(devices.size());
  if (count < 1 || slots.size() != devices.size()) {
    return InvalidArgument("RunPipeline: {} devices and the slots of {}", count, slots.size());
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].device != static_cast<int64_t>(d)) {
      return InvalidArgument("RunPipeline: device list entry {} is device {}", d,
                             devices[d].device);
    }
    ALPA_RETURN_IF_ERROR(CheckSlotCount(devices[d], slots[d]).WithContext("RunPipeline"));
  }
  if (host_inputs != nullptr && host_inputs->size() != devices.size()) {
    return InvalidArgument("RunPipeline: host inputs of {} devices for {}", host_inputs->size(),
                           devices.size());
  }
  InProcessWorld world(count, options.communicator);
  InProcessMailbox mailbox(options.communicator.timeout_seconds);
  std::vector<PipelineProfile> profiles(devices.size());
  std::optional<DeviceThreads> own_threads;
  DeviceThreads& threads =
      options.threads != nullptr ? *options.threads : own_threads.emplace(count);
  if (threads.devices() != count) {
    return InvalidArgument("RunPipeline: {} device threads for {} devices", threads.devices(),
                           count);
  }
  const std::vector<Status> statuses = threads.Run([&](int64_t rank) -> Status {
    omp_set_num_threads(static_cast<int>(threads.cores(rank).size()));
    const size_t d = static_cast<size_t>(rank);
    return DeviceRun(devices[d], slots[d], host_inputs != nullptr ? &(*host_inputs)[d] : nullptr,
                     world.device(rank), mailbox, options, profiles[d])
        .Run();
  });
  ALPA_RETURN_IF_ERROR(CombineDeviceStatuses(statuses, "pipelined step"));
  return profiles;
}

Result<PipelineProfile> RunPipelineDevice(const PipelineDevice& device,
                                          std::vector<ir::Literal>& slots, Communicator& world,
                                          Mailbox& mailbox, const PipelineRunOptions& options,
                                          std::vector<ir::Literal>* host_inputs) {
  const std::string name = fmt::format("device {}", device.device);
  if (world.rank() != device.device) {
    return InvalidArgument("{}: its list runs on the communicator's rank {}", name, world.rank());
  }
  ALPA_RETURN_IF_ERROR(CheckSlotCount(device, slots).WithContext(name));
  PipelineProfile profile;
  const Status status =
      DeviceRun(device, slots, host_inputs, world, mailbox, options, profile).Run();
  if (!status.ok()) return status.WithContext(name);
  return profile;
}

Result<std::vector<PipelineProfile>> GatherPipelineProfiles(
    Communicator& world, const std::vector<PipelineDevice>& devices, const PipelineProfile& own,
    bool trace, std::chrono::steady_clock::time_point epoch) {
  const int64_t count = world.world_size();
  if (static_cast<int64_t>(devices.size()) != count) {
    return InvalidArgument("GatherPipelineProfiles: {} device lists for a world of {}",
                           devices.size(), count);
  }
  const auto nanoseconds = [](double seconds) { return static_cast<int64_t>(seconds * 1e9); };
  const int64_t epoch_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(epoch.time_since_epoch()).count();
  // Each device's figures, then with `trace` its events as (instruction, start on the host's
  // clock, duration) in nanoseconds.
  constexpr size_t kFigures = 4;
  std::vector<int64_t> own_list = {own.peak_bytes, own.peak_instruction, nanoseconds(own.busy_s),
                                   own.sent_bytes};
  for (const PipelineEvent& event : trace ? own.events : std::vector<PipelineEvent>{}) {
    own_list.insert(own_list.end(), {event.instruction, epoch_ns + nanoseconds(event.start_s),
                                     nanoseconds(event.duration_s)});
  }
  ALPA_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> lists,
                        AllGatherLists(world, own_list));
  std::vector<PipelineProfile> profiles(static_cast<size_t>(count));
  for (size_t d = 0; d < profiles.size(); ++d) {
    const std::vector<int64_t>& list = lists[d];
    const std::vector<PipelineInstruction>& instructions = devices[d].instructions;
    auto instruction_at = [&](int64_t index) -> Result<const PipelineInstruction*> {
      if (index < 0 || index >= static_cast<int64_t>(instructions.size())) {
        return Internal("device {} reports instruction {} of a list of {}", d, index,
                        instructions.size());
      }
      return &instructions[static_cast<size_t>(index)];
    };
    if (list.size() < kFigures || (list.size() - kFigures) % 3 != 0) {
      return Internal("device {} reports {} figures", d, list.size());
    }
    PipelineProfile& profile = profiles[d];
    profile.peak_bytes = list[0];
    profile.peak_instruction = list[1];
    if (list[1] >= 0) {
      ALPA_ASSIGN_OR_RETURN(const PipelineInstruction* peak, instruction_at(list[1]));
      profile.peak_label = peak->label;
    }
    profile.busy_s = static_cast<double>(list[2]) * 1e-9;
    profile.sent_bytes = list[3];
    for (size_t e = kFigures; e < list.size(); e += 3) {
      ALPA_ASSIGN_OR_RETURN(const PipelineInstruction* instruction, instruction_at(list[e]));
      profile.events.push_back({instruction->label, list[e], IsTransfer(*instruction),
                                static_cast<double>(list[e + 1] - epoch_ns) * 1e-9,
                                static_cast<double>(list[e + 2]) * 1e-9});
    }
  }
  return profiles;
}

}  // namespace alpa::runtime
