// reduce-window and select-and-scatter.
//
// Window geometry, per dimension (XLA): the input is dilated by lhs_dilation (base dilation),
// padded by pad_low/pad_high, and window position k of output position o reads
//   u = o * stride + k * rhs_dilation - pad_low   (in the dilated input)
// which is input element u / lhs_dilation when u % lhs_dilation == 0 and it lies inside the
// input. Other positions (padding and dilation holes) are skipped: they hold the init value,
// which the reducer leaves unchanged for the usual identities.
#include <utility>

#include "interp/computation_call.h"
#include "interp/element_type.h"
#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

Status CheckWindow(const std::vector<ir::WindowDim>& window, const ir::Shape& input) {
  if (static_cast<int64_t>(window.size()) != input.rank()) {
    return InvalidArgument("window has {} dimensions for input {}", window.size(),
                           input.ToString(false));
  }
  for (const ir::WindowDim& w : window) {
    if (w.size < 0 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1) {
      return InvalidArgument("window sizes must be >= 0, strides and dilations >= 1");
    }
  }
  return Status::Ok();
}

// Output size of one dimension: floor((padded - dilated_window) / stride) + 1, or 0.
int64_t WindowedSize(int64_t input, const ir::WindowDim& w) {
  const int64_t dilated_input = input == 0 ? 0 : (input - 1) * w.lhs_dilation + 1;
  const int64_t padded = dilated_input + w.pad_low + w.pad_high;
  const int64_t dilated_window = w.size == 0 ? 0 : (w.size - 1) * w.rhs_dilation + 1;
  return padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1;
}

// Calls fn(linear input index) for every input element in the window of output index `o`, in
// row-major window order.
template <typename Fn>
void ForEachInWindow(const std::vector<int64_t>& o, const std::vector<ir::WindowDim>& window,
                     const std::vector<int64_t>& input_dims,
                     const std::vector<int64_t>& input_strides, Fn fn) {
  std::vector<int64_t> window_dims;
  for (const ir::WindowDim& w : window) window_dims.push_back(w.size);
  for (int64_t size : window_dims) {
    if (size == 0) return;
  }
  std::vector<int64_t> k(window.size(), 0);
  do {
    int64_t linear = 0;
    bool inside = true;
    for (size_t d = 0; d < window.size() && inside; ++d) {
      const ir::WindowDim& w = window[d];
      const int64_t u = o[d] * w.stride + k[d] * w.rhs_dilation - w.pad_low;
      inside = u >= 0 && u % w.lhs_dilation == 0 && u / w.lhs_dilation < input_dims[d];
      linear += (u / w.lhs_dilation) * input_strides[d];
    }
    if (inside) fn(linear);
  } while (NextIndex(k, window_dims));
}

Status CheckResultDims(const ir::Shape& result, const ir::Shape& input,
                       const std::vector<ir::WindowDim>& window) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < window.size(); ++d) {
    dims.push_back(WindowedSize(input.dims()[d], window[d]));
  }
  if (!result.IsArray() || result.dims() != dims || result.dtype() != input.dtype()) {
    return InvalidArgument("window over {} gives dims [{}], result is {}", input.ToString(false),
                           fmt::join(dims, ","), result.ToString(false));
  }
  return Status::Ok();
}

}  // namespace

