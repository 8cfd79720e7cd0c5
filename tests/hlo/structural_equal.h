// Test helper: are two modules the same graph with the same attributes? Instructions are matched
// by name (text order may differ: the printer writes post order), every field is compared.
#ifndef ALPA_TESTS_HLO_STRUCTURAL_EQUAL_H_
#define ALPA_TESTS_HLO_STRUCTURAL_EQUAL_H_

#include <string>

#include "ir/module.h"

namespace alpa::hlo::testing {

// "" when equal, else a description of the first difference.
std::string StructuralDifference(const ir::Module& a, const ir::Module& b);

}  // namespace alpa::hlo::testing

#endif  // ALPA_TESTS_HLO_STRUCTURAL_EQUAL_H_
