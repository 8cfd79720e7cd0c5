#include "api/pipeline_lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "spmd/cross_mesh.h"
#include "spmd/literal_split.h"

namespace alpa::api {

using runtime::PipelineInstruction;
using Kind = PipelineInstruction::Kind;

// A value crossing from one stage to another every micro-batch: a sent value to a stage that
// receives it (forward), or the gradient of a received activation back to the cotangent of the
// value it came from (backward).
struct Transfer {
  int64_t from_stage = 0;
  int64_t from_output = 0;  // forward: sent value j; backward: input gradient k
  int64_t to_stage = 0;
  int64_t to_parameter = 0;  // step parameter of to_stage
  bool add = false;          // several consumers' cotangents meet: summed
  ir::Shape tile;            // the receiver's local shape
  spmd::CrossMeshPlan plan;
  int64_t tag_base = 0;  // + m * pieces + piece
};

class PipelineLowering {
 public:
  explicit PipelineLowering(PipeshardExecutable& exe)
      : exe_(exe), stages_(*exe.stages_), micro_batches_(exe.schedule_.num_micro_batches) {}

  Status Lower() {
    ALPA_RETURN_IF_ERROR(SetUpDevices());
    ALPA_RETURN_IF_ERROR(PlanTransfers());
    ALPA_RETURN_IF_ERROR(PlanExchanges());
    const pipeline::Schedule& schedule = exe_.schedule_;
    const int64_t groups = schedule.num_devices;
    for (int64_t g = 0; g < groups; ++g) {
      for (const pipeline::Task& task : schedule.device_tasks[static_cast<size_t>(g)]) {
        const int64_t stage = task.chunk * groups + g;
        for (int64_t p = 0; p < Positions(stage); ++p) {
          if (task.kind == pipeline::TaskKind::kForward) {
            EmitForward(stage, task.micro_batch, p);
          } else {
            EmitBackward(stage, task.micro_batch, p);
          }
        }
      }
      // Sends before receives: a device never waits on a receive before its own sends are out.
      for (const auto emit :
           {&PipelineLowering::EmitExchangeSends, &PipelineLowering::EmitExchangeReceives,
            &PipelineLowering::EmitUpdate}) {
        for (int64_t c = 0; c < exe_.num_chunks_; ++c) {
          for (int64_t p = 0; p < Positions(c * groups + g); ++p) (this->*emit)(c * groups + g, p);
        }
      }
    }
    return Status::Ok();
  }

 private:
  // Slots of one stage on one of its devices that only the lowering needs.
  struct Outputs {
    std::vector<std::vector<int64_t>> forward;   // [m][forward output]
    std::vector<std::vector<int64_t>> backward;  // [m][backward output]
    std::vector<int64_t> sums;                   // [gradient]
    std::map<int64_t, int64_t> program;          // part (0 F, 1 B, 2 U) -> program index
  };

  int64_t Positions(int64_t stage) const {
    return static_cast<int64_t>(stages_[static_cast<size_t>(stage)].devices.size());
  }
  const StageProgram& StageAt(int64_t stage) const { return stages_[static_cast<size_t>(stage)]; }
  int64_t DeviceOf(int64_t stage, int64_t position) const {
    return StageAt(stage).devices[static_cast<size_t>(position)];
  }
  runtime::PipelineDevice& Device(int64_t stage, int64_t position) {
    return exe_.devices_[static_cast<size_t>(DeviceOf(stage, position))];
  }
  int64_t NewSlot(int64_t stage, int64_t position) { return Device(stage, position).slot_count++; }
  PipeshardExecutable::StageSlots& Slots(int64_t stage, int64_t position) {
    return exe_.slots_of_[static_cast<size_t>(stage)][static_cast<size_t>(position)];
  }
  Outputs& OutputsOf(int64_t stage, int64_t position) {
    return outputs_[static_cast<size_t>(stage)][static_cast<size_t>(position)];
  }
  PipelineInstruction& Emit(int64_t stage, int64_t position, PipelineInstruction instruction) {
    return Device(stage, position).instructions.emplace_back(std::move(instruction));
  }
  void ReleaseAfterLast(int64_t stage, int64_t position, const std::vector<int64_t>& slots) {
    std::vector<int64_t>& release = Device(stage, position).instructions.back().release;
    release.insert(release.end(), slots.begin(), slots.end());
  }

