#include "ir/layer_boundary.h"

#include <charconv>
#include <string>

namespace alpa::ir {
namespace {

const std::string* FrontendAttribute(const Instruction& instruction, std::string_view key) {
  for (const auto& [name, value] : instruction.attributes().frontend_attributes) {
    if (name == key) return &value;
  }
  return nullptr;
}

std::optional<int64_t> ParseLayer(const std::string& text) {
  int64_t layer = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), layer);
  if (error != std::errc() || end != text.data() + text.size() || layer < 0) return std::nullopt;
  return layer;
}

bool IsMarker(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCustomCall &&
         instruction.attributes().custom_call_target == kLayerBoundaryTarget;
}

}  // namespace

Instruction* EmitLayerBoundary(ComputationBuilder& b, Instruction* x, LayerBoundary boundary) {
  if (x == nullptr) return nullptr;
  Attributes attributes;
  attributes.custom_call_target = std::string(kLayerBoundaryTarget);
  attributes.frontend_attributes = {{"layer", std::to_string(boundary.layer)},
                                    {"pass", boundary.backward ? "backward" : "forward"}};
  return b.AddInstruction(Opcode::kCustomCall, {x}, std::move(attributes), {}, x->shape());
}

std::optional<LayerBoundary> AsLayerBoundary(const Instruction& instruction) {
  if (!IsMarker(instruction)) return std::nullopt;
  const std::string* layer = FrontendAttribute(instruction, "layer");
  const std::string* pass = FrontendAttribute(instruction, "pass");
  if (layer == nullptr || pass == nullptr) return std::nullopt;
  const std::optional<int64_t> number = ParseLayer(*layer);
  if (!number.has_value()) return std::nullopt;
  return LayerBoundary{*number, *pass == "backward"};
}

Status CheckLayerBoundary(const Instruction& instruction) {
  if (!IsMarker(instruction)) return Status::Ok();
  if (instruction.operand_count() != 1 ||
      !instruction.operand(0)->shape().Compatible(instruction.shape())) {
    return InvalidArgument("%{}: a layer boundary marks one value and keeps its shape",
                           instruction.name());
  }
  const std::string* layer = FrontendAttribute(instruction, "layer");
  if (layer == nullptr || !ParseLayer(*layer).has_value()) {
    return InvalidArgument(
        "%{}: a layer boundary needs frontend_attributes layer=\"N\" with N a non-negative "
        "integer",
        instruction.name());
  }
  const std::string* pass = FrontendAttribute(instruction, "pass");
  if (pass == nullptr || (*pass != "forward" && *pass != "backward")) {
    return InvalidArgument(
        "%{}: a layer boundary needs frontend_attributes pass=\"forward\" or pass=\"backward\"",
        instruction.name());
  }
  return Status::Ok();
}

}  // namespace alpa::ir
