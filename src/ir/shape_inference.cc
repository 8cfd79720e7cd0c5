#include "ir/shape_inference.h"

#include <set>

#include "ir/computation.h"
#include "ir/shape_inference_internal.h"

namespace alpa::ir {
namespace shape_inference_internal {

std::vector<Shape> AllOperandShapes(const Instruction& instruction) {
  std::vector<Shape> shapes;
  for (const Instruction* operand : instruction.operands()) shapes.push_back(operand->shape());
  return shapes;
}

Status CheckOperandCount(const Instruction& instruction, int64_t count) {
  if (instruction.operand_count() == count) return Status::Ok();
  return RuleError(instruction, "expects {} operand(s) but has {}", count,
                   instruction.operand_count());
}

Status CheckMinOperandCount(const Instruction& instruction, int64_t count) {
  if (instruction.operand_count() >= count) return Status::Ok();
  return RuleError(instruction, "expects at least {} operand(s) but has {}", count,
                   instruction.operand_count());
}

Status CheckCalledCount(const Instruction& instruction, int64_t count) {
  const auto actual = static_cast<int64_t>(instruction.called_computations().size());
  if (actual == count) return Status::Ok();
  return RuleError(instruction, "expects {} called computation(s) but has {}", count, actual);
}

Status CheckArrayOperand(const Instruction& instruction, int64_t i) {
  const Shape& shape = OperandShape(instruction, i);
  if (shape.IsArray()) return Status::Ok();
  return RuleError(instruction, "operand {} (%{}) must be an array but has shape {}", i,
                   instruction.operand(i)->name(), Str(shape));
}

Status CheckAllArrayOperands(const Instruction& instruction) {
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    ALPA_RETURN_IF_ERROR(CheckArrayOperand(instruction, i));
  }
  return Status::Ok();
}

Status CheckScalarIndexOperand(const Instruction& instruction, int64_t i) {
  const Shape& shape = OperandShape(instruction, i);
  if (shape.IsArray() && shape.rank() == 0 && IsInteger(shape.dtype())) return Status::Ok();
  return RuleError(instruction, "index operand {} (%{}) must be an integer scalar but has shape {}",
                   i, instruction.operand(i)->name(), Str(shape));
}

Status CheckDimensionList(const Instruction& instruction, std::string_view what,
                          const std::vector<int64_t>& dims, int64_t rank, bool sorted) {
  std::set<int64_t> seen;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return RuleError(instruction, "{} entry {} is out of range [0, {})", what, dims[i], rank);
    }
    if (!seen.insert(dims[i]).second) {
      return RuleError(instruction, "{} has duplicate entry {}", what, dims[i]);
    }
    if (sorted && i > 0 && dims[i] < dims[i - 1]) {
      return RuleError(instruction, "{} must be sorted but is {{{}}}", what, fmt::join(dims, ","));
    }
  }
  return Status::Ok();
}

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  for (int64_t v : values) {
    if (v == value) return true;
  }
  return false;
}

ProgramShape CalleeSignature(const Instruction& instruction, int64_t i) {
  return instruction.called_computation(i)->ComputeProgramShape();
}

Status CheckReducer(const Instruction& instruction, int64_t computation_index,
                    const std::vector<DType>& accumulator_types,
                    const std::vector<DType>& input_types) {
  const Computation& reducer = *instruction.called_computation(computation_index);
  const ProgramShape signature = reducer.ComputeProgramShape();
  const size_t n = accumulator_types.size();
  std::vector<Shape> expected_parameters;
  std::vector<Shape> results;
  for (DType dtype : accumulator_types) {
    expected_parameters.push_back(Shape::Scalar(dtype));
    results.push_back(Shape::Scalar(dtype));
  }
  for (DType dtype : input_types) expected_parameters.push_back(Shape::Scalar(dtype));
  const ProgramShape expected{expected_parameters, ArrayOrTuple(results)};
  bool ok = signature.parameters.size() == 2 * n && signature.result.Compatible(expected.result);
  for (size_t i = 0; ok && i < 2 * n; ++i) {
    ok = signature.parameters[i].Compatible(expected.parameters[i]);
  }
  if (ok) return Status::Ok();
  return RuleError(instruction, "reducer %{} has signature {} but must be {}", reducer.name(),
                   signature.ToString(false), expected.ToString(false));
}

Shape ArrayOrTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

Result<std::vector<int64_t>> WindowOutputDims(const Instruction& instruction,
                                              const std::vector<int64_t>& base_dims) {
  const std::vector<WindowDim>& window = instruction.attributes().window;
  if (window.size() != base_dims.size()) {
    return RuleError(instruction, "window has {} dimension(s) but must have {}", window.size(),
                     base_dims.size());
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < window.size(); ++i) {
    const WindowDim& w = window[i];
    if (w.size <= 0 || w.stride <= 0 || w.lhs_dilation <= 0 || w.rhs_dilation <= 0) {
      return RuleError(instruction,
                       "window dimension {} must have positive size, stride and dilations (size={} "
                       "stride={} lhs_dilate={} rhs_dilate={})",
                       i, w.size, w.stride, w.lhs_dilation, w.rhs_dilation);
    }
    const int64_t base = base_dims[i];
    const int64_t dilated_base = base == 0 ? 0 : (base - 1) * w.lhs_dilation + 1;
    const int64_t padded = dilated_base + w.pad_low + w.pad_high;
    const int64_t dilated_window = (w.size - 1) * w.rhs_dilation + 1;
    out.push_back(padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1);
  }
  return out;
}

}  // namespace shape_inference_internal

