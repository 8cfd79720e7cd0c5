#include "interp/computation_call.h"

#include <utility>

namespace alpa::interp::internal {
namespace {

using ir::Instruction;
using ir::Opcode;

// True when `computation` has exactly two parameters, both `dtype` scalars.
bool IsBinaryScalarComputation(const ir::Computation& computation, ir::DType dtype) {
  std::vector<Instruction*> parameters = computation.parameters();
  if (parameters.size() != 2) return false;
  for (const Instruction* p : parameters) {
    if (p == nullptr || !p->shape().IsArray() || p->shape().rank() != 0 ||
        p->shape().dtype() != dtype) {
      return false;
    }
  }
  return true;
}

bool IsParameter(const Instruction* instruction, int64_t number) {
  return instruction->opcode() == Opcode::kParameter &&
         instruction->attributes().parameter_number == number;
}

}  // namespace

ReducerKind MatchReducer(const ir::Computation& computation, ir::DType dtype) {
  const Instruction* root = computation.root();
  if (IsBinaryScalarComputation(computation, dtype) && root != nullptr &&
      root->shape().Compatible(ir::Shape::Scalar(dtype)) && IsParameter(root, 1)) {
    return ReducerKind::kSecond;
  }
  // All recognised ops are commutative, so op(p1, p0) is the same reducer.
  switch (ir::ScalarBinaryOpcode(computation, dtype).value_or(Opcode::kParameter)) {
    case Opcode::kAdd:
      return ReducerKind::kAdd;
    case Opcode::kMultiply:
      return ReducerKind::kMultiply;
    case Opcode::kMaximum:
      return ReducerKind::kMaximum;
    case Opcode::kMinimum:
      return ReducerKind::kMinimum;
    case Opcode::kAnd:
      return ReducerKind::kAnd;
    case Opcode::kOr:
      return ReducerKind::kOr;
    case Opcode::kXor:
      return ReducerKind::kXor;
    default:
      return ReducerKind::kGeneral;
  }
}

std::optional<ir::ComparisonDirection> MatchComparator(const ir::Computation& computation,
                                                       ir::DType dtype) {
  if (!IsBinaryScalarComputation(computation, dtype)) return std::nullopt;
  const Instruction* root = computation.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2 ||
      !IsParameter(root->operand(0), 0) || !IsParameter(root->operand(1), 1) ||
      root->attributes().comparison_type != ir::ComparisonType::kDefault) {
    return std::nullopt;
  }
  const ir::ComparisonDirection direction = root->attributes().comparison_direction;
  if (direction == ir::ComparisonDirection::kEq || direction == ir::ComparisonDirection::kNe) {
    return std::nullopt;
  }
  return direction;
}

Result<std::vector<ir::Literal>> CallScalars(const ir::Computation& computation,
                                             std::vector<ir::Literal> arguments,
                                             EvalContext& context) {
  ALPA_ASSIGN_OR_RETURN(ir::Literal result,
                        EvaluateComputationIn(computation, std::move(arguments), context));
  std::vector<ir::Literal> leaves;
  if (result.shape().IsTuple()) {
    leaves = std::move(result.tuple_elements());
  } else {
    leaves.push_back(std::move(result));
  }
  return leaves;
}

Status ExpectCalledComputations(const ir::Instruction& instruction, size_t count) {
  if (instruction.called_computations().size() != count) {
    return InvalidArgument("expects {} called computations, has {}", count,
                           instruction.called_computations().size());
  }
  for (const ir::Computation* computation : instruction.called_computations()) {
    if (computation == nullptr) return InvalidArgument("a called computation is missing");
  }
  return Status::Ok();
}

}  // namespace alpa::interp::internal