  Status SetUpDevices() {
    int64_t devices = 0;
    for (const StageProgram& stage : stages_) {
      for (int64_t d : stage.devices) devices = std::max(devices, d + 1);
    }
    exe_.devices_.resize(static_cast<size_t>(devices));
    for (int64_t d = 0; d < devices; ++d) exe_.devices_[static_cast<size_t>(d)].device = d;
    exe_.slots_of_.assign(stages_.size(), {});
    exe_.host_inputs_.assign(static_cast<size_t>(devices), {});
    outputs_.assign(stages_.size(), {});
    for (size_t s = 0; s < stages_.size(); ++s) {
      const int64_t stage = static_cast<int64_t>(s);
      const StageProgram& program = stages_[s];
      exe_.slots_of_[s].resize(program.devices.size());
      outputs_[s].resize(program.devices.size());
      for (int64_t p = 0; p < Positions(stage); ++p) {
        PipeshardExecutable::StageSlots& slots = Slots(stage, p);
        const size_t parameters = program.roles.parameters.size();
        slots.state.assign(parameters, -1);
        slots.inputs.assign(static_cast<size_t>(micro_batches_),
                            std::vector<int64_t>(parameters, -1));
        slots.host_inputs = slots.inputs;
        slots.loss.assign(static_cast<size_t>(micro_batches_), -1);
        for (size_t i = 0; i < parameters; ++i) {
          const spmd::StageParameter role = program.roles.parameters[i];
          if (spmd::IsStateParameter(role)) {
            slots.state[i] = NewSlot(stage, p);
            continue;
          }
          for (auto& inputs : slots.inputs) inputs[i] = NewSlot(stage, p);
          if (role != spmd::StageParameter::kBatch) continue;
          std::vector<ir::Literal>& host =
              exe_.host_inputs_[static_cast<size_t>(DeviceOf(stage, p))];
          for (int64_t m = 0; m < micro_batches_; ++m) {
            slots.host_inputs[static_cast<size_t>(m)][i] = static_cast<int64_t>(host.size());
            host.emplace_back();
          }
        }
        Outputs& outputs = OutputsOf(stage, p);
        const int64_t forward = program.split.forward.module->entry()->root()->operand_count();
        const int64_t backward = program.split.backward.module->entry()->root()->operand_count();
        outputs.forward.resize(static_cast<size_t>(micro_batches_));
        outputs.backward.resize(static_cast<size_t>(micro_batches_));
        for (int64_t m = 0; m < micro_batches_; ++m) {
          for (int64_t k = 0; k < forward; ++k) {
            outputs.forward[static_cast<size_t>(m)].push_back(NewSlot(stage, p));
          }
          for (int64_t k = 0; k < backward; ++k) {
            outputs.backward[static_cast<size_t>(m)].push_back(NewSlot(stage, p));
          }
          if (program.loss.has_loss) {
            slots.loss[static_cast<size_t>(m)] =
                outputs.forward[static_cast<size_t>(m)][program.roles.sent_leaves.size()];
          }
        }
        for (int64_t g = 0; g < program.split.num_gradients; ++g) {
          outputs.sums.push_back(NewSlot(stage, p));
        }
        for (int64_t part = 0; part < 3; ++part) {
          ALPA_RETURN_IF_ERROR(AddProgram(stage, p, part));
        }
      }
    }
    return Status::Ok();
  }

