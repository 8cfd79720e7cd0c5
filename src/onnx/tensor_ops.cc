// Data movement and the shape arithmetic exports carry. Shape, Constant, ConstantOfShape and
// Range give values known at import; Gather, Concat, Slice, Unsqueeze, Squeeze and Reshape of
// known values fold (vectors of a shape, mostly) and otherwise become IR instructions.
//
//   Gather(data, indices, axis=k): out = data[:k] + indices.shape + data[k+1:], XLA's gather
//   with offset_dims = the data dimensions but k at their output places, collapsed {k},
//   start_index_map {k}, index_vector_dim = rank(indices).
#include <numeric>

#include "onnx/node_context.h"
#include "onnx/onnx_file.h"

namespace alpa::onnx {
namespace {

using ir::Instruction;

int64_t Product(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// Sets output 0 to x reshaped to `dims`, known when x is.
void SetReshaped(NodeContext& node, int input, const std::vector<int64_t>& dims) {
  if (node.IsKnown(input)) {
    node.SetKnownOutput(0, Reshaped(*node.input(input).known, dims));
  } else {
    node.SetOutput(0, node.b().Reshape(node.Input(input), dims));
  }
}

Status Constant(NodeContext& node) {
  const ::onnx::AttributeProto* value = node.Attribute("value");
  if (value != nullptr) {
    ALPA_ASSIGN_OR_RETURN(ir::Literal literal, TensorValue(value->t(), {}));
    node.SetKnownOutput(0, std::move(literal));
  } else if (const ::onnx::AttributeProto* f = node.Attribute("value_float")) {
    node.SetKnownOutput(0, ir::Literal::Scalar(ir::DType::kF32, f->f()));
  } else if (const ::onnx::AttributeProto* i = node.Attribute("value_int")) {
    node.SetKnownOutput(0, IntLiteral({i->i()}, {}));
  } else if (const ::onnx::AttributeProto* ints = node.Attribute("value_ints")) {
    node.SetKnownOutput(
        0, IntLiteral({ints->ints().begin(), ints->ints().end()}, {ints->ints_size()}));
  } else {
    return node.Error("a Constant without value, value_float, value_int or value_ints");
  }
  return Status::Ok();
}

Status ConstantOfShape(NodeContext& node) {
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> dims, node.KnownInts(0));
  ir::Literal fill = ir::Literal::Scalar(ir::DType::kF32, 0);
  if (const ::onnx::AttributeProto* value = node.Attribute("value")) {
    ALPA_ASSIGN_OR_RETURN(fill, TensorValue(value->t(), {}));
  }
  ir::Literal filled = ir::Literal::CreateZeros(ir::Shape::Array(fill.shape().dtype(), dims));
  for (int64_t i = 0; i < filled.element_count(); ++i) {
    if (ir::IsFloating(fill.shape().dtype())) {
      filled.SetDouble(i, fill.GetDouble(0));
    } else {
      filled.SetInt(i, fill.GetInt(0));
    }
  }
  node.SetKnownOutput(0, std::move(filled));
  return Status::Ok();
}

Status ShapeOf(NodeContext& node) {
  const std::vector<int64_t>& dims = node.input_shape(0).dims();
  const auto rank = static_cast<int64_t>(dims.size());
  int64_t start = node.Int("start", 0), end = node.Int("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  std::vector<int64_t> values(dims.begin() + start, dims.begin() + std::max(start, end));
  node.SetKnownOutput(0, IntLiteral(values, {static_cast<int64_t>(values.size())}));
  return Status::Ok();
}

Status Range(NodeContext& node) {
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> start, node.KnownInts(0));
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> limit, node.KnownInts(1));
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> delta, node.KnownInts(2));
  if (delta[0] == 0) return node.Error("a Range with delta 0");
  std::vector<int64_t> values;
  for (int64_t v = start[0]; delta[0] > 0 ? v < limit[0] : v > limit[0]; v += delta[0]) {
    values.push_back(v);
  }
  node.SetKnownOutput(0, IntLiteral(values, {static_cast<int64_t>(values.size())}));
  return Status::Ok();
}

