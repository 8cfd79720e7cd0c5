#include "models/config_check.h"

#include <algorithm>

namespace alpa::models {

Status CheckAtLeast(std::string_view model,
                    std::initializer_list<std::pair<const char*, int64_t>> fields,
                    int64_t minimum) {
  for (const auto& [name, value] : fields) {
    if (value < minimum) {
      return InvalidArgument("{}: {} is {}; it must be at least {}", model, name, value, minimum);
    }
  }
  return Status::Ok();
}

Status CheckHeadsDivideHidden(std::string_view model, int64_t heads, int64_t hidden) {
  if (hidden % heads == 0) return Status::Ok();
  return InvalidArgument("{}: heads is {}; it must divide hidden ({})", model, heads, hidden);
}

Status CheckFloatType(std::string_view model, ir::DType dtype) {
  if (ir::IsFloating(dtype)) return Status::Ok();
  return InvalidArgument("{}: dtype {} is not a float type", model, ir::DTypeName(dtype));
}

Status CheckExpertGroupSize(std::string_view model, int64_t group_size, int64_t tokens) {
  if (tokens % std::min(group_size, tokens) == 0) return Status::Ok();
  return InvalidArgument(
      "{}: expert_group_size is {}; it must divide the batch*seq = {} tokens of a batch", model,
      group_size, tokens);
}

}  // namespace alpa::models
