// Cutting a model's loss into pipeline stages: the forward layers of its instructions, and the
// loss of one range of layers as a module of its own, whose training step is that stage's work.
//
// Layers come from the forward layer boundaries (ir/layer_boundary.h). A marker with layer k
// ends layer k:
//   layer(marker k) = k
//   layer(x)        = max over operands o of (o is marker k ? k + 1 : layer(o)), for x reached
//                     from a marker
//   layer(x)        = min over readers r of layer(r), for x reached from no marker (parameters,
//                     constants, casts of weights: the first layer that reads them)
// so with markers 0 .. K there are K + 2 layers; without markers, one.
//
// The stage loss of layers [first, last] keeps the instructions of those layers and replaces
// the rest by parameters (StageLoss). For the values y_j it sends to later layers it takes one
// more parameter each, the cotangent ct_j that the next stage's backward pass sends back, and
// returns
//   loss_stage = (the model's loss, if computed in the range) + sum_j sum(y_j * ct_j)
// whose gradient with respect to the stage's weights and inputs is exactly the stage's backward
// pass (the vector-Jacobian product with the ct_j). Its training step (autodiff/train_step.h
// with input_gradients = the activations it receives) is what the stage runs per micro-batch.
//
// Instructions of the stage module are named by their position (p0, p1, ... for parameters,
// v0, v1, ... for the rest) and markers renumbered from 0, so that layers built alike (the
// blocks of a transformer) slice to identical modules: their HLO text is a structural
// fingerprint.
#ifndef ALPA_PIPELINE_STAGE_SLICING_H_
#define ALPA_PIPELINE_STAGE_SLICING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "support/status.h"

namespace alpa::pipeline {

// The layer of every instruction of `loss`, indexed like loss.MakePostOrder().
struct ForwardLayers {
  std::vector<int64_t> layer_of;
  int64_t num_layers = 1;
};
ForwardLayers LayersFromBoundaries(const ir::Computation& loss);

struct StageLoss {
  std::unique_ptr<ir::Module> module;
  // Parameter numbers of the stage module, by what they are.
  std::vector<int64_t> weights;      // the model's weights the stage reads
  std::vector<int64_t> activations;  // values of earlier layers (their gradients go back)
  std::vector<int64_t> cotangents;   // ct_j of the values sent to later layers
  std::vector<int64_t> batch;        // the model's other parameters (tokens, labels)
  // For each stage parameter, the model's parameter number (weights and batch), or -1.
  std::vector<int64_t> model_parameter;
  // For each stage parameter that receives a value computed by an earlier layer (an activation,
  // or a batch parameter with model_parameter -1): the name of that instruction of the model's
  // loss; "" for the others.
  std::vector<std::string> received;
  // The values sent to later layers, in post order: names of instructions of the model's loss.
  // The stage module's copy of sent value j carries the frontend attribute alpa_sent="j"
  // (kSentAttribute), which autodiff's copies keep, so the runtime finds it in the stage's step.
  std::vector<std::string> sent;
  // For each parameter of `cotangents`: the index in `sent` of the value it is the cotangent of.
  std::vector<int64_t> cotangent_of;
  bool has_loss = false;
  int64_t input_bytes = 0;   // of the activations received, per micro-batch
  int64_t output_bytes = 0;  // of the values sent on
};

inline constexpr std::string_view kSentAttribute = "alpa_sent";

// `weights` are parameter numbers of `loss`'s entry; `layers` its LayersFromBoundaries (or
// another assignment that keeps every operand in the layer of its reader or before). Errors:
// an empty or out-of-range layer range, a range that computes nothing, an instruction calling a
// computation that is not a scalar reducer.
Result<StageLoss> SliceStageLoss(const ir::Module& loss, const std::vector<int64_t>& weights,
                                 const ForwardLayers& layers, int64_t first, int64_t last);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_STAGE_SLICING_H_