Status Reshape(NodeContext& node) {
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> dims, node.KnownInts(1));
  const std::vector<int64_t>& from = node.input_shape(0).dims();
  const bool allow_zero = node.Int("allowzero", 0) != 0;
  int64_t inferred = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allow_zero) {
      if (i >= from.size())
        return node.Error("shape entry {} copies a dimension the input lacks", i);
      dims[i] = from[i];
    } else if (dims[i] == -1) {
      if (inferred >= 0) return node.Error("more than one -1 in the shape");
      inferred = static_cast<int64_t>(i);
    }
  }
  const int64_t elements = Product(from);
  if (inferred >= 0) {
    dims[static_cast<size_t>(inferred)] = 1;
    const int64_t rest = Product(dims);
    if (rest == 0 || elements % rest != 0) {
      return node.Error("cannot reshape {} elements to [{}]", elements, fmt::join(dims, ","));
    }
    dims[static_cast<size_t>(inferred)] = elements / rest;
  }
  if (Product(dims) != elements) {
    return node.Error(
        "cannot reshape {} (of {} elements) to [{}]; a shape baked into the export does not fit "
        "this batch: export with dynamic_axes or keep the exported batch",
        node.input_shape(0).ToString(), elements, fmt::join(dims, ","));
  }
  SetReshaped(node, 0, dims);
  return Status::Ok();
}

Status Flatten(NodeContext& node) {
  const std::vector<int64_t>& dims = node.input_shape(0).dims();
  ALPA_ASSIGN_OR_RETURN(int64_t axis,
                        node.Axis(node.Int("axis", 1), static_cast<int64_t>(dims.size()) + 1));
  const std::vector<int64_t> outer(dims.begin(), dims.begin() + axis);
  const std::vector<int64_t> inner(dims.begin() + axis, dims.end());
  SetReshaped(node, 0, {Product(outer), Product(inner)});
  return Status::Ok();
}

// Unsqueeze and Squeeze take their axes as an input from opset 13.
Result<std::vector<int64_t>> AxesInput(NodeContext& node, int64_t rank) {
  std::vector<int64_t> axes;
  if (node.has_input(1)) {
    ALPA_ASSIGN_OR_RETURN(axes, node.KnownInts(1));
  }
  for (int64_t& axis : axes) {
    ALPA_ASSIGN_OR_RETURN(axis, node.Axis(axis, rank));
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

Status Unsqueeze(NodeContext& node) {
  const std::vector<int64_t>& from = node.input_shape(0).dims();
  const auto rank = static_cast<int64_t>(from.size());
  if (!node.has_input(1)) return node.Error("the axes input is missing");
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                        AxesInput(node, rank + node.input_shape(1).ElementCount()));
  std::vector<int64_t> dims;
  size_t next = 0;
  for (int64_t d = 0; d < rank + static_cast<int64_t>(axes.size()); ++d) {
    dims.push_back(std::binary_search(axes.begin(), axes.end(), d) ? 1 : from[next++]);
  }
  SetReshaped(node, 0, dims);
  return Status::Ok();
}

Status Squeeze(NodeContext& node) {
  const std::vector<int64_t>& from = node.input_shape(0).dims();
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                        AxesInput(node, static_cast<int64_t>(from.size())));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(from.size()); ++d) {
    const bool listed = std::binary_search(axes.begin(), axes.end(), d);
    if (listed && from[d] != 1) return node.Error("dimension {} has size {}, not 1", d, from[d]);
    if (!listed && !(axes.empty() && from[d] == 1)) dims.push_back(from[d]);
  }
  SetReshaped(node, 0, dims);
  return Status::Ok();
}

Status Transpose(NodeContext& node) {
  const int64_t rank = node.input_shape(0).rank();
  std::vector<int64_t> reversed(static_cast<size_t>(rank));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  node.SetOutput(0, node.b().Transpose(node.Input(0), node.Ints("perm", reversed)));
  return Status::Ok();
}

Status Expand(NodeContext& node) {
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> shape, node.KnownInts(1));
  std::optional<std::vector<int64_t>> dims = BroadcastDims(node.input_shape(0).dims(), shape);
  if (!dims) {
    return node.Error("{} does not broadcast to [{}]", node.input_shape(0).ToString(),
                      fmt::join(shape, ","));
  }
  node.SetOutput(0, BroadcastTo(node.b(), node.Input(0), *dims));
  return Status::Ok();
}