  Status AddProgram(int64_t stage, int64_t position, int64_t part) {
    const StageProgram& program = StageAt(stage);
    const spmd::StagePart& split = part == 0   ? program.split.forward
                                   : part == 1 ? program.split.backward
                                               : program.split.update;
    const std::pair<int64_t, int64_t> key{stage, part};
    auto it = lists_.find(key);
    if (it == lists_.end()) {
      ALPA_ASSIGN_OR_RETURN(runtime::InstructionList list,
                            runtime::CompileInstructionList(*split.module, exe_.options_.kernels));
      it = lists_.emplace(key, std::make_shared<runtime::InstructionList>(std::move(list))).first;
    }
    runtime::PipelineDevice& device = Device(stage, position);
    OutputsOf(stage, position).program[part] = static_cast<int64_t>(device.programs.size());
    static constexpr const char* kParts[] = {"forward", "backward", "update"};
    device.programs.push_back({std::shared_ptr<const ir::Module>(exe_.stages_, split.module.get()),
                               it->second, program.devices,
                               fmt::format("stage {} {}", stage, kParts[part])});
    return Status::Ok();
  }

  // The step parameter that is the stage loss's parameter `loss_parameter`.
  static int64_t StepParameterOf(const StageProgram& stage, int64_t loss_parameter) {
    const std::vector<int64_t>& of = stage.loss_parameter;
    return std::find(of.begin(), of.end(), loss_parameter) - of.begin();
  }

  // A transfer made `times` a step (every micro-batch, or once).
  Result<Transfer> PlanTransfer(Transfer transfer, const spmd::MeshPlacement& from,
                                const spmd::MeshPlacement& to, const ir::Shape& global,
                                int64_t times) {
    ALPA_ASSIGN_OR_RETURN(transfer.plan, spmd::PlanCrossMeshTransfer(global, from, to));
    ALPA_ASSIGN_OR_RETURN(transfer.tile,
                          spmd::LocalShape(global, to.spec, to.mesh_shape, "a received value"));
    transfer.tag_base = next_tag_;
    next_tag_ += times * static_cast<int64_t>(transfer.plan.pieces.size() +
                                              transfer.plan.gather_pieces.size());
    exe_.cross_mesh_bytes_ += times * transfer.plan.bytes_between_devices;
    exe_.between_meshes_bytes_ += times * transfer.plan.bytes_between_meshes;
    return transfer;
  }
  Status AddTransfer(Transfer transfer, const spmd::MeshPlacement& from,
                     const spmd::MeshPlacement& to, const ir::Shape& global) {
    ALPA_ASSIGN_OR_RETURN(Transfer planned,
                          PlanTransfer(std::move(transfer), from, to, global, micro_batches_));
    transfers_.push_back(std::move(planned));
    return Status::Ok();
  }

  // A weight read by several stages (a tied embedding) has a copy, optimizer state and gradient
  // sum on each; before the updates every holder replaces its sum by the sum of all holders'
  // (Megatron's all-reduce of the embedding's gradient between its first and last stage), added
  // in stage order, so the copies take the same update.
  Status PlanExchanges() {
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> holders;  // weight -> (stage, i)
    for (size_t s = 0; s < stages_.size(); ++s) {
      const std::vector<int64_t>& weights = stages_[s].model_weights;
      for (size_t i = 0; i < weights.size(); ++i) {
        if (stages_[s].weight_gradient[i] >= 0) {
          holders[weights[i]].push_back({static_cast<int64_t>(s), static_cast<int64_t>(i)});
        }
      }
    }
    for (const auto& [weight, readers] : holders) {
      if (readers.size() < 2) continue;
      for (const auto& [t, ti] : readers) {
        const StageProgram& to = StageAt(t);
        const int64_t g = to.weight_gradient[static_cast<size_t>(ti)];
        Exchange& exchange = exchanges_.emplace_back();
        exchange.to_stage = t;
        exchange.gradient = g;
        for (const auto& [h, hi] : readers) {
          const StageProgram& from = StageAt(h);
          const int64_t from_gradient = from.weight_gradient[static_cast<size_t>(hi)];
          Transfer transfer;
          transfer.from_stage = h;
          transfer.from_output = from_gradient;
          transfer.to_stage = t;
          transfer.add = true;
          const ir::Shape& global =
              to.step->entry()->parameters()[static_cast<size_t>(ti)]->shape();
          ALPA_ASSIGN_OR_RETURN(
              Transfer planned,
              PlanTransfer(std::move(transfer),
                           {from.mesh_shape,
                            from.gradient_specs[static_cast<size_t>(from_gradient)], from.devices},
                           {to.mesh_shape, to.gradient_specs[static_cast<size_t>(g)], to.devices},
                           global, 1));
          exchange.from.push_back(std::move(planned));
        }
      }
    }
    return Status::Ok();
  }

