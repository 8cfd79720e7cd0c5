#include "spmd/stage_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ir/builder.h"
#include "ir/value_tag.h"
#include "spmd/spmd_builder.h"

namespace alpa::spmd {
namespace {

using ir::Instruction;

// kUnassigned: an instruction no part's results reach (a non-last stage's loss).
enum class Part { kParameter, kConstant, kUnassigned, kForward, kBackward, kUpdate };

// The instructions `roots` reach through operands, the roots included, not going past `stop`.
std::set<const Instruction*> AncestorsOf(const std::vector<const Instruction*>& roots,
                                         const std::set<const Instruction*>& stop = {}) {
  std::set<const Instruction*> seen;
  std::vector<const Instruction*> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    const Instruction* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second || stop.count(x)) continue;
    for (const Instruction* operand : x->operands()) stack.push_back(operand);
  }
  return seen;
}

// Copies one program's instructions into a new module: parameters for its inputs, then, in the
// program's order, every instruction its outputs reach from them (constants included), and a
// tuple of its outputs. Called computations are copied as the partitioner copies them.
class PartBuilder {
 public:
  explicit PartBuilder(const std::string& name)
      : mb_(name), b_(mb_.NewComputation(name)), callees_(mb_, b_, {}) {}

  void AddInput(const Instruction* value, PartInput input) {
    const int64_t number = static_cast<int64_t>(inputs_.size());
    copy_[value] = b_.Parameter(number, value->shape(), fmt::format("in.{}", number));
    inputs_.push_back(input);
  }

  Result<StagePart> Build(const std::vector<const Instruction*>& outputs,
                          const std::vector<Instruction*>& order) {
    std::set<const Instruction*> inputs;
    for (const auto& [value, copy] : copy_) inputs.insert(value);
    const std::set<const Instruction*> needed = AncestorsOf(outputs, inputs);
    for (const Instruction* x : order) {
      if (!needed.count(x) || copy_.count(x)) continue;
      std::vector<Instruction*> operands;
      for (const Instruction* operand : x->operands()) operands.push_back(copy_.at(operand));
      std::vector<ir::Computation*> callees;
      for (const ir::Computation* callee : x->called_computations()) {
        ALPA_ASSIGN_OR_RETURN(ir::Computation * copy, callees_.CopyComputation(*callee));
        callees.push_back(copy);
      }
      // Named afresh: the shared reducers CopyComputation makes take names from the same pool.
      copy_[x] = b_.AddInstruction(x->opcode(), std::move(operands), x->attributes(),
                                   std::move(callees), x->shape());
    }
    std::vector<Instruction*> values;
    for (const Instruction* output : outputs) values.push_back(copy_.at(output));
    ALPA_ASSIGN_OR_RETURN(ir::Computation * entry, b_.Build(b_.Tuple(values)));
    StagePart part;
    ALPA_ASSIGN_OR_RETURN(part.module, mb_.Build(entry));
    part.inputs = std::move(inputs_);
    return part;
  }

 private:
  ir::ModuleBuilder mb_;
  ir::ComputationBuilder b_;
  SpmdBuilder callees_;  // only its CopyComputation: no mesh
  std::map<const Instruction*, Instruction*> copy_;
  std::vector<PartInput> inputs_;
};

std::string_view PartName(Part part) {
  switch (part) {
    case Part::kForward:
      return "forward";
    case Part::kBackward:
      return "backward";
    case Part::kUpdate:
      return "update";
    default:
      return "no";
  }
}

class Splitter {
 public:
  Splitter(const ir::Computation& entry, const StageRoles& roles)
      : entry_(entry), roles_(roles), order_(entry.MakePostOrder()) {}

  Result<StageSplit> Split() {
    ALPA_RETURN_IF_ERROR(CheckRoles());
    Classify();
    ALPA_RETURN_IF_ERROR(CheckCrossings());
    return Build();
  }

 private:
  const Instruction* Leaf(int64_t leaf) const { return entry_.root()->operand(leaf); }

