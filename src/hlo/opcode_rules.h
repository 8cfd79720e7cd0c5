// What each opcode accepts in HLO text: its operand count and its attributes (required or not).
//
// This is XLA's table-driven attribute scheme (`attrs["name"] = {required, type, &slot}` per
// opcode in hlo_parser.cc): the parser looks the opcode up here, so a new op only needs a row.
#ifndef ALPA_HLO_OPCODE_RULES_H_
#define ALPA_HLO_OPCODE_RULES_H_

#include <string_view>
#include <vector>

#include "ir/opcode.h"

namespace alpa::hlo {

struct AttributeRule {
  std::string_view name;
  bool required = false;
};

struct OpcodeRules {
  int min_operands = 0;
  int max_operands = -1;  // -1: any number
  // Opcode-specific attributes. The attributes every instruction may carry (sharding, metadata,
  // backend_config, frontend_attributes, control-predecessors) and the opaque ones
  // (IsOpaqueAttribute) are accepted in addition and are not listed here.
  std::vector<AttributeRule> attributes;

  const AttributeRule* Find(std::string_view name) const;
};

const OpcodeRules& RulesFor(ir::Opcode opcode);

// sharding, metadata, backend_config, frontend_attributes, control-predecessors.
bool IsCommonAttribute(std::string_view name);

// Attributes XLA defines that carry no semantics in this project (precision_config,
// api_version, output_to_operand_aliasing, ...). They are kept as raw text in
// Attributes::opaque, in the order they were read, and printed back unchanged.
bool IsOpaqueAttribute(std::string_view name);

}  // namespace alpa::hlo

#endif  // ALPA_HLO_OPCODE_RULES_H_
