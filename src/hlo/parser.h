// XLA HLO text -> ir::Module.
//
// Accepts the text XLA, JAX, TensorFlow and PyTorch/XLA dump (see
// shared/reference/hlo-text-and-sharding.md for the observed grammar). Errors are Status values
// whose message reads "<source>:<line>:<col>: error: <what>, expected <what>" followed by the
// offending source line and a caret under the column. Shape rules (does a dot's shape match its
// operands) are not checked here; ir's verifier does that.
#ifndef ALPA_HLO_PARSER_H_
#define ALPA_HLO_PARSER_H_

#include <memory>
#include <string_view>

#include "ir/module.h"
#include "support/status.h"

namespace alpa::hlo {

// Parses XLA HLO text. `source_name` is used in error messages ("model.hlo:12:7: ...").
Result<std::unique_ptr<ir::Module>> ParseHloModule(std::string_view text,
                                                   std::string_view source_name = "<input>");
// Parses one shape, e.g. "f32[8,16]{1,0}" or "(f32[], s32[4])".
Result<ir::Shape> ParseShape(std::string_view text);

}  // namespace alpa::hlo

#endif  // ALPA_HLO_PARSER_H_
