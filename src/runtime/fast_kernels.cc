#include "runtime/fast_kernels.h"

#include <algorithm>
#include <optional>

#include "ir/computation.h"
#include "ir/dot_dimensions.h"
#include "ir/shape_inference.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/reduce.h"
#include "kernels/strided_copy.h"
#include "runtime/fast_kernels_internal.h"

namespace alpa::runtime {

namespace internal {

std::optional<kernels::UnaryFn> UnaryFnOf(Opcode opcode) {
  switch (opcode) {
    case Opcode::kNegate:
      return kernels::UnaryFn::kNegate;
    case Opcode::kAbs:
      return kernels::UnaryFn::kAbs;
    case Opcode::kExp:
      return kernels::UnaryFn::kExp;
    case Opcode::kLog:
      return kernels::UnaryFn::kLog;
    case Opcode::kTanh:
      return kernels::UnaryFn::kTanh;
    case Opcode::kSqrt:
      return kernels::UnaryFn::kSqrt;
    case Opcode::kRsqrt:
      return kernels::UnaryFn::kRsqrt;
    case Opcode::kLogistic:
      return kernels::UnaryFn::kLogistic;
    case Opcode::kSin:
      return kernels::UnaryFn::kSine;
    case Opcode::kCos:
      return kernels::UnaryFn::kCosine;
    default:
      return std::nullopt;
  }
}

std::optional<kernels::BinaryFn> BinaryFnOf(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
      return kernels::BinaryFn::kAdd;
    case Opcode::kSubtract:
      return kernels::BinaryFn::kSubtract;
    case Opcode::kMultiply:
      return kernels::BinaryFn::kMultiply;
    case Opcode::kDivide:
      return kernels::BinaryFn::kDivide;
    case Opcode::kMaximum:
      return kernels::BinaryFn::kMaximum;
    case Opcode::kMinimum:
      return kernels::BinaryFn::kMinimum;
    case Opcode::kPower:
      return kernels::BinaryFn::kPower;
    default:
      return std::nullopt;
  }
}

}  // namespace internal

namespace {

using internal::BinaryFnOf;
using internal::IsArrayOf;
using internal::Operands;
using internal::Strides;
using internal::UnaryFnOf;
using ir::DType;
using ir::Literal;
using ir::Opcode;
using ir::Shape;

std::optional<kernels::ReduceFn> ReduceFnOf(const ir::Instruction& reduce) {
  const DType dtype = reduce.shape().dtype();
  switch (ir::ScalarBinaryOpcode(*reduce.to_apply(), dtype).value_or(Opcode::kParameter)) {
    case Opcode::kAdd:
      return kernels::ReduceFn::kSum;
    case Opcode::kMaximum:
      return kernels::ReduceFn::kMax;
    case Opcode::kMinimum:
      return kernels::ReduceFn::kMin;
    default:
      return std::nullopt;
  }
}

// The input of a single-range reduce as [outer, reduce, inner], or nullopt when a kept dimension
// of more than one element lies between two reduced ones.
struct ReduceExtents {
  int64_t outer = 1;
  int64_t reduce = 1;
  int64_t inner = 1;
};

std::optional<ReduceExtents> ReduceExtentsOf(const std::vector<int64_t>& dims,
                                             const std::vector<int64_t>& reduced) {
  std::vector<bool> is_reduced(dims.size(), false);
  for (int64_t d : reduced) is_reduced[static_cast<size_t>(d)] = true;
  ReduceExtents extents;
  bool seen_reduced = false;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (is_reduced[d]) {
      if (seen_reduced && extents.inner > 1) return std::nullopt;
      seen_reduced = true;
      extents.reduce *= dims[d];
    } else {
      (seen_reduced ? extents.inner : extents.outer) *= dims[d];
    }
  }
  return extents;
}

// --- the kernels (their preconditions were checked by SelectFastKernel) ---

Result<Literal> RunUnary(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = Literal::CreateUninitialized(instruction.shape());
  kernels::Unary(*UnaryFnOf(instruction.opcode()), out.shape().dtype(), operands[0]->data(),
                 out.data(), out.element_count());
  return out;
}

Result<Literal> RunBinary(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = Literal::CreateUninitialized(instruction.shape());
  kernels::Binary(*BinaryFnOf(instruction.opcode()), out.shape().dtype(), operands[0]->data(),
                  operands[1]->data(), out.data(), out.element_count());
  return out;
}

Result<Literal> RunCompare(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = Literal::CreateUninitialized(instruction.shape());
  kernels::Compare(instruction.attributes().comparison_direction, operands[0]->shape().dtype(),
                   operands[0]->data(), operands[1]->data(), out.typed_data<bool>(),
                   out.element_count());
  return out;
}