namespace {

using namespace shape_inference_internal;  // NOLINT(google-build-using-namespace)

Result<Shape> InferConstantShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 0));
  const std::optional<Literal>& literal = instruction.attributes().literal;
  if (!literal.has_value()) return RuleError(instruction, "has no literal");
  return literal->shape();
}

// Ops whose result is their single operand's shape.
Result<Shape> InferIdentityShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 1));
  return OperandShape(instruction, 0);
}

Result<Shape> InferU32ScalarShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckOperandCount(instruction, 0));
  return Shape::Scalar(DType::kU32);
}

// Operands and called computations must be present before any rule looks at them.
Status CheckPresent(const Instruction& instruction) {
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (instruction.operand(i) == nullptr) {
      return RuleError(instruction, "operand {} is missing", i);
    }
  }
  const auto& called = instruction.called_computations();
  for (size_t i = 0; i < called.size(); ++i) {
    if (called[i] == nullptr) return RuleError(instruction, "called computation {} is missing", i);
    if (called[i]->root() == nullptr) {
      return RuleError(instruction, "called computation %{} has no root", called[i]->name());
    }
  }
  return Status::Ok();
}

}  // namespace

bool HasShapeRule(Opcode opcode) {
  switch (opcode) {
    case Opcode::kParameter:
    case Opcode::kCustomCall:
    case Opcode::kBitcast:
    case Opcode::kFft:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kDynamicReshape:
    case Opcode::kRngGetAndUpdateState:
      return false;
    default:
      return true;
  }
}

Result<Shape> InferShape(const Instruction& instruction) {
  ALPA_RETURN_IF_ERROR(CheckPresent(instruction));
  const Opcode opcode = instruction.opcode();
  if (!HasShapeRule(opcode)) return instruction.shape();
  if (IsElementwiseUnary(opcode)) return InferUnaryShape(instruction);
  if (IsElementwiseBinary(opcode)) return InferBinaryShape(instruction);
  if (IsCollective(opcode)) return InferCollectiveShape(instruction);
  switch (opcode) {
    case Opcode::kConstant:
      return InferConstantShape(instruction);
    case Opcode::kCompare:
      return InferCompareShape(instruction);
    case Opcode::kSelect:
      return InferSelectShape(instruction);
    case Opcode::kClamp:
      return InferClampShape(instruction);
    case Opcode::kConvert:
    case Opcode::kStochasticConvert:
      return InferConvertShape(instruction);
    case Opcode::kBitcastConvert:
      return InferBitcastConvertShape(instruction);
    case Opcode::kReducePrecision:
      return InferReducePrecisionShape(instruction);
    case Opcode::kMap:
      return InferMapShape(instruction);
    case Opcode::kIota:
      return InferIotaShape(instruction);
    case Opcode::kBroadcast:
      return InferBroadcastShape(instruction);
    case Opcode::kReshape:
      return InferReshapeShape(instruction);
    case Opcode::kTranspose:
      return InferTransposeShape(instruction);
    case Opcode::kSlice:
      return InferSliceShape(instruction);
    case Opcode::kDynamicSlice:
      return InferDynamicSliceShape(instruction);
    case Opcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSliceShape(instruction);
    case Opcode::kConcatenate:
      return InferConcatenateShape(instruction);
    case Opcode::kPad:
      return InferPadShape(instruction);
    case Opcode::kReverse:
      return InferReverseShape(instruction);
    case Opcode::kGetDimensionSize:
      return InferGetDimensionSizeShape(instruction);
    case Opcode::kSetDimensionSize:
      return InferSetDimensionSizeShape(instruction);
    case Opcode::kDot:
      return InferDotShape(instruction);
    case Opcode::kConvolution:
      return InferConvolutionShape(instruction);
    case Opcode::kReduce:
      return InferReduceShape(instruction);
    case Opcode::kReduceWindow:
      return InferReduceWindowShape(instruction);
    case Opcode::kSelectAndScatter:
      return InferSelectAndScatterShape(instruction);
    case Opcode::kSort:
      return InferSortShape(instruction);
    case Opcode::kTopK:
      return InferTopKShape(instruction);
    case Opcode::kGather:
      return InferGatherShape(instruction);
    case Opcode::kScatter:
      return InferScatterShape(instruction);
    case Opcode::kTuple:
      return InferTupleShape(instruction);
    case Opcode::kGetTupleElement:
      return InferGetTupleElementShape(instruction);
    case Opcode::kCall:
    case Opcode::kFusion:
      return InferCallShape(instruction);
    case Opcode::kWhile:
      return InferWhileShape(instruction);
    case Opcode::kConditional:
      return InferConditionalShape(instruction);
    case Opcode::kRng:
      return InferRngShape(instruction);
    case Opcode::kRngBitGenerator:
      return InferRngBitGeneratorShape(instruction);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return InferBatchNormShape(instruction);
    case Opcode::kCholesky:
      return InferCholeskyShape(instruction);
    case Opcode::kTriangularSolve:
      return InferTriangularSolveShape(instruction);
    case Opcode::kAfterAll:
      return InferAfterAllShape(instruction);
    case Opcode::kAddDependency:
      return InferAddDependencyShape(instruction);
    case Opcode::kCopyStart:
      return InferCopyStartShape(instruction);
    case Opcode::kCopyDone:
      return InferCopyDoneShape(instruction);
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return InferU32ScalarShape(instruction);
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      return InferIdentityShape(instruction);
    default:
      return Internal("{} %{}: no shape rule for opcode {}", OpcodeName(opcode), instruction.name(),
                      OpcodeName(opcode));
  }
}

}  // namespace alpa::ir
