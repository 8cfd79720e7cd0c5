// reduce (variadic).
//
// For N inputs of equal dims and N scalar inits, every result position r starts at the inits
// and folds in the input elements x that project onto r (the dims in `dimensions` dropped), in
// row-major order of the reduced positions:
//   acc_1..N = to_apply(acc_1..N, x_1..N)
// The result is one array (N = 1) or a tuple of N arrays.
#include <utility>

#include "interp/computation_call.h"
#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// For each input dimension, the stride of the result it maps to (0 for reduced dimensions).
std::vector<int64_t> ResultStridesPerInputDim(int64_t rank, const std::vector<int64_t>& reduced,
                                              const std::vector<int64_t>& result_dims) {
  std::vector<int64_t> result_strides = ir::RowMajorStrides(result_dims);
  std::vector<int64_t> strides(static_cast<size_t>(rank), 0);
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    bool is_reduced = false;
    for (int64_t r : reduced) is_reduced |= r == d;
    if (!is_reduced) strides[static_cast<size_t>(d)] = result_strides[next++];
  }
  return strides;
}

template <typename Op, typename T>
Status FastReduce(const Literal& input, const std::vector<int64_t>& strides, Literal& out) {
  if constexpr (!Op::template kSupports<T>) {
    return InvalidArgument("the reducer is not defined on {}",
                           ir::DTypeName(input.shape().dtype()));
  } else {
    const T* in = input.typed_data<T>();
    T* acc = out.typed_data<T>();
    const std::vector<int64_t>& dims = input.shape().dims();
    if (input.element_count() == 0) return Status::Ok();
    if (dims.empty()) {
      acc[0] = Op::template Apply<T>(acc[0], in[0]);
      return Status::Ok();
    }
    // Row by row: the last input dimension moves the result position by a fixed stride.
    const int64_t row = dims.back();
    const int64_t row_stride = strides.back();
    std::vector<int64_t> outer(dims.begin(), dims.end() - 1);
    std::vector<int64_t> outer_strides(strides.begin(), strides.end() - 1);
    std::vector<int64_t> outer_index(outer.size(), 0);
    int64_t linear = 0;
    do {
      T* target = acc + Dot(outer_index, outer_strides);
      for (int64_t i = 0; i < row; ++i) {
        target[i * row_stride] = Op::template Apply<T>(target[i * row_stride], in[linear + i]);
      }
      linear += row;
    } while (NextIndex(outer_index, outer));
    return Status::Ok();
  }
}

Status GeneralReduce(const ir::Computation& reducer, const Operands& inputs,
                     const std::vector<int64_t>& strides, std::vector<Literal>& outs,
                     EvalContext& context) {
  const size_t n = inputs.size();
  const std::vector<int64_t>& dims = inputs[0]->shape().dims();
  if (inputs[0]->element_count() == 0) return Status::Ok();
  std::vector<int64_t> index(dims.size(), 0);
  int64_t linear = 0;
  do {
    const int64_t target = Dot(index, strides);
    std::vector<Literal> arguments;
    arguments.reserve(2 * n);
    for (size_t k = 0; k < n; ++k) arguments.push_back(ElementAsScalar(outs[k], target));
    for (size_t k = 0; k < n; ++k) arguments.push_back(ElementAsScalar(*inputs[k], linear));
    ALPA_ASSIGN_OR_RETURN(std::vector<Literal> results,
                          CallScalars(reducer, std::move(arguments), context));
    if (results.size() != n) {
      return InvalidArgument("reducer {} returns {} values for {} inputs", reducer.name(),
                             results.size(), n);
    }
    for (size_t k = 0; k < n; ++k) {
      if (!results[k].shape().Compatible(ir::Shape::Scalar(outs[k].shape().dtype()))) {
        return InvalidArgument("reducer {} returns {}, expected a {} scalar", reducer.name(),
                               results[k].shape().ToString(false),
                               ir::DTypeName(outs[k].shape().dtype()));
      }
      CopyElement(results[k], 0, outs[k], target);
    }
    ++linear;
  } while (NextIndex(index, dims));
  return Status::Ok();
}

}  // namespace

Result<Literal> EvaluateReduce(const ir::Instruction& instruction, const Operands& operands,
                               EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  if (operands.empty() || operands.size() % 2 != 0) {
    return InvalidArgument("reduce needs N inputs and N init values, has {} operands",
                           operands.size());
  }
  const size_t n = operands.size() / 2;
  const Operands inputs(operands.begin(), operands.begin() + static_cast<int64_t>(n));
  const ir::Shape& shape = instruction.shape();
  std::vector<ir::Shape> result_shapes = n == 1 && !shape.IsTuple() ? std::vector<ir::Shape>{shape}
                                         : shape.IsTuple()          ? shape.tuple_shapes()
                                                                    : std::vector<ir::Shape>{};
  const std::vector<int64_t>& reduced = instruction.attributes().dimensions;
  const std::vector<int64_t>& dims = inputs[0]->shape().dims();
  std::vector<int64_t> kept_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    bool is_reduced = false;
    for (int64_t r : reduced) is_reduced |= r == d;
    if (!is_reduced) kept_dims.push_back(dims[static_cast<size_t>(d)]);
  }
  for (size_t i = 0; i < reduced.size(); ++i) {
    const int64_t r = reduced[i];
    if (r < 0 || r >= static_cast<int64_t>(dims.size())) {
      return InvalidArgument("dimension {} is out of range for input {}", r,
                             inputs[0]->shape().ToString(false));
    }
    // XLA rejects a repeated dimension (dimensions={0,0}) as malformed.
    for (size_t j = 0; j < i; ++j) {
      if (reduced[j] == r) return InvalidArgument("dimension {} is repeated in dimensions", r);
    }
  }
  if (result_shapes.size() != n) {
    return InvalidArgument("result {} does not hold {} arrays", shape.ToString(false), n);
  }
  std::vector<Literal> outs;
  for (size_t k = 0; k < n; ++k) {
    const Literal& init = *operands[n + k];
    if (inputs[k]->shape().dims() != dims || init.shape().rank() != 0 ||
        init.shape().dtype() != inputs[k]->shape().dtype() ||
        result_shapes[k].dims() != kept_dims || result_shapes[k].dtype() != init.shape().dtype()) {
      return InvalidArgument(
          "input {} ({}) with init {} does not reduce to {}; inputs must share dims and inits "
          "must be scalars of the input type",
          k, inputs[k]->shape().ToString(false), init.shape().ToString(false),
          result_shapes[k].ToString(false));
    }
    Literal out = Literal::CreateZeros(result_shapes[k]);
    for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(init, 0, out, i);
    outs.push_back(std::move(out));
  }
  const std::vector<int64_t> strides =
      ResultStridesPerInputDim(static_cast<int64_t>(dims.size()), reduced, kept_dims);
  const ir::Computation& reducer = *instruction.to_apply();
  const ir::DType dtype = inputs[0]->shape().dtype();
  const ReducerKind kind = n == 1 ? MatchReducer(reducer, dtype) : ReducerKind::kGeneral;
  if (kind != ReducerKind::kGeneral) {
    ALPA_RETURN_IF_ERROR(VisitDType(dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      return VisitReducer(
          kind, [&](auto op) { return FastReduce<decltype(op), T>(*inputs[0], strides, outs[0]); });
    }));
  } else {
    ALPA_RETURN_IF_ERROR(GeneralReduce(reducer, inputs, strides, outs, context));
  }
  if (n == 1 && !shape.IsTuple()) return std::move(outs[0]);
  return Literal::CreateTuple(std::move(outs));
}

}  // namespace alpa::interp::internal