  void EmitExchangeSends(int64_t stage, int64_t position) {
    for (const Exchange& exchange : exchanges_) {
      for (const Transfer& transfer : exchange.from) {
        if (transfer.from_stage != stage) continue;
        EmitTransfer(Kind::kSend, transfer, 0, position,
                  OutputsOf(stage, position).sums[static_cast<size_t>(transfer.from_output)],
                  "gradient sum");
      }
    }
  }

  void EmitExchangeReceives(int64_t stage, int64_t position) {
    for (const Exchange& exchange : exchanges_) {
      if (exchange.to_stage != stage) continue;
      const int64_t total = NewSlot(stage, position);
      PipelineInstruction zeros;
      zeros.kind = Kind::kZeros;
      zeros.label = fmt::format("gradient sum s{}", stage);
      zeros.slot = total;
      zeros.tile = exchange.from.front().tile;
      Emit(stage, position, std::move(zeros));
      for (const Transfer& transfer : exchange.from) {
        EmitTransfer(Kind::kReceive, transfer, 0, position, total, "gradient sum");
      }
      int64_t& sum = OutputsOf(stage, position).sums[static_cast<size_t>(exchange.gradient)];
      ReleaseAfterLast(stage, position, {sum});
      sum = total;
    }
  }

  Status PlanTransfers() {
    // Producer of every sent value, by the model's instruction name.
    std::map<std::string, std::pair<int64_t, int64_t>> producer;
    std::map<std::pair<int64_t, int64_t>, int64_t> differentiable_consumers;
    for (size_t s = 0; s < stages_.size(); ++s) {
      for (size_t j = 0; j < stages_[s].loss.sent.size(); ++j) {
        producer[stages_[s].loss.sent[j]] = {static_cast<int64_t>(s), static_cast<int64_t>(j)};
      }
    }
    for (const StageProgram& stage : stages_) {
      for (int64_t a : stage.loss.activations) {
        ++differentiable_consumers[producer.at(stage.loss.received[static_cast<size_t>(a)])];
      }
    }
    for (size_t w = 0; w < stages_.size(); ++w) {
      const StageProgram& to = stages_[w];
      const std::vector<ir::Instruction*> parameters = to.loss.module->entry()->parameters();
      for (size_t r = 0; r < to.loss.received.size(); ++r) {
        if (to.loss.received[r].empty()) continue;
        auto source = producer.find(to.loss.received[r]);
        if (source == producer.end() || source->second.first >= static_cast<int64_t>(w)) {
          return Internal("stage {} receives %{}, which no earlier stage sends", w,
                          to.loss.received[r]);
        }
        const auto [u, j] = source->second;
        const StageProgram& from = StageAt(u);
        const ir::Shape& global = parameters[r]->shape();
        const int64_t to_parameter = StepParameterOf(to, static_cast<int64_t>(r));
        Transfer forward;
        forward.from_stage = u;
        forward.from_output = j;
        forward.to_stage = static_cast<int64_t>(w);
        forward.to_parameter = to_parameter;
        ALPA_RETURN_IF_ERROR(AddTransfer(
            forward,
            {from.mesh_shape,
             from.result_specs[static_cast<size_t>(from.roles.sent_leaves[static_cast<size_t>(j)])],
             from.devices},
            {to.mesh_shape, to.parameter_specs[static_cast<size_t>(to_parameter)], to.devices},
            global));
        // The gradient of an activation goes back to the cotangent of the value it came from.
        const auto& activations = to.loss.activations;
        auto a = std::find(activations.begin(), activations.end(), static_cast<int64_t>(r));
        if (a == activations.end()) continue;
        const int64_t k = a - activations.begin();
        const auto& cotangent_of = from.loss.cotangent_of;
        const int64_t c =
            std::find(cotangent_of.begin(), cotangent_of.end(), j) - cotangent_of.begin();
        const int64_t ct_parameter =
            StepParameterOf(from, from.loss.cotangents[static_cast<size_t>(c)]);
        Transfer backward;
        backward.from_stage = static_cast<int64_t>(w);
        backward.from_output = k;
        backward.to_stage = u;
        backward.to_parameter = ct_parameter;
        backward.add = differentiable_consumers.at({u, j}) > 1;
        ALPA_RETURN_IF_ERROR(
            AddTransfer(backward,
                        {to.mesh_shape,
                         to.result_specs[static_cast<size_t>(
                             to.roles.input_gradient_leaves[static_cast<size_t>(k)])],
                         to.devices},
                        {from.mesh_shape, from.parameter_specs[static_cast<size_t>(ct_parameter)],
                         from.devices},
                        global));
      }
    }
    return Status::Ok();
  }

