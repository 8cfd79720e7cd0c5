// XLA's input_output_alias module attribute: which results of the entry computation reuse the
// buffer of which parameter (a donated argument, updated in place):
//
//   HloModule step, input_output_alias={ {0}: (2, {}, must-alias), {1}: (0, {}, may-alias) }
//
// Each entry is `{output shape index}: (parameter number, {parameter shape index}[, kind])`; the
// kind is absent in older dumps. The parser keeps the attribute's text (ir::ModuleConfig::opaque);
// this reads it.
#ifndef ALPA_HLO_INPUT_OUTPUT_ALIAS_H_
#define ALPA_HLO_INPUT_OUTPUT_ALIAS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "support/status.h"

namespace alpa::hlo {

struct InputOutputAlias {
  std::vector<int64_t> output_index;  // {k}: element k of the root tuple
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;  // {} for an array parameter
  bool must_alias = false;
};

// The entries of the attribute text (the value after `input_output_alias=`). Errors name the
// offset and what was expected there.
Result<std::vector<InputOutputAlias>> ParseInputOutputAlias(std::string_view text);

// The module's entries; none when its header has no input_output_alias.
Result<std::vector<InputOutputAlias>> InputOutputAliases(const ir::Module& module);

}  // namespace alpa::hlo

#endif  // ALPA_HLO_INPUT_OUTPUT_ALIAS_H_
