// A loss for a forward graph a front end imported (an ONNX export, a JAX forward function), and
// batches to train it on, so that an imported model trains like a zoo model:
//
//   cross-entropy  output [..., C] are logits over C classes, labels s32 [...]:
//                  mean over positions of -log softmax(logits)[label], in f32
//   mse            labels of the output's shape: mean((output - labels)^2)
//   output         the output is the loss (a scalar)
//
// Synthetic batches follow a pattern the model can learn: inputs normal(0, 1) (integer inputs:
// ids below their table's rows); cross-entropy labels copy the input's ids where an integer
// input has the labels' shape (a language model learns to copy), otherwise the argmax of each
// row's first C input values; mse labels are each row's first input values, repeated. An
// imported model starts from trained or PyTorch-initialised weights with its own optimizer
// settings in mind, and on fresh batches of these patterns a few steps barely move its loss
// (PyTorch's own training of examples/import/mlp.onnx: 0.97 -> 1.02 over 50 steps of Adam at
// 1e-3), so the batches cycle through a set of kBatchPool: a dataset it can fit.
#ifndef ALPA_MODELS_FORWARD_LOSS_H_
#define ALPA_MODELS_FORWARD_LOSS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/builder.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

enum class LossKind { kCrossEntropy, kMeanSquaredError, kOutput };

inline constexpr uint64_t kBatchPool = 4;

// "cross-entropy", "mse", "output"; the error lists them.
Result<LossKind> ParseLossKind(std::string_view text);
std::string_view LossKindName(LossKind kind);

// Appends the loss of `output` to `b`; for cross-entropy and mse, a labels parameter numbered
// `labels_parameter` first. Returns the scalar loss; an output the loss cannot take (not a
// scalar for `output`, a scalar for the others) is an error saying which loss fits.
Result<ir::Instruction*> AppendLoss(ir::ComputationBuilder& b, ir::Instruction* output,
                                    LossKind kind, int64_t labels_parameter);

// The ids an integer `parameter` of `computation` stays below: the rows of the table it indexes
// (a gather's operand along its indexed dimension: an embedding) or the classes it is compared
// with (an iota's size: a one-hot), followed through converts, reshapes, broadcasts and the
// index arithmetic JAX adds (negative ids wrapped by a select); the smallest such, 0 if none.
int64_t IndexBound(const ir::Computation& computation, const ir::Instruction& parameter);

// Batches for a loss built by AppendLoss: `inputs` are the shapes of the graph's inputs (rows
// along dimension 0), `index_bounds` the ids each integer input stays below (0: 2), `output`
// the forward output's shape.
BatchGenerator ForwardBatches(std::vector<ir::Shape> inputs, std::vector<int64_t> index_bounds,
                              ir::Shape output, LossKind kind);

}  // namespace alpa::models

#endif  // ALPA_MODELS_FORWARD_LOSS_H_
