// Shape rules of tuples and control flow: tuple, get-tuple-element, call, fusion, while,
// conditional. The called computations' signatures are checked against the operands here.
#include "ir/computation.h"
#include "ir/shape_inference_internal.h"

namespace alpa::ir::shape_inference_internal {
namespace {

// The callee takes exactly `arguments` (compatible shapes, in order).
Status CheckArguments(const Instruction& instruction, int64_t callee,
                      const std::vector<Shape>& arguments, std::string_view role) {
  const ProgramShape signature = CalleeSignature(instruction, callee);
  bool ok = signature.parameters.size() == arguments.size();
  for (size_t i = 0; ok && i < arguments.size(); ++i) {
    ok = signature.parameters[i].Compatible(arguments[i]);
  }
  if (ok) return Status::Ok();
  std::string given;
  for (size_t i = 0; i < arguments.size(); ++i) {
    given += (i > 0 ? ", " : "") + Str(arguments[i]);
  }
  return RuleError(instruction, "{} %{} has signature {} but is given ({})", role,
                   instruction.called_computation(callee)->name(), signature.ToString(false),
                   given);
}

}  // namespace

Result<Shape> InferTupleShape(const Instruction& instruction) {
  return Shape::Tuple(AllOperandShapes(instruction));
}

Result<Shape> InferGetTupleElementShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  const Shape& operand = OperandShape(instruction, 0);
  const int64_t index = instruction.attributes().tuple_index;
  if (!operand.IsTuple()) {
    return RuleError(instruction, "operand must be a tuple but has shape {}", Str(operand));
  }
  if (index < 0 || index >= operand.tuple_size()) {
    return RuleError(instruction, "index {} is out of range for tuple {}", index, Str(operand));
  }
  return operand.tuple_shape(index);
}

// call and fusion: the operands are the callee's arguments; the result is its root's shape.
Result<Shape> InferCallShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckArguments(instruction, 0, AllOperandShapes(instruction), "callee"));
  return CalleeSignature(instruction, 0).result;
}

// while(init): condition (S) -> pred[], body (S) -> S, result S.
Result<Shape> InferWhileShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  ALPA_RETURN_IF_ERROR(CheckCalledCount(instruction, 2));
  const Shape& state = OperandShape(instruction, 0);
  ALPA_RETURN_IF_ERROR(CheckArguments(instruction, 0, {state}, "condition"));
  ALPA_RETURN_IF_ERROR(CheckArguments(instruction, 1, {state}, "body"));
  const ProgramShape condition = CalleeSignature(instruction, 0);
  if (!condition.result.Compatible(Shape::Scalar(DType::kPred))) {
    return RuleError(instruction, "condition %{} must return pred[] but returns {}",
                     instruction.while_condition()->name(), Str(condition.result));
  }
  const ProgramShape body = CalleeSignature(instruction, 1);
  if (!body.result.Compatible(state)) {
    return RuleError(instruction, "body %{} returns {} but must return the loop state {}",
                     instruction.while_body()->name(), Str(body.result), Str(state));
  }
  return state;
}

// conditional(selector, operand_0, ..., operand_{N-1}) with N branches: the selector is pred[]
// (N == 2, branch 0 taken on true) or s32[]; branch i takes operand i; all branches return the
// same shape, which is the result.
Result<Shape> InferConditionalShape(const Instruction& instruction) {
  const int64_t branches = static_cast<int64_t>(instruction.called_computations().size());
  if (branches < 1) return RuleError(instruction, "has no branch computations");
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, branches + 1));
  const Shape& selector = OperandShape(instruction, 0);
  const bool is_pred =
      selector.IsArray() && selector.rank() == 0 && selector.dtype() == DType::kPred;
  const bool is_index =
      selector.IsArray() && selector.rank() == 0 && selector.dtype() == DType::kS32;
  if (!(is_pred && branches == 2) && !is_index) {
    return RuleError(instruction,
                     "selector {} must be s32[], or pred[] with exactly 2 branches ({} given)",
                     Str(selector), branches);
  }
  const Shape result = CalleeSignature(instruction, 0).result;
  for (int64_t i = 0; i < branches; ++i) {
    ALPA_RETURN_IF_ERROR(CheckArguments(instruction, i, {OperandShape(instruction, i + 1)},
                                        fmt::format("branch {}", i)));
    const Shape branch_result = CalleeSignature(instruction, i).result;
    if (!branch_result.Compatible(result)) {
      return RuleError(instruction, "branch {} %{} returns {} but branch 0 returns {}", i,
                       instruction.called_computation(i)->name(), Str(branch_result), Str(result));
    }
  }
  return result;
}

}  // namespace alpa::ir::shape_inference_internal
