// The operators of networks: contractions (MatMul with numpy batching, Gemm, Conv), Softmax,
// normalisations, pooling and reductions.
//
//   Softmax(x, axis) = exp(x - max) / sum(exp(x - max)) over `axis` (opset 13's single axis)
//   LayerNormalization(x, scale, bias, axis, epsilon) over the dimensions from `axis` on:
//     (x - mean) * rsqrt(mean((x - mean)^2) + epsilon) * scale + bias
//   BatchNormalization with training_mode=1 (a training export) normalises with the batch's own
//   mean and (biased) variance over every dimension but the channels (1); its running
//   statistics are not updated (the import trains; it does not track them). In inference mode
//   it uses the given mean and variance.
#include <cmath>
#include <limits>
#include <numeric>

#include "onnx/node_context.h"

namespace alpa::onnx {
namespace {

using ir::Instruction;

// a @ b with numpy's rules: a vector operand gains a dimension that the result drops, and the
// batch dimensions (all but the last two) broadcast.
Status MatMul(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  Instruction* lhs = node.Input(0);
  Instruction* rhs = node.Input(1);
  std::vector<int64_t> a = lhs->shape().dims(), w = rhs->shape().dims();
  const bool lhs_vector = a.size() == 1, rhs_vector = w.size() == 1;
  if (lhs_vector) a.insert(a.begin(), 1);
  if (rhs_vector) w.push_back(1);
  lhs = b.Reshape(lhs, a);
  rhs = b.Reshape(rhs, w);
  if (a.back() != w[w.size() - 2]) {
    return node.Error("contracting {} with {}: the sizes {} and {} differ",
                      node.input_shape(0).ToString(), node.input_shape(1).ToString(), a.back(),
                      w[w.size() - 2]);
  }
  Instruction* product = nullptr;
  if (w.size() == 2) {
    // A weight matrix: contract a's last dimension, keep a's others (no batch dimensions).
    product = b.Dot(lhs, rhs, {{}, {}, {static_cast<int64_t>(a.size()) - 1}, {0}});
  } else {
    std::optional<std::vector<int64_t>> batch = BroadcastDims(
        std::vector<int64_t>(a.begin(), a.end() - 2), std::vector<int64_t>(w.begin(), w.end() - 2));
    if (!batch) return node.Error("the batch dimensions of the two operands do not broadcast");
    std::vector<int64_t> a_full = *batch, w_full = *batch;
    a_full.insert(a_full.end(), a.end() - 2, a.end());
    w_full.insert(w_full.end(), w.end() - 2, w.end());
    const auto batch_rank = static_cast<int64_t>(batch->size());
    std::vector<int64_t> batch_dims(batch->size());
    std::iota(batch_dims.begin(), batch_dims.end(), 0);
    product = b.Dot(BroadcastTo(b, lhs, a_full), BroadcastTo(b, rhs, w_full),
                    {batch_dims, batch_dims, {batch_rank + 1}, {batch_rank}});
  }
  if (product == nullptr) return Status::Ok();
  std::vector<int64_t> dims = product->shape().dims();
  if (rhs_vector) dims.pop_back();
  if (lhs_vector) dims.erase(dims.end() - (rhs_vector ? 1 : 2));
  node.SetOutput(0, dims == product->shape().dims() ? product : b.Reshape(product, dims));
  return Status::Ok();
}

// Y = alpha * A' B' + beta * C, A' and B' transposed where transA and transB say.
Status Gemm(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  const int64_t lhs_contracting = node.Int("transA", 0) != 0 ? 0 : 1;
  const int64_t rhs_contracting = node.Int("transB", 0) != 0 ? 1 : 0;
  Instruction* y =
      b.Dot(node.Input(0), node.Input(1), {{}, {}, {lhs_contracting}, {rhs_contracting}});
  if (y == nullptr)
    return node.Error("operands {} and {} do not contract", node.input_shape(0).ToString(),
                      node.input_shape(1).ToString());
  const ir::DType dtype = y->shape().dtype();
  const std::vector<int64_t>& dims = y->shape().dims();
  if (const float alpha = node.Float("alpha", 1); alpha != 1) {
    y = b.Multiply(y, Filled(b, dtype, alpha, dims));
  }
  if (node.has_input(2)) {
    Instruction* c = node.Input(2);
    if (!BroadcastDims(c->shape().dims(), dims)) {
      return node.Error("C of shape {} does not broadcast to the product's {}",
                        c->shape().ToString(), y->shape().ToString());
    }
    c = BroadcastTo(b, c, dims);
    if (const float beta = node.Float("beta", 1); beta != 1) {
      c = b.Multiply(c, Filled(b, dtype, beta, dims));
    }
    y = b.Add(y, c);
  }
  node.SetOutput(0, y);
  return Status::Ok();
}

Status Softmax(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  Instruction* x = node.Input(0);
  ALPA_ASSIGN_OR_RETURN(int64_t axis, node.Axis(node.Int("axis", -1), x->shape().rank()));
  const std::vector<int64_t>& dims = x->shape().dims();
  Instruction* max = BroadcastBack(b, ReduceOver(b, ir::Opcode::kMaximum, x, {axis}), dims, {axis});
  Instruction* e = b.Exp(b.Subtract(x, max));
  Instruction* sum = BroadcastBack(b, ReduceOver(b, ir::Opcode::kAdd, e, {axis}), dims, {axis});
  node.SetOutput(0, b.Divide(e, sum));
  return Status::Ok();
}

// The sum of x over `dimensions`, the trailing run of them first: BatchNormalization's
// statistics over {0, 2, 3} summed as one reduction add each channel's N * H * W terms one after
// another, which in f32 drifted 2e-5 (relative) from PyTorch's output on the ResNet example; the
// spatial sum first folds its contiguous terms in the kernel's pairwise order (kernels/reduce.h).
Instruction* SumInSteps(ir::ComputationBuilder& b, Instruction* x,
                        const std::vector<int64_t>& dimensions) {
  size_t run_start = dimensions.size() - 1;
  while (run_start > 0 && dimensions[run_start - 1] + 1 == dimensions[run_start]) --run_start;
  if (run_start == 0) return b.Sum(x, dimensions);
  const auto split = dimensions.begin() + static_cast<std::ptrdiff_t>(run_start);
  // The dimensions before the run keep their numbers once the run is summed away.
  return b.Sum(b.Sum(x, {split, dimensions.end()}), {dimensions.begin(), split});
}

// (x - mean) * rsqrt(variance + epsilon) over `dimensions`, the statistics of x itself.
Instruction* Normalize(ir::ComputationBuilder& b, Instruction* x,
                       const std::vector<int64_t>& dimensions, double epsilon) {
  const std::vector<int64_t>& dims = x->shape().dims();
  const ir::DType dtype = x->shape().dtype();
  double count = 1;
  for (int64_t d : dimensions) count *= static_cast<double>(dims[static_cast<size_t>(d)]);
  Instruction* inverse_count = Filled(b, dtype, 1 / count, dims);
  Instruction* mean =
      b.Multiply(BroadcastBack(b, SumInSteps(b, x, dimensions), dims, dimensions), inverse_count);
  Instruction* centered = b.Subtract(x, mean);
  Instruction* variance = b.Multiply(
      BroadcastBack(b, SumInSteps(b, b.Multiply(centered, centered), dimensions), dims, dimensions),
      inverse_count);
  return b.Multiply(centered, b.Rsqrt(b.Add(variance, Filled(b, dtype, epsilon, dims))));
}

Status LayerNormalization(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  Instruction* x = node.Input(0);
  const std::vector<int64_t>& dims = x->shape().dims();
  const auto rank = static_cast<int64_t>(dims.size());
  ALPA_ASSIGN_OR_RETURN(int64_t axis, node.Axis(node.Int("axis", -1), rank));
  if (node.output_used(1) || node.output_used(2)) {
    return node.Error(
        "its mean or inverse-deviation output is used; only the normalised output is supported");
  }
  std::vector<int64_t> dimensions(static_cast<size_t>(rank - axis));
  std::iota(dimensions.begin(), dimensions.end(), axis);
  Instruction* y = Normalize(b, x, dimensions, node.Float("epsilon", 1e-5f));
  y = b.Multiply(y, BroadcastTo(b, node.Input(1), dims));
  if (node.has_input(2)) y = b.Add(y, BroadcastTo(b, node.Input(2), dims));
  node.SetOutput(0, y);
  return Status::Ok();
}

// A per-channel vector (dimension 1 of x) stretched to x's shape.
Instruction* PerChannel(ir::ComputationBuilder& b, Instruction* v,
                        const std::vector<int64_t>& dims) {
  return b.Broadcast(v, dims, {1});
}

Status BatchNormalization(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  Instruction* x = node.Input(0);
  const std::vector<int64_t>& dims = x->shape().dims();
  const double epsilon = node.Float("epsilon", 1e-5f);
  Instruction* y = nullptr;
  if (node.Int("training_mode", 0) != 0) {
    if (node.output_used(1) || node.output_used(2)) {
      return node.Error(
          "its running mean or variance output is used; the import does not track running "
          "statistics");
    }
    std::vector<int64_t> dimensions = {0};
    for (int64_t d = 2; d < static_cast<int64_t>(dims.size()); ++d) dimensions.push_back(d);
    y = Normalize(b, x, dimensions, epsilon);
  } else {
    const ir::DType dtype = x->shape().dtype();
    Instruction* mean = PerChannel(b, node.Input(3), dims);
    Instruction* variance = PerChannel(b, node.Input(4), dims);
    y = b.Multiply(b.Subtract(x, mean), b.Rsqrt(b.Add(variance, Filled(b, dtype, epsilon, dims))));
  }
  y = b.Add(b.Multiply(y, PerChannel(b, node.Input(1), dims)), PerChannel(b, node.Input(2), dims));
  node.SetOutput(0, y);
  return Status::Ok();
}

// The spatial window of Conv and the pools: kernel_shape, strides, pads (all begins, then all
// ends), dilations; auto_pad other than NOTSET and VALID is refused.
Result<std::vector<ir::WindowDim>> SpatialWindow(NodeContext& node,
                                                 const std::vector<int64_t>& kernel) {
  const auto spatial = static_cast<int64_t>(kernel.size());
  const std::vector<int64_t> strides = node.Ints("strides", std::vector<int64_t>(kernel.size(), 1));
  const std::vector<int64_t> dilations =
      node.Ints("dilations", std::vector<int64_t>(kernel.size(), 1));
  const std::vector<int64_t> pads = node.Ints("pads", std::vector<int64_t>(2 * kernel.size(), 0));
  const std::string auto_pad = node.String("auto_pad").value_or("NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    return node.Error("auto_pad {} is not supported; export with explicit pads", auto_pad);
  }
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial) {
    return node.Error("strides, dilations and pads do not match {} spatial dimensions", spatial);
  }
  std::vector<ir::WindowDim> window;
  for (int64_t d = 0; d < spatial; ++d) {
    ir::WindowDim dim;
    dim.size = kernel[d];
    dim.stride = strides[d];
    if (auto_pad == "NOTSET") {
      dim.pad_low = pads[d];
      dim.pad_high = pads[d + spatial];
    }
    dim.rhs_dilation = dilations[d];
    window.push_back(dim);
  }
  return window;
}

Status Conv(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  Instruction* x = node.Input(0);
  Instruction* w = node.Input(1);
  const int64_t rank = x->shape().rank();
  const std::vector<int64_t> kernel(w->shape().dims().begin() + 2, w->shape().dims().end());
  ALPA_ASSIGN_OR_RETURN(std::vector<ir::WindowDim> window, SpatialWindow(node, kernel));
  ir::ConvolutionDimensionNumbers numbers;
  numbers.input_batch = 0;
  numbers.input_feature = 1;
  numbers.kernel_output_feature = 0;
  numbers.kernel_input_feature = 1;
  numbers.output_batch = 0;
  numbers.output_feature = 1;
  for (int64_t d = 2; d < rank; ++d) {
    numbers.input_spatial.push_back(d);
    numbers.kernel_spatial.push_back(d);
    numbers.output_spatial.push_back(d);
  }
  Instruction* y = b.Convolution(x, w, window, numbers, node.Int("group", 1));
  if (y != nullptr && node.has_input(2))
    y = b.Add(y, PerChannel(b, node.Input(2), y->shape().dims()));
  node.SetOutput(0, y);
  return Status::Ok();
}

Status MaxPool(NodeContext& node) {
  if (node.output_used(1)) return node.Error("its indices output is used; it is not supported");
  ir::ComputationBuilder& b = node.b();
  Instruction* x = node.Input(0);
  const std::vector<int64_t>& dims = x->shape().dims();
  ALPA_ASSIGN_OR_RETURN(std::vector<ir::WindowDim> spatial,
                        SpatialWindow(node, node.Ints("kernel_shape")));
  if (spatial.size() + 2 != dims.size())
    return node.Error("kernel_shape does not match the input's rank {}", dims.size());
  std::vector<ir::WindowDim> window(2);
  for (size_t d = 0; d < spatial.size(); ++d) {
    ir::WindowDim dim = spatial[d];
    if (node.Int("ceil_mode", 0) != 0) {
      // Pad the end so that a last, partial window is kept: output ceil((n + pads - k) / s) + 1.
      const int64_t span =
          dims[d + 2] + dim.pad_low + dim.pad_high - (dim.size - 1) * dim.rhs_dilation - 1;
      dim.pad_high += (dim.stride - span % dim.stride) % dim.stride;
    }
    window.push_back(dim);
  }
  const ir::DType dtype = x->shape().dtype();
  Instruction* init = b.ConstantScalar(dtype, -std::numeric_limits<double>::infinity());
  node.SetOutput(0, b.ReduceWindow({x}, {init}, window,
                                   b.module_builder().ScalarReducer(ir::Opcode::kMaximum, dtype)));
  return Status::Ok();
}

Status GlobalAveragePool(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  Instruction* x = node.Input(0);
  std::vector<int64_t> dims = x->shape().dims();
  std::vector<int64_t> spatial;
  double count = 1;
  for (int64_t d = 2; d < static_cast<int64_t>(dims.size()); ++d) {
    spatial.push_back(d);
    count *= static_cast<double>(dims[static_cast<size_t>(d)]);
  }
  Instruction* sum = b.Sum(x, spatial);
  Instruction* mean =
      b.Multiply(sum, Filled(b, x->shape().dtype(), 1 / count, sum->shape().dims()));
  std::fill(dims.begin() + 2, dims.end(), 1);
  node.SetOutput(0, b.Reshape(mean, dims));
  return Status::Ok();
}

// ReduceSum takes its axes as an input from opset 13, ReduceMean from opset 18 (an attribute
// before).
template <bool kMean>
Status Reduce(NodeContext& node) {
  ir::ComputationBuilder& b = node.b();
  Instruction* x = node.Input(0);
  const std::vector<int64_t>& dims = x->shape().dims();
  const auto rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> axes = node.Ints("axes");
  if (node.has_input(1)) {
    ALPA_ASSIGN_OR_RETURN(axes, node.KnownInts(1));
  }
  if (axes.empty()) {
    if (node.Int("noop_with_empty_axes", 0) != 0) {
      node.SetOutput(0, x);
      return Status::Ok();
    }
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  double count = 1;
  for (int64_t& axis : axes) {
    ALPA_ASSIGN_OR_RETURN(axis, node.Axis(axis, rank));
    count *= static_cast<double>(dims[static_cast<size_t>(axis)]);
  }
  std::sort(axes.begin(), axes.end());
  Instruction* y = b.Sum(x, axes);
  if (kMean && y != nullptr)
    y = b.Multiply(y, Filled(b, y->shape().dtype(), 1 / count, y->shape().dims()));
  if (node.Int("keepdims", 1) != 0) {
    std::vector<int64_t> kept = dims;
    for (int64_t axis : axes) kept[static_cast<size_t>(axis)] = 1;
    y = b.Reshape(y, kept);
  }
  node.SetOutput(0, y);
  return Status::Ok();
}

}  // namespace

void AddNetworkConverters(ConverterTable& table) {
  table["MatMul"] = MatMul;
  table["Gemm"] = Gemm;
  table["Softmax"] = Softmax;
  table["LayerNormalization"] = LayerNormalization;
  table["BatchNormalization"] = BatchNormalization;
  table["Conv"] = Conv;
  table["MaxPool"] = MaxPool;
  table["GlobalAveragePool"] = GlobalAveragePool;
  table["ReduceMean"] = Reduce<true>;
  table["ReduceSum"] = Reduce<false>;
}

}  // namespace alpa::onnx
