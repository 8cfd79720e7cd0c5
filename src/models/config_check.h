// The checks every model of the zoo makes on its config, with one wording:
//   "gpt: hidden is 0; it must be at least 1", "gpt: heads is 3; it must divide hidden (16)",
//   "mlp: dtype s32 is not a float type".
#ifndef ALPA_MODELS_CONFIG_CHECK_H_
#define ALPA_MODELS_CONFIG_CHECK_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::models {

// Each (name, value) of `fields` must be at least `minimum`; the first that is not is the error.
Status CheckAtLeast(std::string_view model,
                    std::initializer_list<std::pair<const char*, int64_t>> fields,
                    int64_t minimum = 1);
Status CheckHeadsDivideHidden(std::string_view model, int64_t heads, int64_t hidden);
Status CheckFloatType(std::string_view model, ir::DType dtype);
// An MoE's routing groups of min(group_size, tokens) tokens must divide the tokens of a batch.
Status CheckExpertGroupSize(std::string_view model, int64_t group_size, int64_t tokens);

}  // namespace alpa::models

#endif  // ALPA_MODELS_CONFIG_CHECK_H_