  int64_t SlotOf(int64_t stage, int64_t m, int64_t position, const spmd::PartInput& input) {
    const PipeshardExecutable::StageSlots& slots = Slots(stage, position);
    const Outputs& outputs = OutputsOf(stage, position);
    const StageProgram& program = StageAt(stage);
    switch (input.kind) {
      case spmd::PartInput::Kind::kParameter: {
        const size_t p = static_cast<size_t>(input.index);
        return IsState(program, input.index) ? slots.state[p]
                                             : slots.inputs[static_cast<size_t>(m)][p];
      }
      case spmd::PartInput::Kind::kResidual:
        return outputs.forward[static_cast<size_t>(m)][program.roles.sent_leaves.size() +
                                                       (program.loss.has_loss ? 1 : 0) +
                                                       static_cast<size_t>(input.index)];
      case spmd::PartInput::Kind::kGradient:
        return outputs.sums[static_cast<size_t>(input.index)];
    }
    return -1;
  }

  std::vector<int64_t> InputSlots(int64_t stage, int64_t m, int64_t position,
                                  const spmd::StagePart& part) {
    std::vector<int64_t> slots;
    for (const spmd::PartInput& input : part.inputs) {
      slots.push_back(SlotOf(stage, m, position, input));
    }
    return slots;
  }

  // The sends (on the sending stage's device at `position`) or the receives (on the receiving
  // stage's) of micro-batch m's pieces of `transfer`, from or into `slot`. A receiver on the
  // all-gather route then hands its chunk to the other replicas and takes theirs.
  void EmitTransfer(Kind kind, const Transfer& transfer, int64_t m, int64_t position, int64_t slot,
                    const std::string& what) {
    const bool send = kind == Kind::kSend;
    const std::vector<spmd::TilePiece>& pieces = transfer.plan.pieces;
    const std::vector<spmd::TilePiece>& gather = transfer.plan.gather_pieces;
    const int64_t first_tag =
        transfer.tag_base + m * static_cast<int64_t>(pieces.size() + gather.size());
    for (size_t i = 0; i < pieces.size(); ++i) {
      const spmd::TilePiece& piece = pieces[i];
      if ((send ? piece.source : piece.target) != position) continue;
      PipelineInstruction instruction;
      instruction.kind = kind;
      instruction.label = fmt::format("{} {} m{} s{}{}s{}", send ? "send" : "receive", what, m,
                                      send ? transfer.from_stage : transfer.to_stage,
                                      send ? "->" : "<-",
                                      send ? transfer.to_stage : transfer.from_stage);
      instruction.slot = slot;
      instruction.peer = send ? DeviceOf(transfer.to_stage, piece.target)
                              : DeviceOf(transfer.from_stage, piece.source);
      instruction.tag = first_tag + static_cast<int64_t>(i);
      instruction.box = send ? runtime::Box{piece.source_start, piece.sizes}
                             : runtime::Box{piece.target_start, piece.sizes};
      instruction.tile = transfer.tile;
      instruction.add = transfer.add;
      Emit(send ? transfer.from_stage : transfer.to_stage, position, std::move(instruction));
    }
    if (send) return;
    // The chunk goes on as a copy: it holds the sum of every transfer into the slot so far.
    for (const bool hand_on : {true, false}) {
      for (size_t i = 0; i < gather.size(); ++i) {
        const spmd::TilePiece& piece = gather[i];
        if ((hand_on ? piece.source : piece.target) != position) continue;
        PipelineInstruction instruction;
        instruction.kind = hand_on ? Kind::kSend : Kind::kReceive;
        instruction.label = fmt::format("all-gather {} m{} s{}", what, m, transfer.to_stage);
        instruction.slot = slot;
        instruction.peer = DeviceOf(transfer.to_stage, hand_on ? piece.target : piece.source);
        instruction.tag = first_tag + static_cast<int64_t>(pieces.size() + i);
        instruction.box = runtime::Box{piece.source_start, piece.sizes};
        instruction.tile = transfer.tile;
        Emit(transfer.to_stage, position, std::move(instruction));
      }
    }
  }