Result<Literal> RunSelect(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = Literal::CreateUninitialized(instruction.shape());
  kernels::Select(out.shape().dtype(), operands[0]->typed_data<bool>(), operands[1]->data(),
                  operands[2]->data(), out.data(), out.element_count());
  return out;
}

Result<Literal> RunLogical(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = Literal::CreateUninitialized(instruction.shape());
  kernels::LogicalPred(
      instruction.opcode() == Opcode::kAnd ? kernels::LogicalFn::kAnd : kernels::LogicalFn::kOr,
      operands[0]->typed_data<bool>(), operands[1]->typed_data<bool>(), out.typed_data<bool>(),
      out.element_count());
  return out;
}

// clamp(lo, x, hi), each bound a scalar or an array of x's dimensions.
Result<Literal> RunClamp(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = Literal::CreateUninitialized(instruction.shape());
  auto stride = [](const Literal& bound) { return bound.shape().rank() == 0 ? 0 : 1; };
  kernels::ClampS32(operands[0]->typed_data<int32_t>(), stride(*operands[0]),
                    operands[1]->typed_data<int32_t>(), operands[2]->typed_data<int32_t>(),
                    stride(*operands[2]), out.typed_data<int32_t>(), out.element_count());
  return out;
}

// A constant's value, copied (the executor owns each step's result).
Result<Literal> RunConstant(const ir::Instruction& instruction, const Operands&) {
  return *instruction.attributes().literal;
}

Result<Literal> RunConvert(const ir::Instruction& instruction, const Operands& operands) {
  Literal out = Literal::CreateUninitialized(instruction.shape());
  const DType from = operands[0]->shape().dtype();
  if (from == DType::kS32) {
    kernels::ConvertS32ToF32(operands[0]->typed_data<int32_t>(), out.typed_data<float>(),
                             out.element_count());
  } else {
    kernels::ConvertFloat(from, operands[0]->data(), out.shape().dtype(), out.data(),
                          out.element_count());
  }
  return out;
}

Result<Literal> RunReduce(const ir::Instruction& instruction, const Operands& operands) {
  const ReduceExtents extents =
      *ReduceExtentsOf(operands[0]->shape().dims(), instruction.attributes().dimensions);
  Literal out = Literal::CreateUninitialized(instruction.shape());
  const kernels::ReduceFn fn = *ReduceFnOf(instruction);
  const DType dtype = instruction.shape().dtype();
  if (dtype == DType::kS32) {
    kernels::ReduceS32(fn, operands[1]->typed_data<int32_t>()[0],
                       operands[0]->typed_data<int32_t>(), extents.outer, extents.reduce,
                       extents.inner, out.typed_data<int32_t>());
  } else if (dtype == DType::kF32) {
    kernels::ReduceF32(fn, operands[1]->typed_data<float>()[0], operands[0]->typed_data<float>(),
                       extents.outer, extents.reduce, extents.inner, out.typed_data<float>());
  } else {
    // A 16-bit init widens exactly to f32.
    kernels::Reduce16(fn, dtype, static_cast<float>(operands[1]->GetDouble(0)), operands[0]->data(),
                      extents.outer, extents.reduce, extents.inner, out.data());
  }
  return out;
}

// How `operand` can be read as the matrices of a batched matmul whose position i is its dimension
// order[i]: `batch_dims` batch dimensions, then `row_dims` dimensions of the matrices' rows, then
// those of their columns.
//   - in place, row-major: the order is the identity;
//   - in place, each matrix transposed, where `transposed_in_place`: the operand is
//     [batch..., columns..., rows...] in memory, each group in order (dW = X^T dY reads X so,
//     dX = dY W^T reads W so);
//   - otherwise through a transposed copy in `scratch`, row-major.
struct MatrixOperand {
  const void* data;
  kernels::MatrixLayout layout;
};
Result<MatrixOperand> AsMatrices(const Literal& operand, const std::vector<int64_t>& order,
                                 size_t batch_dims, size_t row_dims, bool transposed_in_place,
                                 Literal& scratch) {
  const size_t rank = order.size();
  const size_t column_dims = rank - batch_dims - row_dims;
  bool identity = true, transposed = transposed_in_place;
  for (size_t i = 0; i < rank; ++i) {
    identity &= order[i] == static_cast<int64_t>(i);
    // Row dimension j is at batch_dims + column_dims + j in memory, column j at batch_dims + j.
    const size_t in_memory = i < batch_dims              ? i
                             : i < batch_dims + row_dims ? i + column_dims
                                                         : i - row_dims;
    transposed &= order[i] == static_cast<int64_t>(in_memory);
  }
  if (identity) return MatrixOperand{operand.data(), kernels::MatrixLayout::kRowMajor};
  if (transposed) return MatrixOperand{operand.data(), kernels::MatrixLayout::kTransposed};
  const std::vector<int64_t> operand_strides = Strides(operand.shape());
  std::vector<int64_t> dims, strides;
  for (int64_t d : order) {
    dims.push_back(operand.shape().dim(d));
    strides.push_back(operand_strides[static_cast<size_t>(d)]);
  }
  const DType dtype = operand.shape().dtype();
  scratch = Literal::CreateUninitialized(Shape::Array(dtype, dims));
  const kernels::StridedView view{dims, std::move(strides), Strides(scratch.shape())};
  ALPA_RETURN_IF_ERROR(
      kernels::StridedCopy(ir::DTypeByteSize(dtype), view, operand.data(), scratch.data()));
  return MatrixOperand{scratch.data(), kernels::MatrixLayout::kRowMajor};
}

