// Attribute text of one instruction (internal to the hlo layer): `, dimensions={1}, to_apply=%add`.
#ifndef ALPA_HLO_ATTRIBUTE_PRINTER_H_
#define ALPA_HLO_ATTRIBUTE_PRINTER_H_

#include <string>

#include "ir/instruction.h"

namespace alpa::hlo::internal {

// Appends `, name=value` for every attribute the instruction's opcode has and that differs from
// its default (required ones always), then the opaque, sharding, frontend_attributes,
// control-predecessors, metadata and backend_config attributes.
void AppendAttributes(const ir::Instruction& instruction, std::string& out);

}  // namespace alpa::hlo::internal

#endif  // ALPA_HLO_ATTRIBUTE_PRINTER_H_