Result<Literal> EvaluateReduceWindow(const ir::Instruction& instruction, const Operands& operands,
                                     EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  if (operands.empty() || operands.size() % 2 != 0) {
    return InvalidArgument("reduce-window needs N inputs and N init values");
  }
  const size_t n = operands.size() / 2;
  const ir::Shape& shape = instruction.shape();
  const std::vector<ir::WindowDim>& window = instruction.attributes().window;
  const ir::Shape& input_shape = operands[0]->shape();
  ALPA_RETURN_IF_ERROR(CheckWindow(window, input_shape));
  std::vector<ir::Shape> result_shapes =
      shape.IsTuple() ? shape.tuple_shapes() : std::vector<ir::Shape>{shape};
  if (result_shapes.size() != n) {
    return InvalidArgument("result {} does not hold {} arrays", shape.ToString(false), n);
  }
  std::vector<Literal> outs;
  for (size_t k = 0; k < n; ++k) {
    const Literal& init = *operands[n + k];
    if (operands[k]->shape().dims() != input_shape.dims() || init.shape().rank() != 0 ||
        init.shape().dtype() != operands[k]->shape().dtype()) {
      return InvalidArgument("inputs must share dims and inits must be scalars of their type");
    }
    ALPA_RETURN_IF_ERROR(CheckResultDims(result_shapes[k], operands[k]->shape(), window));
    outs.push_back(Literal::CreateZeros(result_shapes[k]));
  }
  const std::vector<int64_t> input_strides = ir::RowMajorStrides(input_shape.dims());
  const ir::Computation& reducer = *instruction.to_apply();
  const ir::DType dtype = input_shape.dtype();
  const ReducerKind kind = n == 1 ? MatchReducer(reducer, dtype) : ReducerKind::kGeneral;
  const std::vector<int64_t>& out_dims = result_shapes[0].dims();
  if (outs[0].element_count() == 0) {
    return shape.IsTuple() ? Literal::CreateTuple(std::move(outs)) : std::move(outs[0]);
  }
  std::vector<int64_t> o(out_dims.size(), 0);
  int64_t out_linear = 0;
  Status status;
  do {
    if (kind != ReducerKind::kGeneral) {
      status = VisitDType(dtype, [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        return VisitReducer(kind, [&](auto op) -> Status {
          using Op = decltype(op);
          if constexpr (!Op::template kSupports<T>) {
            return InvalidArgument("the reducer is not defined on {}", ir::DTypeName(dtype));
          } else {
            const T* in = operands[0]->typed_data<T>();
            T acc = operands[1]->typed_data<T>()[0];
            ForEachInWindow(o, window, input_shape.dims(), input_strides,
                            [&](int64_t i) { acc = Op::template Apply<T>(acc, in[i]); });
            outs[0].typed_data<T>()[out_linear] = acc;
            return Status::Ok();
          }
        });
      });
    } else {
      std::vector<Literal> acc;
      for (size_t k = 0; k < n; ++k) acc.push_back(*operands[n + k]);
      ForEachInWindow(o, window, input_shape.dims(), input_strides, [&](int64_t i) {
        if (!status.ok()) return;
        std::vector<Literal> arguments = std::move(acc);
        for (size_t k = 0; k < n; ++k) arguments.push_back(ElementAsScalar(*operands[k], i));
        Result<std::vector<Literal>> results =
            CallScalars(reducer, std::move(arguments), context);
        if (!results.ok()) {
          status = results.status();
        } else if (results->size() != n) {
          status = InvalidArgument("reducer {} returns {} values for {} inputs", reducer.name(),
                                   results->size(), n);
        } else {
          acc = std::move(results).value();
        }
      });
      for (size_t k = 0; k < n && status.ok(); ++k) {
        if (!acc[k].shape().Compatible(ir::Shape::Scalar(outs[k].shape().dtype()))) {
          status = InvalidArgument("reducer {} returns {}", reducer.name(),
                                   acc[k].shape().ToString(false));
        } else {
          CopyElement(acc[k], 0, outs[k], out_linear);
        }
      }
    }
    ALPA_RETURN_IF_ERROR(status);
    ++out_linear;
  } while (NextIndex(o, out_dims));
  if (!shape.IsTuple()) return std::move(outs[0]);
  return Literal::CreateTuple(std::move(outs));
}