Status Concat(NodeContext& node) {
  const int64_t rank = node.input_shape(0).rank();
  ALPA_ASSIGN_OR_RETURN(int64_t axis, node.Axis(node.Int("axis", 0), rank));
  bool known = rank == 1;
  for (int i = 0; i < node.node().input_size(); ++i) known = known && node.IsKnown(i);
  if (known && ir::IsInteger(node.input_shape(0).dtype())) {
    std::vector<int64_t> values;
    for (int i = 0; i < node.node().input_size(); ++i) {
      std::vector<int64_t> part = LiteralInts(*node.input(i).known);
      values.insert(values.end(), part.begin(), part.end());
    }
    node.SetKnownOutput(
        0, ir::Literal::FromInts(
               ir::Shape::Array(node.input_shape(0).dtype(), {static_cast<int64_t>(values.size())}),
               values));
    return Status::Ok();
  }
  std::vector<Instruction*> operands;
  for (int i = 0; i < node.node().input_size(); ++i) {
    if (node.input_shape(i).dim(axis) > 0) operands.push_back(node.Input(i));
  }
  node.SetOutput(0, node.b().Concatenate(operands, axis));
  return Status::Ok();
}

Status Slice(NodeContext& node) {
  const std::vector<int64_t>& dims = node.input_shape(0).dims();
  const auto rank = static_cast<int64_t>(dims.size());
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> starts, node.KnownInts(1));
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> ends, node.KnownInts(2));
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (node.has_input(3)) {
    ALPA_ASSIGN_OR_RETURN(axes, node.KnownInts(3));
  }
  if (node.has_input(4)) {
    ALPA_ASSIGN_OR_RETURN(steps, node.KnownInts(4));
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return node.Error("starts, ends, axes and steps differ in length");
  }
  std::vector<ir::SliceDim> slice(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) slice[static_cast<size_t>(d)] = {0, dims[d], 1};
  for (size_t i = 0; i < starts.size(); ++i) {
    ALPA_ASSIGN_OR_RETURN(int64_t axis, node.Axis(axes[i], rank));
    if (steps[i] <= 0) {
      return node.Error("a slice with step {} (reversed) is not supported; only positive steps",
                        steps[i]);
    }
    // Negative positions count from the end; both are clamped to [0, dim].
    auto clamp = [&](int64_t position) {
      if (position < 0) position += dims[axis];
      return std::clamp<int64_t>(position, 0, dims[axis]);
    };
    const int64_t start = clamp(starts[i]);
    slice[static_cast<size_t>(axis)] = {start, std::max(start, clamp(ends[i])), steps[i]};
  }
  if (node.IsKnown(0) && rank == 1 && ir::IsInteger(node.input_shape(0).dtype())) {
    const std::vector<int64_t> values = LiteralInts(*node.input(0).known);
    std::vector<int64_t> sliced;
    for (int64_t p = slice[0].start; p < slice[0].limit; p += slice[0].stride) {
      sliced.push_back(values[static_cast<size_t>(p)]);
    }
    node.SetKnownOutput(0, IntLiteral(sliced, {static_cast<int64_t>(sliced.size())}));
    return Status::Ok();
  }
  node.SetOutput(0, node.b().Slice(node.Input(0), slice));
  return Status::Ok();
}

Status Split(NodeContext& node) {
  const std::vector<int64_t>& dims = node.input_shape(0).dims();
  ALPA_ASSIGN_OR_RETURN(int64_t axis,
                        node.Axis(node.Int("axis", 0), static_cast<int64_t>(dims.size())));
  std::vector<int64_t> sizes;
  if (node.has_input(1)) {
    ALPA_ASSIGN_OR_RETURN(sizes, node.KnownInts(1));
  } else {
    const int64_t parts = node.output_count();
    if (dims[axis] % parts != 0) {
      return node.Error("dimension {} of size {} does not split into {} equal parts", axis,
                        dims[axis], parts);
    }
    sizes.assign(static_cast<size_t>(parts), dims[axis] / parts);
  }
  if (static_cast<int>(sizes.size()) != node.output_count() ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != dims[axis]) {
    return node.Error("split sizes [{}] do not cover dimension {} of size {} in {} outputs",
                      fmt::join(sizes, ","), axis, dims[axis], node.output_count());
  }
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<ir::SliceDim> slice;
    for (size_t d = 0; d < dims.size(); ++d) slice.push_back({0, dims[d], 1});
    slice[static_cast<size_t>(axis)] = {start, start + sizes[i], 1};
    node.SetOutput(static_cast<int>(i), node.b().Slice(node.Input(0), slice));
    start += sizes[i];
  }
  return Status::Ok();
}