  Status CheckRoles() const {
    const std::vector<Instruction*> parameters = entry_.parameters();
    if (parameters.size() != roles_.parameters.size()) {
      return InvalidArgument("the stage program has {} parameters, its roles list {}",
                             parameters.size(), roles_.parameters.size());
    }
    const Instruction* root = entry_.root();
    if (root == nullptr || root->opcode() != ir::Opcode::kTuple) {
      return InvalidArgument("the stage program's root must be a tuple of its results");
    }
    std::vector<int64_t> leaves = roles_.next_value_leaves;
    leaves.insert(leaves.end(), roles_.input_gradient_leaves.begin(),
                  roles_.input_gradient_leaves.end());
    leaves.insert(leaves.end(), roles_.sent_leaves.begin(), roles_.sent_leaves.end());
    if (roles_.loss_leaf >= 0) leaves.push_back(roles_.loss_leaf);
    for (int64_t leaf : leaves) {
      if (leaf < 0 || leaf >= root->operand_count()) {
        return InvalidArgument("result leaf {} is out of range: the root has {} elements", leaf,
                               root->operand_count());
      }
    }
    return Status::Ok();
  }

  bool IsParameter(const Instruction* x) const { return x->opcode() == ir::Opcode::kParameter; }
  StageParameter RoleOf(const Instruction* parameter) const {
    return roles_.parameters[static_cast<size_t>(parameter->attributes().parameter_number)];
  }

  void Classify() {
    std::set<const Instruction*> constant, on_cotangent;
    for (const Instruction* x : order_) {
      if (IsParameter(x)) {
        if (RoleOf(x) == StageParameter::kCotangent) on_cotangent.insert(x);
        continue;
      }
      bool all_constant = true;
      for (const Instruction* operand : x->operands()) {
        all_constant = all_constant && constant.count(operand) > 0;
        if (on_cotangent.count(operand)) on_cotangent.insert(x);
      }
      if (all_constant) constant.insert(x);
    }
    std::vector<const Instruction*> forward_roots, backward_roots, update_roots;
    for (int64_t leaf : roles_.sent_leaves) forward_roots.push_back(Leaf(leaf));
    if (roles_.loss_leaf >= 0) forward_roots.push_back(Leaf(roles_.loss_leaf));
    for (int64_t leaf : roles_.input_gradient_leaves) backward_roots.push_back(Leaf(leaf));
    for (const Instruction* x : order_) {
      if (ir::GetValueTag(*x) == ir::ValueTag::kGradient) {
        gradients_.push_back(x);
        backward_roots.push_back(x);
      }
    }
    for (int64_t leaf : roles_.next_value_leaves) update_roots.push_back(Leaf(leaf));

    for (const Instruction* x : order_) {
      part_of_[x] = IsParameter(x)      ? Part::kParameter
                    : constant.count(x) ? Part::kConstant
                                        : Part::kUnassigned;
    }
    auto assign = [&](const std::vector<const Instruction*>& roots, Part part, bool skip_ct) {
      for (const Instruction* x : AncestorsOf(roots)) {
        if (part_of_[x] != Part::kUnassigned || (skip_ct && on_cotangent.count(x))) continue;
        part_of_[x] = part;
      }
    };
    assign(forward_roots, Part::kForward, true);
    assign(backward_roots, Part::kBackward, false);
    assign(update_roots, Part::kUpdate, false);
  }

  // Every operand crossing from one program to a later one is a residual (forward -> backward)
  // or a weight's gradient (backward -> update).
  Status CheckCrossings() {
    const std::set<const Instruction*> gradients(gradients_.begin(), gradients_.end());
    for (const Instruction* x : order_) {
      const Part part = part_of_.at(x);
      if (part == Part::kParameter || part == Part::kConstant || part == Part::kUnassigned) {
        continue;
      }
      for (const Instruction* operand : x->operands()) {
        const Part from = part_of_.at(operand);
        if (from == part || from == Part::kParameter || from == Part::kConstant) continue;
        if (from == Part::kForward && part == Part::kBackward) {
          AddResidual(operand);
          continue;
        }
        if (from == Part::kBackward && part == Part::kUpdate && gradients.count(operand)) continue;
        return Internal(
            "the stage's {} pass reads %{} of its {} pass, which only residuals and "
            "the weights' gradients may cross",
            PartName(part), operand->name(), PartName(from));
      }
    }
    return Status::Ok();
  }

