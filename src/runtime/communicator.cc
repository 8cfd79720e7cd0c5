#include "runtime/communicator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace alpa::runtime {

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "?";
}

std::string GroupText(DeviceGroup group) { return fmt::format("[{}]", fmt::join(group, ", ")); }

}  // namespace alpa::runtime
