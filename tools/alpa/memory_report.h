// `alpa inspect MODEL --memory`: what one device running the whole module (a zoo model's train
// step, or an HLO file) holds at its peak, by category (cost/memory_model.h), and with a cluster
// whether that fits one of its devices and by how much.
//
// For a zoo model the entry parameters' roles come from the train step's layout
// (autodiff::StepParameterLayout: weights, optimizer state, step counter, batch); an HLO file's
// parameters are all "other", and only the value tags it carries (ir/value_tag.h, e.g. in a
// train step exported with --export) tell its passes and gradients apart.
#ifndef ALPA_TOOLS_ALPA_MEMORY_REPORT_H_
#define ALPA_TOOLS_ALPA_MEMORY_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "cluster/device.h"
#include "cost/memory_model.h"
#include "plan/memory_summary.h"
#include "tools/alpa/zoo_options.h"

namespace alpa::tools {

// The memory model of `model`'s entry computation (naive post-order schedule, full shapes), with
// the values a device's compiler keeps inside kernels (cost/kernel_fusion.h) allocating nothing
// and, with `updates_in_place` (a device whose compiler fuses kernels, XLA's), a zoo step's
// weights, optimizer state and step count donated: each next value written over its parameter
// (cost/liveness.h).
cost::MemoryModel ModelMemory(const ModelArgument& model,
                              const cost::FusedValues& fused = cost::NoFusion(),
                              bool updates_in_place = false);

// Whether the peak fits one device of a cluster (its first device type).
struct DeviceFit {
  std::string cluster;  // the --cluster argument
  cluster::DeviceSpec device;
  int64_t required_bytes = 0;

  int64_t HeadroomBytes() const { return device.memory_bytes - required_bytes; }  // < 0: short
};

// The fit: one line (two when it does not fit), and the "one_device" object for --json.
std::string FitText(const DeviceFit& fit);
nlohmann::ordered_json FitJson(const DeviceFit& fit);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_MEMORY_REPORT_H_
