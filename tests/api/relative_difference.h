// The parity tests' measure of two arrays' difference: the largest elementwise difference over
// the expected array's scale (its largest magnitude, at least 1e-3).
#ifndef ALPA_TESTS_API_RELATIVE_DIFFERENCE_H_
#define ALPA_TESTS_API_RELATIVE_DIFFERENCE_H_

#include <algorithm>
#include <cmath>

#include "ir/literal.h"

namespace alpa::api::testing {

inline double RelativeDifference(const ir::Literal& got, const ir::Literal& want) {
  double worst = 0, scale = 1e-3;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    worst = std::max(worst, std::abs(got.GetDouble(i) - want.GetDouble(i)));
    scale = std::max(scale, std::abs(want.GetDouble(i)));
  }
  return worst / scale;
}

}  // namespace alpa::api::testing

#endif  // ALPA_TESTS_API_RELATIVE_DIFFERENCE_H_
