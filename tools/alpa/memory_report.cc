#include "tools/alpa/memory_report.h"

#include <fmt/format.h>

#include <vector>

#include "plan/layer_costs.h"
#include "support/units.h"

namespace alpa::tools {

cost::MemoryModel ModelMemory(const ModelArgument& model, const cost::FusedValues& fused,
                              bool updates_in_place) {
  cost::MemoryModelOptions options;
  options.fused = &fused;
  if (model.zoo) {
    options.num_micro_batches = model.zoo->training.num_micro_batches;
    const std::vector<autodiff::StepParameter> layout = StepLayout(*model.zoo);
    for (autodiff::StepParameter kind : layout) {
      options.parameter_roles.push_back(plan::RoleOfStepParameter(kind));
    }
    const ir::Computation& entry = *model.module().entry();
    const std::vector<int64_t> next = autodiff::StepNextValueElements(layout);
    for (size_t p = 0; updates_in_place && p < next.size(); ++p) {
      if (next[p] < 0) continue;
      options.donated.push_back({entry.parameters()[p], entry.root()->operand(next[p])});
    }
  }
  return cost::BuildMemoryModel(*model.module().entry(), options);
}

std::string FitText(const DeviceFit& fit) {
  std::string out = fmt::format("one device    {} of {}: {} of memory; ", fit.device.name,
                                fit.cluster, FormatBytes(fit.device.memory_bytes));
  if (fit.HeadroomBytes() >= 0) {
    return out + fmt::format("the peak fits with {} to spare\n", FormatBytes(fit.HeadroomBytes()));
  }
  out += fmt::format("the peak does NOT fit: {} short\n", FormatBytes(-fit.HeadroomBytes()));
  return out + fmt::format("              (the smallest device memory it fits in is {})\n",
                           FormatBytes(fit.required_bytes));
}

nlohmann::ordered_json FitJson(const DeviceFit& fit) {
  return {{"cluster", fit.cluster},
          {"device", fit.device.name},
          {"device_memory_bytes", fit.device.memory_bytes},
          {"required_bytes", fit.required_bytes},
          {"fits_in_device_memory", fit.HeadroomBytes() >= 0},
          {"headroom_bytes", fit.HeadroomBytes()}};
}

}  // namespace alpa::tools