// select-and-scatter(operand, source, init): the result starts at init everywhere. For each
// window (one per source element), the selected operand element is the first in window order
// that no later element beats: selected = e whenever !select(selected, e). Then
//   result[selected] = scatter(result[selected], source[window]).
Result<Literal> EvaluateSelectAndScatter(const ir::Instruction& instruction,
                                         const Operands& operands, EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 3));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  ALPA_RETURN_IF_ERROR(ExpectCalledComputations(instruction, 2));
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  const std::vector<ir::WindowDim>& window = instruction.attributes().window;
  ALPA_RETURN_IF_ERROR(CheckWindow(window, operand.shape()));
  ALPA_RETURN_IF_ERROR(CheckResultDims(
      ir::Shape::Array(operand.shape().dtype(), source.shape().dims()), operand.shape(), window));
  if (!instruction.shape().Compatible(operand.shape()) || init.shape().rank() != 0 ||
      init.shape().dtype() != source.shape().dtype() ||
      source.shape().dtype() != operand.shape().dtype()) {
    return InvalidArgument("result must have the operand's shape and init must be a scalar");
  }
  const ir::Computation& select = *instruction.called_computation(0);
  const ir::Computation& scatter = *instruction.called_computation(1);
  Literal out = Literal::CreateZeros(instruction.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(init, 0, out, i);
  if (source.element_count() == 0) return out;
  const std::vector<int64_t> input_strides = ir::RowMajorStrides(operand.shape().dims());
  const ir::DType dtype = operand.shape().dtype();
  const std::optional<ir::ComparisonDirection> direction = MatchComparator(select, dtype);
  // select(a, b) for the comparator fast path, by value through f64 for ordered real types.
  auto selects = [&](int64_t a, int64_t b) -> Result<bool> {
    if (direction.has_value() && !ir::IsComplex(dtype)) {
      // Integers compare exactly as int64, floats as f64 (both exact for their values).
      const bool integral = !ir::IsFloating(dtype);
      const double x = integral ? 0.0 : operand.GetDouble(a);
      const double y = integral ? 0.0 : operand.GetDouble(b);
      const int64_t p = integral ? operand.GetInt(a) : 0;
      const int64_t q = integral ? operand.GetInt(b) : 0;
      switch (*direction) {
        case ir::ComparisonDirection::kLt: return integral ? p < q : x < y;
        case ir::ComparisonDirection::kLe: return integral ? p <= q : x <= y;
        case ir::ComparisonDirection::kGt: return integral ? p > q : x > y;
        default: return integral ? p >= q : x >= y;
      }
    }
    std::vector<Literal> arguments;
    arguments.push_back(ElementAsScalar(operand, a));
    arguments.push_back(ElementAsScalar(operand, b));
    ALPA_ASSIGN_OR_RETURN(std::vector<Literal> result,
                          CallScalars(select, std::move(arguments), context));
    if (result.size() != 1 || result[0].shape().dtype() != ir::DType::kPred) {
      return InvalidArgument("select computation {} must return a pred", select.name());
    }
    return result[0].GetInt(0) != 0;
  };
  std::vector<int64_t> o(source.shape().dims().size(), 0);
  int64_t source_linear = 0;
  do {
    int64_t selected = -1;
    Status status;
    ForEachInWindow(o, window, operand.shape().dims(), input_strides, [&](int64_t i) {
      if (!status.ok()) return;
      if (selected < 0) {
        selected = i;
        return;
      }
      Result<bool> keep = selects(selected, i);
      if (!keep.ok()) {
        status = keep.status();
      } else if (!*keep) {
        selected = i;
      }
    });
    ALPA_RETURN_IF_ERROR(status);
    if (selected >= 0) {
      std::vector<Literal> arguments;
      arguments.push_back(ElementAsScalar(out, selected));
      arguments.push_back(ElementAsScalar(source, source_linear));
      ALPA_ASSIGN_OR_RETURN(std::vector<Literal> result,
                            CallScalars(scatter, std::move(arguments), context));
      if (result.size() != 1 || !result[0].shape().Compatible(ir::Shape::Scalar(dtype))) {
        return InvalidArgument("scatter computation {} must return a {} scalar", scatter.name(),
                               ir::DTypeName(dtype));
      }
      CopyElement(result[0], 0, out, selected);
    }
    ++source_linear;
  } while (NextIndex(o, source.shape().dims()));
  return out;
}

}  // namespace alpa::interp::internal
