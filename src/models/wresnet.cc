#include "models/wresnet.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/layer_boundary.h"
#include "models/config_check.h"
#include "models/init.h"
#include "models/transformer.h"

namespace alpa::models {

using ir::Instruction;

namespace {

constexpr double kBatchNormEpsilon = 1e-5;
constexpr double kHeadStddev = 0.01;
// The smallest image: only the last stride-2 step runs on a 1x1 map (wresnet.h).
constexpr int64_t kMinImage = 16;
// Data: fixed seed of the class prototypes, and the noise on each pixel.
constexpr uint64_t kPrototypeSeed = 0x5eed;
constexpr double kNoiseStddev = 1.0;

// Blocks per stage by depth; depth = 3 * blocks + 2 (three convolutions per block, the stem's and
// the head).
const std::vector<std::pair<int64_t, std::vector<int64_t>>>& StageSizes() {
  static const auto* sizes = new std::vector<std::pair<int64_t, std::vector<int64_t>>>{
      {14, {1, 1, 1, 1}},   {26, {2, 2, 2, 2}},   {50, {3, 4, 6, 3}},
      {101, {3, 4, 23, 3}}, {152, {3, 8, 36, 3}}, {200, {3, 24, 36, 3}}};
  return *sizes;
}

Result<std::vector<int64_t>> StagesOf(int64_t depth) {
  std::string valid;
  for (const auto& [d, stages] : StageSizes()) {
    if (d == depth) return stages;
    valid += (valid.empty() ? "" : ", ") + std::to_string(d);
  }
  return InvalidArgument("wresnet: layers is {}; the supported depths are {}", depth, valid);
}

Status CheckConfig(const WResNetConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckAtLeast("wresnet", {{"batch", config.batch},
                                                {"image", config.image},
                                                {"channels", config.channels},
                                                {"width_factor", config.width_factor},
                                                {"classes", config.classes}}));
  if (config.image < kMinImage) {
    return InvalidArgument(
        "wresnet: image is {}; it must be at least {}: the five stride-2 steps halve it (rounding "
        "up) and below {} more than the last of them would run on a 1x1 map",
        config.image, kMinImage, kMinImage);
  }
  ALPA_RETURN_IF_ERROR(StagesOf(config.layers));
  return CheckFloatType("wresnet", config.dtype);
}

// A convolution's kernel [k, k, in, out] (HWIO) and stride, and the BatchNorm after it.
struct ConvBn {
  Instruction* kernel = nullptr;
  int64_t stride = 1;
  LayerNormWeights bn{};  // per channel, as a LayerNorm's
};

struct BlockWeights {
  ConvBn conv1, conv2, conv3;
  ConvBn proj;  // kernel nullptr: identity shortcut
};

class WeightDeclarer {
 public:
  explicit WeightDeclarer(ParameterDeclarer& declare) : declare_(declare) {}

  // He init: stddev sqrt(2 / fan_in), fan_in = k k in.
  ConvBn Conv(int64_t k, int64_t in, int64_t out, int64_t stride, const std::string& name,
              const std::string& bn_name, WeightInit bn_scale = WeightInit::Ones()) {
    const double stddev = std::sqrt(2.0 / static_cast<double>(k * k * in));
    ConvBn conv{declare_.Weight({k, k, in, out}, name, WeightInit::Normal(stddev)), stride, {}};
    conv.bn = {declare_.Weight({out}, bn_name + ".scale", bn_scale),
               declare_.Weight({out}, bn_name + ".bias", WeightInit::Zeros())};
    return conv;
  }

  // Stage block with `filters` f reading `in` channels: 1x1 (f), 3x3 (W f), 1x1 (4 f).
  BlockWeights Block(int64_t index, int64_t in, int64_t filters, int64_t width, int64_t stride) {
    const std::string p = "block" + std::to_string(index) + ".";
    const int64_t wide = width * filters, out = 4 * filters;
    BlockWeights w;
    w.conv1 = Conv(1, in, filters, 1, p + "conv1", p + "bn1");
    w.conv2 = Conv(3, filters, wide, stride, p + "conv2", p + "bn2");
    // bn3's scale starts at zero (Flax): each block starts as ReLU(shortcut(x)).
    w.conv3 = Conv(1, wide, out, 1, p + "conv3", p + "bn3", WeightInit::Zeros());
    if (in != out || stride != 1) w.proj = Conv(1, in, out, stride, p + "proj", p + "proj_bn");
    return w;
  }

