// ir::Module -> XLA HLO text, in XLA's layout, so that the output loads in XLA tools and parses
// back (ParseHloModule) to an equal module: print(parse(print(m))) == print(m).
#ifndef ALPA_HLO_PRINTER_H_
#define ALPA_HLO_PRINTER_H_

#include <string>

#include "ir/module.h"

namespace alpa::hlo {

// `HloModule name, entry_computation_layout={...}, ...`, then the computations callees first
// (MakeComputationPostOrder; computations the entry does not reach come just before the entry),
// separated by blank lines.
std::string PrintModule(const ir::Module& module);
// One line, no indentation: `%name = f32[8]{0} add(%a, %b), metadata={...}` (ROOT not marked).
std::string PrintInstruction(const ir::Instruction& instruction);

}  // namespace alpa::hlo

#endif  // ALPA_HLO_PRINTER_H_
