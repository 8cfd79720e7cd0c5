// What the memory of one device running a computation (a train step, or one stage of it) is made
// of at its peak, and the per-micro-batch activations that pipeline stages hold.
//
// Liveness (liveness.h) gives the bytes live at each step of a schedule and the peak. Each buffer
// live at the peak falls in one category:
//   weights            entry parameters the caller marks as weights
//   optimizer state    parameters marked as optimizer state (Adam's m and v: twice the weights)
//   input batch        parameters marked as batch (the data)
//   other parameters   the remaining parameters (a train step's counter; all of a plain module's)
//   gradients          values tagged as gradients (ir/value_tag.h): the weights' gradients and
//                      their running sums over micro-batches (not a stage's input gradients,
//                      which it sends back: temporaries)
//   saved activations  forward values computed from the data that the backward pass reads
//   temporaries        everything else: working values of the pass that is running, casts of the
//                      weights, the optimizer update's values
//   collective buffers what the partitioner adds around the instruction at the peak (given a
//                      Lowering, liveness.h): its operands' resharded copies, its partial sums
//
// Passes come from the value tags a train step carries (autodiff/train_step.h):
//   forward   = loss-tagged values and every non-parameter value they are computed from
//   backward  = gradient-tagged values (the weights' gradients and a pipeline stage's input
//               gradients) and every non-parameter value outside the forward pass they are
//               computed from (under remat, the recomputed forward instructions too)
//   other     = the rest: parameters, the optimizer update, all of a computation without tags
// A value is computed from the data when it depends on a parameter that is neither a weight nor
// optimizer state; a forward value is saved when the backward pass reads it (directly or through
// an alias: tuple, get-tuple-element, bitcast, opt-barrier).
//
// Layers (pipeline stages are layer ranges) from the forward layer boundaries
// (ir/layer_boundary.h), for forward values:
//   layer(marker k) = k + 1     its value is the input of layer k + 1, which keeps it for its
//                               own backward (the previous layer's backward does not read it)
//   layer(x)        = max over operands reached from a marker of their layer
//   layer(x)        = min over forward readers r of (r is marker k ? k : layer(r)), for x reached
//                     from no marker (the embedding, one-hot labels read by the loss head); 0
//                     when it has no forward reader
// so layers run 0 .. L with L = the largest marker's k + 1 (no markers: one layer, 0).
//
// With M micro-batches unrolled in the computation (autodiff's gradient accumulation) the forward
// pass runs M times; one micro-batch's activations are the total over M (rounded up).
#ifndef ALPA_COST_MEMORY_MODEL_H_
#define ALPA_COST_MEMORY_MODEL_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cost/liveness.h"
#include "ir/computation.h"

namespace alpa::cost {

enum class ParameterRole { kWeight, kOptimizerState, kBatch, kOther };

enum class Pass { kForward, kBackward, kOther };
std::string_view PassName(Pass pass);  // "forward", "backward", "other"

enum class MemoryCategory {
  kWeights,
  kOptimizerState,
  kGradients,
  kSavedActivations,
  kTemporaries,
  kBatch,
  kOtherParameters,
  kCollectiveBuffers,
};
inline constexpr int kNumMemoryCategories = 8;

// "weights", "optimizer state", "gradients", "saved activations", "temporaries", "input batch",
// "other parameters", "collective buffers".
std::string_view MemoryCategoryName(MemoryCategory category);
// The same as a JSON key: "weights", "optimizer_state", ..., "collective_buffers".
std::string_view MemoryCategoryKey(MemoryCategory category);

// Bytes per category.
struct MemoryBreakdown {
  std::array<int64_t, kNumMemoryCategories> bytes{};

  int64_t& operator[](MemoryCategory category) { return bytes[static_cast<size_t>(category)]; }
  int64_t operator[](MemoryCategory category) const { return bytes[static_cast<size_t>(category)]; }
  int64_t total() const;
};

struct MemoryModelOptions {
  // Per entry parameter, in parameter order; parameters past its end are kOther.
  std::vector<ParameterRole> parameter_roles;
  // Micro-batches unrolled in the computation (>= 1).
  int64_t num_micro_batches = 1;
  // The schedule; empty: the post order (as memory_usage.h).
  std::vector<const ir::Instruction*> order;
  BufferBytesFn bytes = FullShapeBytes;
  // Values kept inside kernels (kernel_fusion.h); never null.
  const FusedValues* fused = &NoFusion();
  // Parameters whose next values are written over them (liveness.h: on devices that update
  // donated buffers in place).
  std::vector<DonatedBuffer> donated;
  // The partitioner's buffers around each instruction (liveness.h); none when unpartitioned.
  Lowering lowering;
};

struct ValueInfo {
  Pass pass = Pass::kOther;
  MemoryCategory category = MemoryCategory::kTemporaries;
  int64_t layer = -1;  // forward values only
};

struct MemoryModel {
  Liveness liveness;
  std::vector<ValueInfo> values;  // values[t]: of liveness.order[t]
  MemoryBreakdown at_peak;        // of the buffers live at liveness.peak_step; sums to the peak
  int64_t num_layers = 1;
  int64_t num_micro_batches = 1;
  // Over the whole computation: the gradients the update reads (no gradient-tagged value reads
  // them: the final sums), and every saved activation of every micro-batch.
  int64_t gradient_bytes = 0;
  int64_t saved_activation_bytes = 0;

  // What a device holds for the whole step: weights + optimizer state + gradient_bytes.
  int64_t StaticBytes() const;
  // Saved activations of one micro-batch whose layer is in [begin_layer, end_layer).
  int64_t SavedActivationBytesPerMicroBatch(int64_t begin_layer, int64_t end_layer) const;
};

MemoryModel BuildMemoryModel(const ir::Computation& computation,
                             const MemoryModelOptions& options = {});

}  // namespace alpa::cost

#endif  // ALPA_COST_MEMORY_MODEL_H_