// oneDNN 2.6 reads one transposed A at half its row-major rate when C is narrow: on an AVX2 EPYC
// (kernels_bench --benchmark_filter=Layouts) 1024x1024x256 ran at 63 GFLOP/s against 151
// row-major, where n = 512 ran level (146) and a transposed B cost nothing at any width. Below
// this many columns of C a single (unbatched) transposed A is copied first, which costs less.
// Batches of them are read in place at any width: the large GPT's attention gradients (64
// batches of 512x512x64) took 0.23 s a step so against 0.34 s copied.
constexpr int64_t kMinColumnsForTransposedLhs = 512;

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= shape.dim(d);
  return product;
}

// As the interpreter's dot: the operands in the order lhs [batch, free, contracting] and rhs
// [batch, contracting, free] make the row-major product C[b, m, n] the dot's result. Operands in
// that order, or holding each matrix transposed (a single lhs matrix only for a wide enough C),
// are read in place; the others are transposed by the parallel strided copy.
Result<Literal> RunDot(const ir::Instruction& instruction, const Operands& operands) {
  const ir::DotDimensionNumbers& dn = *instruction.attributes().dot_dims;
  const Shape& lhs = operands[0]->shape();
  const Shape& rhs = operands[1]->shape();
  const ir::DotMatMulLayout layout = ir::MatMulLayoutOf(lhs.rank(), rhs.rank(), dn);
  const int64_t k = Product(lhs, dn.lhs_contracting_dims);
  if (k == 0) return Literal::CreateZeros(instruction.shape());  // an empty sum
  const size_t batch_dims = dn.lhs_batch_dims.size();
  const int64_t batch = Product(lhs, dn.lhs_batch_dims);
  const int64_t n = Product(rhs, layout.rhs_free);
  Literal lhs_scratch, rhs_scratch;
  ALPA_ASSIGN_OR_RETURN(
      const MatrixOperand a,
      AsMatrices(*operands[0], layout.lhs_order, batch_dims, layout.lhs_free.size(),
                 batch > 1 || n >= kMinColumnsForTransposedLhs, lhs_scratch));
  ALPA_ASSIGN_OR_RETURN(
      const MatrixOperand b,
      AsMatrices(*operands[1], layout.rhs_order, batch_dims, dn.rhs_contracting_dims.size(),
                 /*transposed_in_place=*/true, rhs_scratch));
  Literal out = Literal::CreateUninitialized(instruction.shape());
  if (out.element_count() == 0) return out;
  ALPA_RETURN_IF_ERROR(kernels::BatchMatMul(out.shape().dtype(), batch,
                                            Product(lhs, layout.lhs_free), k, n, a.data, b.data,
                                            out.data(), a.layout, b.layout));
  return out;
}

// --- selection ---

// Every operand an array of the result's dimensions (the elementwise ops' rule).
bool SameDimsAsResult(const ir::Instruction& instruction) {
  for (const ir::Instruction* operand : instruction.operands()) {
    if (!operand->shape().IsArray() || operand->shape().dims() != instruction.shape().dims()) {
      return false;
    }
  }
  return instruction.shape().IsArray();
}

bool ComparesFast(const ir::Instruction& instruction) {
  const DType dtype = instruction.operand(0)->shape().dtype();
  const ir::ComparisonType type = instruction.attributes().comparison_type;
  if (instruction.operand(1)->shape().dtype() != dtype) return false;
  if (ir::IsF32F16OrBF16(dtype)) {
    return type == ir::ComparisonType::kDefault || type == ir::ComparisonType::kFloat;
  }
  return dtype == DType::kS32 &&
         (type == ir::ComparisonType::kDefault || type == ir::ComparisonType::kSigned);
}

// One f32, f16, bf16 or s32 input with an init value of its type.
bool ReducesFast(const ir::Instruction& instruction) {
  const DType dtype = instruction.shape().IsArray() ? instruction.shape().dtype() : DType::kPred;
  if (instruction.operand_count() != 2 || (!ir::IsF32F16OrBF16(dtype) && dtype != DType::kS32) ||
      !IsArrayOf(instruction.operand(0)->shape(), dtype) ||
      !IsArrayOf(instruction.operand(1)->shape(), dtype) ||
      instruction.operand(1)->shape().rank() != 0 || !ReduceFnOf(instruction)) {
    return false;
  }
  return ReduceExtentsOf(instruction.operand(0)->shape().dims(),
                         instruction.attributes().dimensions)
      .has_value();
}

