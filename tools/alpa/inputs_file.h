// The `--inputs FILE` format of `alpa eval`: the entry's arguments as JSON.
//
//   {"arguments": [
//     {"shape": "f32[2,3]", "values": [1, 2, 3, 4, 5, 6]},        an array, row-major
//     {"shape": "s32[2,2]", "values": [[0, 1], [2, 3]]},          nesting is flattened
//     {"shape": "pred[2]", "values": [true, false]},
//     {"shape": "c64[1]", "values": [[1.5, -2]]},                 complex: [real, imaginary]
//     {"tuple": [{"shape": "f32[]", "values": [7]}, ...]}          a tuple-shaped parameter
//   ]}
//
// One argument per entry parameter, in parameter order; each shape must equal the parameter's
// (layouts aside). Errors name the file, the JSON path (arguments[1].values) and the parameter.
#ifndef ALPA_TOOLS_ALPA_INPUTS_FILE_H_
#define ALPA_TOOLS_ALPA_INPUTS_FILE_H_

#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/literal.h"
#include "support/status.h"

namespace alpa::tools {

// Reads `path` and returns one Literal per parameter of `entry`.
Result<std::vector<ir::Literal>> ReadInputsFile(const std::string& path,
                                                const ir::Computation& entry);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_INPUTS_FILE_H_
