// The dimensions of a dot operand (XLA's DotGeneral, ir/attributes.h DotDimensionNumbers).
#ifndef ALPA_IR_DOT_DIMENSIONS_H_
#define ALPA_IR_DOT_DIMENSIONS_H_

#include <cstdint>
#include <vector>

namespace alpa::ir {

// The dimensions of a dot operand of `rank` that are neither batch nor contracting, ascending:
// its free dimensions, which the output lists after the batch ones (lhs first, then rhs).
std::vector<int64_t> DotFreeDims(int64_t rank, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting);

}  // namespace alpa::ir

#endif  // ALPA_IR_DOT_DIMENSIONS_H_
