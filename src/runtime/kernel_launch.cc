#include "runtime/kernel_launch.h"

#include <chrono>
#include <utility>
#include <vector>

#include "interp/device_context.h"
#include "ir/builder.h"
#include "runtime/device_executor.h"

namespace alpa::runtime {

Result<std::unique_ptr<KernelLaunchTimer>> KernelLaunchTimer::Create() {
  ir::ModuleBuilder module("kernel_launch");
  ir::ComputationBuilder b = module.NewComputation("chain");
  ir::Instruction* x = b.Parameter(0, ir::Shape::Array(ir::DType::kF32, {1}), "x");
  // Every partial sum is also an element of the output, so none has a single reader and the
  // runtime runs each add as its own kernel instead of fusing the chain into one loop
  // (ir/loop_fusion.h).
  std::vector<ir::Instruction*> sums = {x};
  for (int64_t i = 0; i < kKernelsPerChain; ++i) sums.push_back(b.Add(sums.back(), x));
  ALPA_ASSIGN_OR_RETURN(ir::Computation * chain, b.Build(b.Tuple(std::move(sums))));
  auto timer = std::unique_ptr<KernelLaunchTimer>(new KernelLaunchTimer());
  ALPA_ASSIGN_OR_RETURN(timer->module_, module.Build(chain));
  ALPA_ASSIGN_OR_RETURN(timer->list_, CompileInstructionList(*timer->module_));
  return timer;
}

Result<double> KernelLaunchTimer::Time(int64_t count) const {
  const ir::Literal x = ir::Literal::CreateZeros(ir::Shape::Array(ir::DType::kF32, {1}));
  const interp::DeviceContext device;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; ++i) {
    std::vector<ir::Literal> arguments;
    arguments.push_back(x);
    ALPA_RETURN_IF_ERROR(ExecuteInstructionList(list_, std::move(arguments), device).status());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return seconds / static_cast<double>(kKernelsPerChain);
}

}  // namespace alpa::runtime