Status Gather(NodeContext& node) {
  const ir::Shape& data = node.input_shape(0);
  const ir::Shape& indices = node.input_shape(1);
  ALPA_ASSIGN_OR_RETURN(int64_t axis, node.Axis(node.Int("axis", 0), data.rank()));
  if (node.IsKnown(0) && node.IsKnown(1) && data.rank() == 1 && indices.rank() <= 1) {
    const std::vector<int64_t> values = LiteralInts(*node.input(0).known);
    std::vector<int64_t> gathered;
    for (int64_t index : LiteralInts(*node.input(1).known)) {
      if (index < 0) index += data.dim(0);
      if (index < 0 || index >= data.dim(0)) return node.Error("index {} is out of range", index);
      gathered.push_back(values[static_cast<size_t>(index)]);
    }
    node.SetKnownOutput(
        0, ir::Literal::FromInts(ir::Shape::Array(data.dtype(), indices.dims()), gathered));
    return Status::Ok();
  }
  ir::GatherDimensionNumbers numbers;
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (d < axis) numbers.offset_dims.push_back(d);
    if (d > axis) numbers.offset_dims.push_back(d - 1 + indices.rank());
  }
  numbers.collapsed_slice_dims = {axis};
  numbers.start_index_map = {axis};
  numbers.index_vector_dim = indices.rank();
  std::vector<int64_t> slice_sizes = data.dims();
  slice_sizes[static_cast<size_t>(axis)] = 1;
  node.SetOutput(0, node.b().Gather(node.Input(0), node.Input(1), numbers, slice_sizes));
  return Status::Ok();
}

// Trilu(x, k): keeps the lower (upper=0) or upper triangle of the last two dimensions, from the
// k-th diagonal: lower keeps column - row <= k, upper keeps column - row >= k.
Status Trilu(NodeContext& node) {
  int64_t k = 0;
  if (node.has_input(1)) {
    ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> given, node.KnownInts(1));
    k = given[0];
  }
  Instruction* x = node.Input(0);
  const std::vector<int64_t>& dims = x->shape().dims();
  if (dims.size() < 2)
    return node.Error("the input has rank {}; Trilu needs 2 or more", dims.size());
  ir::ComputationBuilder& b = node.b();
  const auto rank = static_cast<int64_t>(dims.size());
  const ir::Shape index_shape = ir::Shape::Array(ir::DType::kS64, dims);
  Instruction* offset = b.Subtract(b.Iota(index_shape, rank - 1), b.Iota(index_shape, rank - 2));
  Instruction* kept = b.Compare(
      offset, Filled(b, ir::DType::kS64, static_cast<double>(k), dims),
      node.Int("upper", 1) != 0 ? ir::ComparisonDirection::kGe : ir::ComparisonDirection::kLe);
  node.SetOutput(0, b.Select(kept, x, Filled(b, x->shape().dtype(), 0, dims)));
  return Status::Ok();
}

}  // namespace

void AddTensorConverters(ConverterTable& table) {
  table["Constant"] = Constant;
  table["ConstantOfShape"] = ConstantOfShape;
  table["Shape"] = ShapeOf;
  table["Range"] = Range;
  table["Reshape"] = Reshape;
  table["Flatten"] = Flatten;
  table["Unsqueeze"] = Unsqueeze;
  table["Squeeze"] = Squeeze;
  table["Transpose"] = Transpose;
  table["Expand"] = Expand;
  table["Concat"] = Concat;
  table["Slice"] = Slice;
  table["Split"] = Split;
  table["Gather"] = Gather;
  table["Trilu"] = Trilu;
}

}  // namespace alpa::onnx
