// call, fusion, while, conditional and map: running called computations.
#include <utility>

#include "interp/computation_call.h"
#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// A while loop that runs this long is taken to be non-terminating (a bad program), and reported
// instead of hanging the caller.
constexpr int64_t kMaxWhileIterations = 10'000'000;

std::vector<Literal> Copies(const Operands& operands) {
  std::vector<Literal> copies;
  for (const Literal* operand : operands) copies.push_back(*operand);
  return copies;
}

Result<bool> ReadPredicate(const Literal& value, const ir::Computation& condition) {
  if (!value.shape().IsArray() || value.shape().dtype() != ir::DType::kPred ||
      value.shape().rank() != 0) {
    return InvalidArgument("condition {} returns {}, expected pred[]", condition.name(),
                           value.shape().ToString(false));
  }
  return value.GetInt(0) != 0;
}

}  // namespace

// call and fusion run their computation on the operands.
Result<Literal> EvaluateCall(const ir::Instruction& instruction, const Operands& operands,
                             EvalContext& context) {
  if (instruction.called_computations().empty() || instruction.to_apply() == nullptr) {
    return InvalidArgument("has no called computation");
  }
  return EvaluateComputationIn(*instruction.to_apply(), Copies(operands), context);
}

// state = init; while (condition(state)) state = body(state)
Result<Literal> EvaluateWhile(const ir::Instruction& instruction, const Operands& operands,
                              EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, 2));
  const ir::Computation& condition = *instruction.while_condition();
  const ir::Computation& body = *instruction.while_body();
  Literal state = *operands[0];
  for (int64_t iteration = 0;; ++iteration) {
    if (iteration == kMaxWhileIterations) {
      return InvalidArgument("loop did not finish after {} iterations; check condition {}",
                             kMaxWhileIterations, condition.name());
    }
    std::vector<Literal> condition_arguments;
    condition_arguments.push_back(state);
    ALPA_ASSIGN_OR_RETURN(Literal keep_going, EvaluateComputationIn(
                                                  condition, std::move(condition_arguments),
                                                  context));
    ALPA_ASSIGN_OR_RETURN(bool again, ReadPredicate(keep_going, condition));
    if (!again) break;
    std::vector<Literal> body_arguments;
    body_arguments.push_back(std::move(state));
    ALPA_ASSIGN_OR_RETURN(state, EvaluateComputationIn(body, std::move(body_arguments), context));
  }
  return state;
}

// conditional(selector, args...): a pred selector runs branch 0 (true_computation) when true and
// branch 1 when false; an s32 selector runs branch `selector`, or the last branch when it is out
// of range (XLA). Branch i receives operand i + 1.
Result<Literal> EvaluateConditional(const ir::Instruction& instruction, const Operands& operands,
                                    EvalContext& context) {
  const size_t branches = instruction.called_computations().size();
  if (branches == 0 || operands.size() != branches + 1) {
    return InvalidArgument("conditional with {} branches needs {} operands, has {}", branches,
                           branches + 1, operands.size());
  }
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, branches));
  const Literal& selector = *operands[0];
  if (!selector.shape().IsArray() || selector.shape().rank() != 0) {
    return InvalidArgument("selector has shape {}, expected pred[] or s32[]",
                           selector.shape().ToString(false));
  }
  size_t branch = 0;
  if (selector.shape().dtype() == ir::DType::kPred) {
    if (branches != 2) return InvalidArgument("a pred selector needs exactly 2 branches");
    branch = selector.GetInt(0) != 0 ? 0 : 1;
  } else if (ir::IsInteger(selector.shape().dtype())) {
    const int64_t index = selector.GetInt(0);
    branch = index < 0 || index >= static_cast<int64_t>(branches) ? branches - 1
                                                                   : static_cast<size_t>(index);
  } else {
    return InvalidArgument("selector has element type {}",
                           ir::DTypeName(selector.shape().dtype()));
  }
  std::vector<Literal> arguments;
  arguments.push_back(*operands[branch + 1]);
  return EvaluateComputationIn(*instruction.called_computation(static_cast<int64_t>(branch)),
                               std::move(arguments), context);
}

// map(a_1..N) applies the scalar computation elementwise: out[i] = f(a_1[i], ..., a_N[i]).
Result<Literal> EvaluateMap(const ir::Instruction& instruction, const Operands& operands,
                            EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const ir::Shape& shape = instruction.shape();
  for (const Literal* operand : operands) {
    if (!shape.IsArray() || operand->shape().dims() != shape.dims()) {
      return InvalidArgument("operand {} and result {} must have the same dims",
                             operand->shape().ToString(false), shape.ToString(false));
    }
  }
  const ir::Computation& function = *instruction.to_apply();
  Literal out = Literal::CreateZeros(shape);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::vector<Literal> arguments;
    for (const Literal* operand : operands) arguments.push_back(ElementAsScalar(*operand, i));
    ALPA_ASSIGN_OR_RETURN(std::vector<Literal> result,
                          CallScalars(function, std::move(arguments), context));
    if (result.size() != 1 || !result[0].shape().Compatible(ir::Shape::Scalar(shape.dtype()))) {
      return InvalidArgument("computation {} must return a {} scalar", function.name(),
                             ir::DTypeName(shape.dtype()));
    }
    CopyElement(result[0], 0, out, i);
  }
  return out;
}

}  // namespace alpa::interp::internal