  // A forward value the backward pass reads. A broadcast (or bitcast) is recomputed there from
  // its operand instead of handed over whole: the memory model counts a broadcast the runtime
  // reads in place as a view of its operand (cost/liveness.h), so handing it over would hold an
  // array that the plan never counted (wresnet-tiny's batch-norm scales: 41% more residual
  // bytes than the saved activations priced). plan/pipelined_step_memory.h prices residuals by
  // this rule: change both together.
  void AddResidual(const Instruction* value) {
    const ir::Opcode opcode = value->opcode();
    if (opcode == ir::Opcode::kBroadcast || opcode == ir::Opcode::kBitcast) {
      recomputed_.insert(value);
      for (const Instruction* operand : value->operands()) {
        if (part_of_.at(operand) == Part::kForward) AddResidual(operand);
      }
      return;
    }
    if (std::find(residuals_.begin(), residuals_.end(), value) == residuals_.end()) {
      residuals_.push_back(value);
    }
  }

  // What `part` takes from outside: the operands of its instructions (for the backward pass, of
  // the forward values it recomputes too) and its outputs (a leaf may be a parameter passed
  // through, a gradient handed on).
  std::set<const Instruction*> ReadBy(Part part,
                                      const std::vector<const Instruction*>& outputs) const {
    std::set<const Instruction*> read(outputs.begin(), outputs.end());
    for (const Instruction* x : order_) {
      if (part_of_.at(x) != part && !(part == Part::kBackward && recomputed_.count(x))) continue;
      read.insert(x->operands().begin(), x->operands().end());
    }
    return read;
  }

  // One program: the train step's parameters it reads, in parameter order, then the values
  // `crossing` hands it (residuals or gradients) that it reads, then its instructions.
  Result<StagePart> BuildPart(const std::string& name, Part part,
                              const std::vector<const Instruction*>& outputs,
                              const std::vector<const Instruction*>& crossing,
                              PartInput::Kind kind) const {
    const std::set<const Instruction*> read = ReadBy(part, outputs);
    PartBuilder builder(name);
    for (const Instruction* parameter : entry_.parameters()) {
      if (read.count(parameter)) {
        builder.AddInput(parameter,
                         {PartInput::Kind::kParameter, parameter->attributes().parameter_number});
      }
    }
    for (size_t i = 0; i < crossing.size(); ++i) {
      if (read.count(crossing[i])) builder.AddInput(crossing[i], {kind, static_cast<int64_t>(i)});
    }
    return builder.Build(outputs, order_);
  }

  Result<StageSplit> Build() {
    StageSplit split;
    std::vector<const Instruction*> forward_outputs, backward_outputs, update_outputs;
    for (int64_t leaf : roles_.sent_leaves) forward_outputs.push_back(Leaf(leaf));
    if (roles_.loss_leaf >= 0) forward_outputs.push_back(Leaf(roles_.loss_leaf));
    forward_outputs.insert(forward_outputs.end(), residuals_.begin(), residuals_.end());
    for (int64_t leaf : roles_.input_gradient_leaves) backward_outputs.push_back(Leaf(leaf));
    backward_outputs.insert(backward_outputs.end(), gradients_.begin(), gradients_.end());
    for (int64_t leaf : roles_.next_value_leaves) update_outputs.push_back(Leaf(leaf));

    ALPA_ASSIGN_OR_RETURN(split.forward, BuildPart("stage_forward", Part::kForward,
                                                   forward_outputs, {}, PartInput::Kind::kResidual));
    ALPA_ASSIGN_OR_RETURN(split.backward,
                          BuildPart("stage_backward", Part::kBackward, backward_outputs,
                                    residuals_, PartInput::Kind::kResidual));
    ALPA_ASSIGN_OR_RETURN(split.update,
                          BuildPart("stage_update", Part::kUpdate, update_outputs, gradients_,
                                    PartInput::Kind::kGradient));
    split.num_residuals = static_cast<int64_t>(residuals_.size());
    split.num_gradients = static_cast<int64_t>(gradients_.size());
    for (const Instruction* gradient : gradients_) split.gradient_names.push_back(gradient->name());
    return split;
  }

  const ir::Computation& entry_;
  const StageRoles& roles_;
  std::vector<Instruction*> order_;
  std::map<const Instruction*, Part> part_of_;
  std::vector<const Instruction*> gradients_;  // tagged, in post order
  std::vector<const Instruction*> residuals_;  // in post order of their first reader
  std::set<const Instruction*> recomputed_;    // forward values the backward pass recomputes
};

}  // namespace

Result<StageSplit> SplitStageProgram(const ir::Module& program, const StageRoles& roles) {
  if (program.entry() == nullptr) {
    return InvalidArgument("module {} has no entry computation", program.name());
  }
  return Splitter(*program.entry(), roles).Split();
}

}  // namespace alpa::spmd