  // The per-micro-batch parameters `part` reads.
  std::set<int64_t> InputsRead(int64_t stage, const spmd::StagePart& part) const {
    std::set<int64_t> read;
    for (const spmd::PartInput& input : part.inputs) {
      if (input.kind == spmd::PartInput::Kind::kParameter &&
          !IsState(StageAt(stage), input.index)) {
        read.insert(input.index);
      }
    }
    return read;
  }
  static bool IsState(const StageProgram& program, int64_t parameter) {
    return spmd::IsStateParameter(program.roles.parameters[static_cast<size_t>(parameter)]);
  }

  void EmitForward(int64_t stage, int64_t m, int64_t position) {
    const StageProgram& program = StageAt(stage);
    const size_t mb = static_cast<size_t>(m);
    const PipeshardExecutable::StageSlots& slots = Slots(stage, position);
    std::set<int64_t> read = InputsRead(stage, program.split.forward);
    read.merge(InputsRead(stage, program.split.backward));
    for (int64_t p : read) {
      const int64_t host = slots.host_inputs[mb][static_cast<size_t>(p)];
      if (host < 0) continue;
      PipelineInstruction load;
      load.kind = Kind::kLoad;
      load.label = fmt::format("load m{} s{}", m, stage);
      load.slot = slots.inputs[mb][static_cast<size_t>(p)];
      load.host_input = host;
      Emit(stage, position, std::move(load));
    }
    for (const Transfer& transfer : transfers_) {
      if (transfer.to_stage == stage && !IsBackward(transfer)) {
        EmitTransfer(Kind::kReceive, transfer, m, position,
                     Slots(stage, position).inputs[mb][static_cast<size_t>(transfer.to_parameter)],
                     "activation");
      }
    }
    PipelineInstruction run;
    run.label = fmt::format("F{} s{}", m, stage);
    run.program = OutputsOf(stage, position).program.at(0);
    run.inputs = InputSlots(stage, m, position, program.split.forward);
    run.outputs = OutputsOf(stage, position).forward[mb];
    const std::set<int64_t> backward_reads = InputsRead(stage, program.split.backward);
    for (int64_t p : InputsRead(stage, program.split.forward)) {
      if (!backward_reads.count(p)) {
        run.release.push_back(Slots(stage, position).inputs[mb][static_cast<size_t>(p)]);
      }
    }
    Emit(stage, position, std::move(run));
    std::vector<int64_t> sent;
    for (size_t j = 0; j < program.roles.sent_leaves.size(); ++j) {
      sent.push_back(OutputsOf(stage, position).forward[mb][j]);
    }
    for (const Transfer& transfer : transfers_) {
      if (transfer.from_stage == stage && !IsBackward(transfer)) {
        EmitTransfer(Kind::kSend, transfer, m, position, sent[static_cast<size_t>(transfer.from_output)],
                  "activation");
      }
    }
    ReleaseAfterLast(stage, position, sent);
  }