 private:
  ParameterDeclarer& declare_;
};

// SAME padding of XLA and Flax: output ceil(n / s), padding total max((out - 1) s + k - n, 0),
// the odd one at the high end.
ir::WindowDim SameWindow(int64_t n, int64_t k, int64_t stride) {
  const int64_t out = (n + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + k - n, 0);
  ir::WindowDim w;
  w.size = k;
  w.stride = stride;
  w.pad_low = total / 2;
  w.pad_high = total - total / 2;
  return w;
}

// Activations NHWC, kernels HWIO.
ir::ConvolutionDimensionNumbers NhwcHwio() {
  return {.input_batch = 0,
          .input_feature = 3,
          .input_spatial = {1, 2},
          .kernel_input_feature = 2,
          .kernel_output_feature = 3,
          .kernel_spatial = {0, 1},
          .output_batch = 0,
          .output_feature = 3,
          .output_spatial = {1, 2}};
}

class Emitter {
 public:
  Emitter(ir::ComputationBuilder& b, ir::DType dtype) : b_(b), dtype_(dtype) {}

  // Convolution with SAME padding, or explicit (pad, pad) when given.
  Instruction* Conv(Instruction* x, const ConvBn& conv, int64_t pad = -1) {
    if (x == nullptr || conv.kernel == nullptr) return nullptr;
    const int64_t k = conv.kernel->shape().dim(0);
    std::vector<ir::WindowDim> window;
    for (int64_t d : {1, 2}) {
      ir::WindowDim w = SameWindow(x->shape().dim(d), k, conv.stride);
      if (pad >= 0) w.pad_low = w.pad_high = pad;
      window.push_back(w);
    }
    return b_.Convolution(x, conv.kernel, std::move(window), NhwcHwio());
  }

  // y = (x - mean) / sqrt(var + eps) * scale + bias; mean and var per channel over N, H, W, in
  // f32 for 16-bit activations.
  Instruction* BatchNorm(Instruction* x, const LayerNormWeights& bn) {
    if (x == nullptr) return nullptr;
    const std::vector<int64_t> dims = x->shape().dims();
    const ir::DType stats = ir::DTypeByteSize(dtype_) < 4 ? ir::DType::kF32 : dtype_;
    Instruction* xs = stats == dtype_ ? x : b_.Convert(x, stats);
    Instruction* centered = b_.Subtract(xs, b_.Broadcast(ChannelMean(xs), dims, {3}));
    Instruction* var = ChannelMean(b_.Multiply(centered, centered));
    Instruction* inv_std = b_.Rsqrt(b_.Add(var, Full(kBatchNormEpsilon, {dims[3]}, stats)));
    Instruction* normed = b_.Multiply(centered, b_.Broadcast(inv_std, dims, {3}));
    if (stats != dtype_) normed = b_.Convert(normed, dtype_);
    return b_.Add(b_.Multiply(normed, b_.Broadcast(bn.scale, dims, {3})),
                  b_.Broadcast(bn.bias, dims, {3}));
  }

  Instruction* Relu(Instruction* x) {
    if (x == nullptr) return nullptr;
    return b_.Maximum(x, Full(0, x->shape().dims(), dtype_));
  }

  Instruction* ConvBnRelu(Instruction* x, const ConvBn& conv, int64_t pad = -1) {
    return Relu(BatchNorm(Conv(x, conv, pad), conv.bn));
  }

  // Max over 3x3 windows, stride 2, SAME padding (the padding is -inf, the reduction's init).
  Instruction* MaxPool(Instruction* x) {
    if (x == nullptr) return nullptr;
    const std::vector<ir::WindowDim> window = {ir::WindowDim{}, SameWindow(x->shape().dim(1), 3, 2),
                                               SameWindow(x->shape().dim(2), 3, 2),
                                               ir::WindowDim{}};
    return b_.ReduceWindow({x},
                           {b_.ConstantScalar(dtype_, -std::numeric_limits<double>::infinity())},
                           window, b_.module_builder().ScalarReducer(ir::Opcode::kMaximum, dtype_));
  }

  // ReLU(shortcut(x) + BN(conv3(ReLU(BN(conv2(ReLU(BN(conv1(x)))))))).
  Instruction* Block(Instruction* x, const BlockWeights& w) {
    Instruction* y = ConvBnRelu(ConvBnRelu(x, w.conv1), w.conv2);
    y = BatchNorm(Conv(y, w.conv3), w.conv3.bn);
    Instruction* shortcut = w.proj.kernel == nullptr ? x : BatchNorm(Conv(x, w.proj), w.proj.bn);
    return Relu(b_.Add(shortcut, y));
  }

  // mean over H, W: [N, H, W, C] -> [N, C].
  Instruction* GlobalAveragePool(Instruction* x) {
    if (x == nullptr) return nullptr;
    const std::vector<int64_t> dims = x->shape().dims();
    const double inv_area = 1.0 / static_cast<double>(dims[1] * dims[2]);
    return b_.Multiply(b_.Sum(x, {1, 2}), Full(inv_area, {dims[0], dims[3]}, dtype_));
  }

 private:
  Instruction* Full(double value, std::vector<int64_t> dims, ir::DType dtype) {
    return b_.Broadcast(b_.ConstantScalar(dtype, value), std::move(dims), {});
  }