// s32 clamp with bounds that are scalars or of the operand's dimensions.
bool ClampsFast(const ir::Instruction& instruction) {
  if (!IsArrayOf(instruction.shape(), DType::kS32) || instruction.operand_count() != 3 ||
      instruction.operand(1)->shape().dims() != instruction.shape().dims()) {
    return false;
  }
  for (const ir::Instruction* operand : instruction.operands()) {
    const Shape& shape = operand->shape();
    if (!IsArrayOf(shape, DType::kS32) ||
        (shape.rank() != 0 && shape.dims() != instruction.shape().dims())) {
      return false;
    }
  }
  return true;
}

// A constant whose value is there and has the instruction's shape (the interpreter names what is
// wrong with the others).
bool HasConstantValue(const ir::Instruction& instruction) {
  const std::optional<Literal>& literal = instruction.attributes().literal;
  return literal.has_value() && !literal->is_elided() &&
         literal->shape().Compatible(instruction.shape());
}

FastKernel SelectElementwise(const ir::Instruction& instruction) {
  if (instruction.opcode() == Opcode::kClamp) return ClampsFast(instruction) ? RunClamp : nullptr;
  if (instruction.operand_count() == 0 || !SameDimsAsResult(instruction)) return nullptr;
  const Opcode opcode = instruction.opcode();
  const Shape& shape = instruction.shape();
  const DType operand = instruction.operand(0)->shape().dtype();
  if (UnaryFnOf(opcode) && ir::IsF32F16OrBF16(shape.dtype()) && operand == shape.dtype()) {
    return RunUnary;
  }
  if (BinaryFnOf(opcode) && ir::IsF32F16OrBF16(shape.dtype()) && operand == shape.dtype() &&
      instruction.operand(1)->shape().dtype() == shape.dtype()) {
    return RunBinary;
  }
  if ((opcode == Opcode::kAnd || opcode == Opcode::kOr) && shape.dtype() == DType::kPred &&
      operand == DType::kPred && instruction.operand(1)->shape().dtype() == DType::kPred) {
    return RunLogical;
  }
  if (opcode == Opcode::kCompare && shape.dtype() == DType::kPred && ComparesFast(instruction)) {
    return RunCompare;
  }
  if (opcode == Opcode::kSelect && operand == DType::kPred &&
      (ir::DTypeByteSize(shape.dtype()) == 4 || ir::DTypeByteSize(shape.dtype()) == 2) &&
      instruction.operand(1)->shape().dtype() == shape.dtype() &&
      instruction.operand(2)->shape().dtype() == shape.dtype()) {
    return RunSelect;
  }
  // Between float types, and from s32 (to f32) and pred. The same type is data movement.
  if (opcode == Opcode::kConvert && ir::IsF32F16OrBF16(shape.dtype()) && operand != shape.dtype() &&
      (ir::IsF32F16OrBF16(operand) || operand == DType::kPred ||
       (operand == DType::kS32 && shape.dtype() == DType::kF32))) {
    return RunConvert;
  }
  return nullptr;
}

}  // namespace

FastKernel SelectFastKernel(const ir::Instruction& instruction) {
  // The kernels trust the attributes (dimensions, slices, padding) to fit the shapes: only an
  // instruction whose shape rule holds gets one; the interpreter reports what is wrong with the
  // others.
  if (ir::HasShapeRule(instruction.opcode())) {
    const Result<Shape> inferred = ir::InferShape(instruction);
    if (!inferred.ok() || !inferred->Compatible(instruction.shape())) return nullptr;
  }
  if (instruction.opcode() == Opcode::kReduce) {
    return ReducesFast(instruction) ? RunReduce : nullptr;
  }
  if (instruction.opcode() == Opcode::kConstant) {
    return HasConstantValue(instruction) ? RunConstant : nullptr;
  }
  if (instruction.opcode() == Opcode::kDot) {
    const Shape& shape = instruction.shape();
    const bool one_float_type = shape.IsArray() && ir::IsF32F16OrBF16(shape.dtype()) &&
                                IsArrayOf(instruction.operand(0)->shape(), shape.dtype()) &&
                                IsArrayOf(instruction.operand(1)->shape(), shape.dtype());
    return one_float_type && instruction.attributes().dot_dims ? RunDot : nullptr;
  }
  if (FastKernel kernel = SelectElementwise(instruction)) return kernel;
  if (FastKernel kernel = internal::SelectIndexing(instruction)) return kernel;
  return internal::SelectDataMovement(instruction);
}

}  // namespace alpa::runtime
