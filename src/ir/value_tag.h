// Tags that say what a value of a train step is, as a frontend attribute of its instruction:
//
//   %divide.2 = f32[] divide(%negate.1, %constant.23), frontend_attributes={alpa_value="loss"}
//   %dot.9 = f32[64,32] dot(...), frontend_attributes={alpa_value="gradient"}
//
// The train step builder (autodiff/train_step.h) tags the loss, the weights' gradients (of each
// micro-batch, and their running sums) and a pipeline stage's gradients of the activations it
// received, so that analyses that see only the IR can tell the passes apart: the forward pass is
// what the loss is computed from, the backward pass what the gradients of either kind are
// computed from besides it (cost/memory_model.h). Tags are plain frontend attributes, so they
// survive printing and parsing HLO text; they change no semantics.
#ifndef ALPA_IR_VALUE_TAG_H_
#define ALPA_IR_VALUE_TAG_H_

#include <optional>
#include <string>
#include <string_view>

#include "ir/instruction.h"

namespace alpa::ir {

enum class ValueTag { kLoss, kGradient, kInputGradient };

inline constexpr std::string_view kValueTagKey = "alpa_value";

inline std::string_view ValueTagName(ValueTag tag) {
  switch (tag) {
    case ValueTag::kLoss:
      return "loss";
    case ValueTag::kGradient:
      return "gradient";
    case ValueTag::kInputGradient:
      return "input_gradient";
  }
  return "";
}

// Sets (or replaces) the tag of `instruction`.
inline void SetValueTag(Instruction& instruction, ValueTag tag) {
  auto& attributes = instruction.mutable_attributes().frontend_attributes;
  for (auto& [key, value] : attributes) {
    if (key == kValueTagKey) {
      value = std::string(ValueTagName(tag));
      return;
    }
  }
  attributes.emplace_back(std::string(kValueTagKey), std::string(ValueTagName(tag)));
}

// The tag of `instruction`, or nullopt when it has none (or an unknown one).
inline std::optional<ValueTag> GetValueTag(const Instruction& instruction) {
  for (const auto& [key, value] : instruction.attributes().frontend_attributes) {
    if (key != kValueTagKey) continue;
    if (value == ValueTagName(ValueTag::kLoss)) return ValueTag::kLoss;
    if (value == ValueTagName(ValueTag::kGradient)) return ValueTag::kGradient;
    if (value == ValueTagName(ValueTag::kInputGradient)) return ValueTag::kInputGradient;
  }
  return std::nullopt;
}

}  // namespace alpa::ir

#endif  // ALPA_IR_VALUE_TAG_H_