  // [N, H, W, C] -> [C]: the mean over N, H, W.
  Instruction* ChannelMean(Instruction* x) {
    if (x == nullptr) return nullptr;
    const std::vector<int64_t> dims = x->shape().dims();
    const double inv_count = 1.0 / static_cast<double>(dims[0] * dims[1] * dims[2]);
    return b_.Multiply(b_.Sum(x, {0, 1, 2}), Full(inv_count, {dims[3]}, x->shape().dtype()));
  }

  ir::ComputationBuilder& b_;
  ir::DType dtype_;
};

// Images of each row's class prototype plus noise, and the labels (see wresnet.h).
std::vector<ir::Literal> PrototypeImages(const WResNetConfig& config, int64_t rows, uint64_t seed) {
  const int64_t n = config.image;
  const ir::Literal prototypes = NormalLiteral(
      ir::Shape::Array(ir::DType::kF64, {config.classes, 2, 2, 3}), 1.0, kPrototypeSeed);
  ir::Literal images =
      NormalLiteral(ir::Shape::Array(config.dtype, {rows, n, n, 3}), kNoiseStddev, 2 * seed);
  std::mt19937_64 engine(2 * seed + 1);
  std::vector<int64_t> labels;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = static_cast<int64_t>(engine() % static_cast<uint64_t>(config.classes));
    labels.push_back(c);
    for (int64_t i = 0; i < n * n * 3; ++i) {
      const int64_t h = i / (3 * n), w = i / 3 % n, ch = i % 3;
      const int64_t cell = ((c * 2 + 2 * h / n) * 2 + 2 * w / n) * 3 + ch;
      const int64_t e = r * n * n * 3 + i;
      images.SetDouble(e, images.GetDouble(e) + prototypes.GetDouble(cell));
    }
  }
  std::vector<ir::Literal> batch;
  batch.push_back(std::move(images));
  batch.push_back(ir::Literal::FromInts(ir::Shape::Array(ir::DType::kS32, {rows}), labels));
  return batch;
}

}  // namespace

Result<Model> BuildWResNet(const WResNetConfig& config) {
  ALPA_RETURN_IF_ERROR(CheckConfig(config));
  ALPA_ASSIGN_OR_RETURN(const std::vector<int64_t> stages, StagesOf(config.layers));
  const int64_t c = config.channels;
  ir::ModuleBuilder mb("wresnet");
  ir::ComputationBuilder b = mb.NewComputation("wresnet_loss");

  // Weights in the order of wresnet.h, then the batch.
  Model model;
  ParameterDeclarer declare(model, b, config.dtype);
  WeightDeclarer weights(declare);
  const ConvBn stem = weights.Conv(7, 3, c, 2, "stem.conv", "stem.bn");
  std::vector<BlockWeights> blocks;
  int64_t in = c;
  for (size_t i = 0; i < stages.size(); ++i) {
    const int64_t filters = c << i;
    for (int64_t j = 0; j < stages[i]; ++j) {
      const int64_t stride = i > 0 && j == 0 ? 2 : 1;
      blocks.push_back(weights.Block(static_cast<int64_t>(blocks.size()), in, filters,
                                     config.width_factor, stride));
      in = 4 * filters;
    }
  }
  const Dense head = declare.DenseWeights(in, config.classes, "head", kHeadStddev);
  Instruction* images = declare.Batch(
      ir::Shape::Array(config.dtype, {config.batch, config.image, config.image, 3}), "images");
  Instruction* labels = declare.Batch(ir::Shape::Array(ir::DType::kS32, {config.batch}), "labels");

  Emitter emit(b, config.dtype);
  Instruction* x = emit.MaxPool(emit.ConvBnRelu(images, stem, /*pad=*/3));
  x = ir::EmitLayerBoundary(b, x, {.layer = 0});
  for (size_t k = 0; k < blocks.size(); ++k) {
    x = ir::EmitLayerBoundary(b, emit.Block(x, blocks[k]), {.layer = static_cast<int64_t>(k) + 1});
  }
  // The transformer's cross-entropy over [batch, 1, classes] logits.
  TransformerEmitter head_emit({config.batch, 1, config.classes, 1}, config.dtype, b);
  Instruction* logits = head_emit.Apply(head, emit.GlobalAveragePool(x));
  Instruction* loss = head_emit.CrossEntropy(b.Reshape(logits, {config.batch, 1, config.classes}),
                                             b.Reshape(labels, {config.batch, 1}));
  ALPA_ASSIGN_OR_RETURN(ir::Computation * entry, b.Build(loss));
  ALPA_ASSIGN_OR_RETURN(model.loss, mb.Build(entry));
  model.batch = [config](int64_t rows, uint64_t seed) {
    return PrototypeImages(config, rows, seed);
  };
  return model;
}

}  // namespace alpa::models
