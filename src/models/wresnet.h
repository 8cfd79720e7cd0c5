// The Wide-ResNet of Alpa's benchmarks (alpa/model/wide_resnet.py, Flax's ImageNet ResNet with a
// width factor): a ResNet of bottleneck blocks on square NHWC images, trained by softmax
// cross-entropy over `classes`.
//
//   stem     conv 7x7 stride 2 pad 3 (channels filters) -> BN -> ReLU -> max-pool 3x3 stride 2
//   stage i  (i = 0..3, filters f = channels 2^i) blocks of
//              y = BN(conv1x1_{4f}(ReLU(BN(conv3x3_{W f, stride}(ReLU(BN(conv1x1_f(x))))))))
//              out = ReLU(shortcut(x) + y)
//            the first block of stages 1..3 has stride 2; shortcut(x) = BN(conv1x1_{4f, stride}(x))
//            in the first block of every stage (where the shape changes), x elsewhere
//   head     global average pool -> dense (with bias) to `classes` -> mean cross-entropy in f32
//
// Convolutions have no bias and, except the stem's, SAME padding (output ceil(n / stride)), as
// the max-pool has. The five stride-2 steps (stem, max-pool, stages 1..3) take the image to
// ceil(image / 32): 224 -> 7. Images must be at least 16, where only the last step runs on a 1x1
// map (16 -> 8 -> 4 -> 2 -> 1 -> 1); smaller ones would reach 1x1 earlier. Blocks per stage by
// `layers` (depth = 3 blocks + 2): 14 [1,1,1,1] and 26 [2,2,2,2] (tiny models, ours), 50 [3,4,6,3],
// 101 [3,4,23,3], 152 [3,8,36,3], 200 [3,24,36,3].
//
// Width factor: as in Alpa's BottleneckResNetBlock, W widens only the 3x3 convolution's output
// (f -> W f), whose input the last 1x1 convolution reads (W f -> 4 f). torchvision's
// wide_resnet50_2 widens the first 1x1's output too (x -> W f -> W f -> 4 f): 1.65-1.69x the
// names at W = 2 and 11x at W = 16, where Alpa's reading is within 3% of every name. Weights
// (conv kernels, BN scale and bias, dense), for image 224 and 1024 classes:
//
//   name   L    C    W   our count        name's figure
//   250M   50   160  2     254,123,104    +1.6%
//   500M   50   224  2     495,046,176    -1.0%
//   1B     50   320  2   1,005,653,184    +0.6%
//   2B     50   448  2   1,965,011,008    -1.7%
//   4B     50   640  2   4,000,937,344    +0.0%
//   6.8B   50   320  16  6,727,679,424    -1.1%
//   13B    101  320  16 12,633,386,944    -2.8%
//   tiny   14   8    2         201,922    (10 classes)
//
// BatchNorm is in training mode: (x - mean) / sqrt(var + 1e-5) * scale + bias with the batch's
// mean and (biased) variance per channel over N, H, W, built from primitive ops so that autodiff
// differentiates through the statistics. The train step carries no running averages (Flax keeps
// them in batch_stats for evaluation only; they do not affect training). The statistics are in
// f32 when the activations are f16 or bf16. BN scales start at ones and biases at zeros, except
// each block's last BN (bn3), whose scale starts at zeros as in Flax and Alpa: every block starts
// as ReLU(shortcut(x)). With ones instead, the tiny model's 50 steps of SGD at the zoo's learning
// rate 0.05 made the loss rise for each of the 4 weight seeds we tried.
//
// Parameters: the weights in order stem.conv, stem.bn.{scale,bias}; per block k (from 0)
// blockK.conv1, blockK.bn1.*, blockK.conv2, blockK.bn2.*, blockK.conv3, blockK.bn3.*, and in a
// stage's first block blockK.proj, blockK.proj_bn.*; head.w [4·8·channels, classes], head.b. Then
// the batch: images [batch, image, image, 3] of `dtype` and labels s32[batch]. Kernels are HWIO
// with He init (stddev sqrt(2 / fan_in), fan_in = kh kw in), head.w normal(0, 0.01).
//
// Pipeline layers: a boundary marker after the stem (layer 0) and after each block (layer k + 1),
// so depth 50 has 1 + 16 layers (Alpa's "#auto layers" 16 are the blocks) and depth 101 1 + 33.
//
// Synthetic data (model.batch): class c has a fixed prototype, a 2x2 grid of colours drawn once
// from normal(0, 1); an image is its class's prototype (each quadrant the cell's colour) plus
// normal(0, 1) noise per pixel; the labels (uniform over the classes) and the noise are drawn
// from the seed, the prototypes are the same for every seed.
#ifndef ALPA_MODELS_WRESNET_H_
#define ALPA_MODELS_WRESNET_H_

#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct WResNetConfig {
  int64_t batch = 4;
  int64_t image = 32;     // height = width; at least 16 (see the text above)
  int64_t layers = 50;    // depth: 14, 26, 50, 101, 152 or 200 (above)
  int64_t channels = 16;  // filters of the first stage
  int64_t width_factor = 2;
  int64_t classes = 10;
  ir::DType dtype = ir::DType::kF32;
};

Result<Model> BuildWResNet(const WResNetConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_WRESNET_H_