  void EmitBackward(int64_t stage, int64_t m, int64_t position) {
    const StageProgram& program = StageAt(stage);
    const size_t mb = static_cast<size_t>(m);
    for (const Transfer& transfer : transfers_) {
      if (transfer.to_stage == stage && IsBackward(transfer)) {
        EmitTransfer(Kind::kReceive, transfer, m, position,
                     Slots(stage, position).inputs[mb][static_cast<size_t>(transfer.to_parameter)],
                     "cotangent");
      }
    }
    Outputs& outputs = OutputsOf(stage, position);
    PipelineInstruction run;
    run.label = fmt::format("B{} s{}", m, stage);
    run.program = outputs.program.at(1);
    run.inputs = InputSlots(stage, m, position, program.split.backward);
    run.outputs = outputs.backward[mb];
    for (size_t i = 0; i < run.inputs.size(); ++i) {
      const spmd::PartInput& input = program.split.backward.inputs[i];
      const bool state = input.kind == spmd::PartInput::Kind::kParameter &&
                         IsState(program, input.index);
      if (!state) run.release.push_back(run.inputs[i]);
    }
    Emit(stage, position, std::move(run));
    const size_t input_gradients = program.roles.input_gradient_leaves.size();
    for (size_t g = 0; g < outputs.sums.size(); ++g) {
      PipelineInstruction accumulate;
      accumulate.kind = Kind::kAccumulate;
      accumulate.label = fmt::format("accumulate m{} s{}", m, stage);
      accumulate.slot = outputs.sums[g];
      accumulate.source_slot = outputs.backward[mb][input_gradients + g];
      accumulate.release = {accumulate.source_slot};
      Emit(stage, position, std::move(accumulate));
    }
    for (const Transfer& transfer : transfers_) {
      if (transfer.from_stage == stage && IsBackward(transfer)) {
        EmitTransfer(Kind::kSend, transfer, m, position,
                  outputs.backward[mb][static_cast<size_t>(transfer.from_output)], "gradient");
      }
    }
    ReleaseAfterLast(
        stage, position,
        std::vector<int64_t>(outputs.backward[mb].begin(),
                             outputs.backward[mb].begin() + static_cast<int64_t>(input_gradients)));
  }

  void EmitUpdate(int64_t stage, int64_t position) {
    const StageProgram& program = StageAt(stage);
    Outputs& outputs = OutputsOf(stage, position);
    // The update reads the mean of the micro-batches' gradients, as the model's step does.
    for (const spmd::PartInput& input : program.split.update.inputs) {
      if (input.kind != spmd::PartInput::Kind::kGradient) continue;
      PipelineInstruction scale;
      scale.kind = Kind::kScale;
      scale.label = fmt::format("mean s{}", stage);
      scale.slot = outputs.sums[static_cast<size_t>(input.index)];
      scale.factor = 1.0 / static_cast<double>(micro_batches_);
      Emit(stage, position, std::move(scale));
    }
    PipelineInstruction run;
    run.label = fmt::format("update s{}", stage);
    run.program = outputs.program.at(2);
    run.inputs = InputSlots(stage, 0, position, program.split.update);
    for (size_t p = 0; p < program.roles.parameters.size(); ++p) {
      const int64_t slot = Slots(stage, position).state[p];
      if (slot >= 0) run.outputs.push_back(slot);
    }
    run.release = outputs.sums;
    Emit(stage, position, std::move(run));
  }

  // Backward transfers go from a later stage to an earlier one.
  static bool IsBackward(const Transfer& transfer) {
    return transfer.to_stage < transfer.from_stage;
  }

  PipeshardExecutable& exe_;
  const std::vector<StageProgram>& stages_;
  const int64_t micro_batches_;
  std::vector<std::vector<Outputs>> outputs_;  // [stage][position]
  std::vector<Transfer> transfers_;
  // A holder's gradient sum of a shared weight, from every holder.
  struct Exchange {
    int64_t to_stage = 0;
    int64_t gradient = 0;
    std::vector<Transfer> from;  // in stage order
  };
  std::vector<Exchange> exchanges_;
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<const runtime::InstructionList>> lists_;
  int64_t next_tag_ = 0;
};

Status LowerPipeline(PipeshardExecutable& exe) { return PipelineLowering(exe).Lower(); }

}  // namespace alpa::api
