#include "ir/loop_unrolling.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <utility>

namespace alpa::ir {
namespace {

// The value of an integer scalar constant; nullopt for anything else.
std::optional<int64_t> IntegerConstant(const Instruction* instruction) {
  if (instruction == nullptr || instruction->opcode() != Opcode::kConstant) return std::nullopt;
  const Shape& shape = instruction->shape();
  if (!shape.IsArray() || shape.rank() != 0 || !IsInteger(shape.dtype())) return std::nullopt;
  if (!instruction->attributes().literal.has_value()) return std::nullopt;
  return instruction->attributes().literal->GetInt(0);
}

// The tuple index `instruction` reads from `parameter` (get-tuple-element(parameter), index=k).
std::optional<int64_t> ElementOf(const Instruction* instruction, const Instruction* parameter) {
  if (instruction->opcode() != Opcode::kGetTupleElement || instruction->operand(0) != parameter) {
    return std::nullopt;
  }
  return instruction->attributes().tuple_index;
}

ComparisonDirection Mirrored(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kLt:
      return ComparisonDirection::kGt;
    case ComparisonDirection::kLe:
      return ComparisonDirection::kGe;
    case ComparisonDirection::kGt:
      return ComparisonDirection::kLt;
    case ComparisonDirection::kGe:
      return ComparisonDirection::kLe;
    default:
      return direction;
  }
}

// floor(a / b) for b > 0.
int64_t FloorDivide(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The number of values first, first + step, ... before `value direction bound` first fails.
std::optional<int64_t> CountIterations(int64_t first, int64_t step, int64_t bound,
                                       ComparisonDirection direction) {
  auto at_least_zero = [](int64_t n) { return n < 0 ? int64_t{0} : n; };
  switch (direction) {
    case ComparisonDirection::kLt:
      if (step <= 0) return first < bound ? std::nullopt : std::optional<int64_t>(0);
      return at_least_zero(FloorDivide(bound - first + step - 1, step));
    case ComparisonDirection::kLe:
      if (step <= 0) return first <= bound ? std::nullopt : std::optional<int64_t>(0);
      return at_least_zero(FloorDivide(bound - first, step) + 1);
    case ComparisonDirection::kGt:
      if (step >= 0) return first > bound ? std::nullopt : std::optional<int64_t>(0);
      return at_least_zero(FloorDivide(first - bound - step - 1, -step));
    case ComparisonDirection::kGe:
      if (step >= 0) return first >= bound ? std::nullopt : std::optional<int64_t>(0);
      return at_least_zero(FloorDivide(first - bound, -step) + 1);
    case ComparisonDirection::kNe:
      if (step == 0 || (bound - first) % step != 0 || (bound - first) / step < 0) {
        return first == bound ? std::optional<int64_t>(0) : std::nullopt;
      }
      return (bound - first) / step;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<int64_t> CountedLoopTripCount(const Instruction& loop) {
  if (loop.opcode() != Opcode::kWhile) return std::nullopt;
  const Computation& condition = *loop.while_condition();
  const Computation& body = *loop.while_body();
  if (condition.parameter_count() != 1 || body.parameter_count() != 1) return std::nullopt;

  // The condition: compare(get-tuple-element(param, k), constant N), either way round.
  const Instruction* compare = condition.root();
  if (compare->opcode() != Opcode::kCompare) return std::nullopt;
  const Instruction* condition_parameter = condition.parameters()[0];
  ComparisonDirection direction = compare->attributes().comparison_direction;
  std::optional<int64_t> k = ElementOf(compare->operand(0), condition_parameter);
  std::optional<int64_t> bound = IntegerConstant(compare->operand(1));
  if (!k.has_value()) {
    k = ElementOf(compare->operand(1), condition_parameter);
    bound = IntegerConstant(compare->operand(0));
    direction = Mirrored(direction);
  }
  if (!k.has_value() || !bound.has_value()) return std::nullopt;

  // The body: element k of its result is add(get-tuple-element(param, k), constant S).
  const Instruction* next = body.root();
  if (next->opcode() != Opcode::kTuple || *k >= next->operand_count()) return std::nullopt;
  const Instruction* increment = next->operand(*k);
  if (increment->opcode() != Opcode::kAdd) return std::nullopt;
  const Instruction* body_parameter = body.parameters()[0];
  std::optional<int64_t> step;
  for (int64_t side : {0, 1}) {
    if (ElementOf(increment->operand(side), body_parameter) == k) {
      step = IntegerConstant(increment->operand(1 - side));
    }
  }
  if (!step.has_value()) return std::nullopt;

  // The counter on entry: element k of the loop's operand, a constant.
  const Instruction* init = loop.operand(0);
  if (init->opcode() != Opcode::kTuple || *k >= init->operand_count()) return std::nullopt;
  const std::optional<int64_t> first = IntegerConstant(init->operand(*k));
  if (!first.has_value()) return std::nullopt;
  return CountIterations(*first, *step, *bound, direction);
}

LoopUnrolling UnrollCountedLoops(Computation& computation, int64_t max_instructions) {
  LoopUnrolling result;
  int64_t instructions = computation.instruction_count();
  std::map<const Instruction*, Instruction*> replaced;  // loop -> its last iteration (or operand)
  std::vector<Instruction*> loops;
  for (const std::unique_ptr<Instruction>& instruction : computation.instructions()) {
    if (instruction->opcode() == Opcode::kWhile) loops.push_back(instruction.get());
  }
  for (Instruction* loop : loops) {
    const std::optional<int64_t> trip_count = CountedLoopTripCount(*loop);
    if (!trip_count.has_value()) {
      result.loops_kept.push_back(
          {loop->name(),
           "its trip count is not proven (a loop is unrolled when it counts from a constant by "
           "a constant step to a constant bound)"});
      continue;
    }
    const int64_t added = *trip_count * loop->while_body()->instruction_count();
    if (instructions + added > max_instructions) {
      result.loops_kept.push_back(
          {loop->name(),
           fmt::format("{} iterations of {} instructions would pass the limit of {}", *trip_count,
                       loop->while_body()->instruction_count(), max_instructions)});
      continue;
    }
    instructions += added;
    Instruction* value = loop->operand(0);
    for (int64_t i = 0; i < *trip_count; ++i) {
      auto call = std::make_unique<Instruction>(fmt::format("{}.iter{}", loop->name(), i),
                                                Opcode::kCall, loop->shape());
      call->AppendOperand(value);
      call->AppendCalledComputation(loop->while_body());
      call->set_location(loop->location());
      value = computation.AddInstruction(std::move(call));
    }
    replaced[loop] = value;
    ++result.loops_unrolled;
    result.iterations += *trip_count;
  }
  if (replaced.empty()) return result;

  auto replacement = [&](Instruction* value) {
    auto it = replaced.find(value);
    return it == replaced.end() ? value : it->second;
  };
  for (const std::unique_ptr<Instruction>& instruction : computation.instructions()) {
    for (int64_t i = 0; i < instruction->operand_count(); ++i) {
      instruction->ReplaceOperand(i, replacement(instruction->operand(i)));
    }
    for (Instruction*& predecessor : instruction->mutable_control_predecessors()) {
      predecessor = replacement(predecessor);
    }
  }
  computation.set_root(replacement(computation.root()));
  computation.RemoveDeadInstructions();  // the loops themselves
  return result;
}

}  // namespace alpa::ir
