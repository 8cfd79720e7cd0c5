#include "runtime/spmd_executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace alpa::runtime {
namespace {

ReduceOp ToReduceOp(interp::CollectiveReduction reduction) {
  switch (reduction) {
    case interp::CollectiveReduction::kSum:
      return ReduceOp::kSum;
    case interp::CollectiveReduction::kMax:
      return ReduceOp::kMax;
    case interp::CollectiveReduction::kMin:
      return ReduceOp::kMin;
  }
  return ReduceOp::kSum;
}

ConstBuffer View(const ir::Literal& literal) {
  return {literal.shape().dtype(), literal.data(), literal.element_count()};
}
MutableBuffer View(ir::Literal& literal) {
  return {literal.shape().dtype(), literal.data(), literal.element_count()};
}

}  // namespace

Status CommunicatorCollectives::AllReduce(interp::CollectiveGroup group,
                                          interp::CollectiveReduction reduction,
                                          const ir::Literal& input, ir::Literal& output) {
  return communicator_.AllReduce(group, ToReduceOp(reduction), View(input), View(output));
}

Status CommunicatorCollectives::AllGather(interp::CollectiveGroup group, const ir::Literal& input,
                                          ir::Literal& output) {
  return communicator_.AllGather(group, View(input), View(output));
}

Status CommunicatorCollectives::ReduceScatter(interp::CollectiveGroup group,
                                              interp::CollectiveReduction reduction,
                                              const ir::Literal& input, ir::Literal& output) {
  return communicator_.ReduceScatter(group, ToReduceOp(reduction), View(input), View(output));
}

Status CommunicatorCollectives::AllToAll(interp::CollectiveGroup group, const ir::Literal& input,
                                         ir::Literal& output) {
  return communicator_.AllToAll(group, View(input), View(output));
}

Status CommunicatorCollectives::CollectivePermute(interp::CollectiveGroup group,
                                                  std::span<const interp::SourceTargetPair> pairs,
                                                  const ir::Literal& input, ir::Literal& output) {
  return communicator_.CollectivePermute(group, pairs, View(input), View(output));
}

Status CommunicatorCollectives::Broadcast(interp::CollectiveGroup group, int64_t root,
                                          const ir::Literal& input, ir::Literal& output) {
  // The communicator broadcasts in place: the root's buffer is read, the others' written.
  output = input;
  return communicator_.Broadcast(group, root, View(output));
}

Result<SpmdRun> RunSpmdProgram(const InstructionList& program,
                               std::vector<std::vector<ir::Literal>> arguments_per_device,
                               const SpmdRunOptions& options) {
  const int64_t devices = static_cast<int64_t>(arguments_per_device.size());
  const std::string& name = program.computation->name();
  if (devices < 1) {
    return InvalidArgument("RunSpmdProgram of {} needs the arguments of at least one device", name);
  }
  InProcessWorld world(devices, options.communicator);
  std::vector<ir::Literal> results(static_cast<size_t>(devices));
  SpmdRun run;
  run.profiles.resize(static_cast<size_t>(devices));
  std::optional<DeviceThreads> own_threads;
  DeviceThreads& threads =
      options.threads != nullptr ? *options.threads : own_threads.emplace(devices);
  if (threads.devices() != devices) {
    return InvalidArgument("RunSpmdProgram of {}: {} device threads for {} devices", name,
                           threads.devices(), devices);
  }
  const std::vector<Status> statuses = threads.Run([&](int64_t rank) -> Status {
    // The devices share this machine's cores: each device's kernels get as many OpenMP threads
    // as its thread has cores (an ICV of the device's thread). Left at every core per device, a
    // GPT step on 2 devices over 2 cores (bench/pytorch/compare.sh) took 1.4x the one-device time.
    omp_set_num_threads(static_cast<int>(threads.cores(rank).size()));
    const size_t device = static_cast<size_t>(rank);
    Communicator& communicator = world.device(rank);
    CommunicatorCollectives collectives(communicator);
    interp::DeviceContext context;
    context.partition_id = rank;
    context.num_partitions = devices;
    context.collectives = &collectives;
    Result<ir::Literal> result =
        ExecuteInstructionList(program, std::move(arguments_per_device[device]), context,
                               options.execute, &run.profiles[device]);
    if (!result.ok()) return result.status();
    results[device] = std::move(result).value();
    return Status::Ok();
  });
  ALPA_RETURN_IF_ERROR(CombineDeviceStatuses(statuses, fmt::format("program {}", name)));
  run.outputs.resize(static_cast<size_t>(devices));
  for (size_t device = 0; device < results.size(); ++device) {
    ir::Literal& result = results[device];
    if (result.shape().IsTuple()) {
      run.outputs[device] = std::move(result.tuple_elements());
    } else {
      run.outputs[device].push_back(std::move(result));
    }
  }
  return run;
}

Result<std::vector<std::vector<ir::Literal>>> RunSpmdProgram(
    const ir::Module& program, std::vector<std::vector<ir::Literal>> arguments_per_device,
    const InProcessOptions& options) {
  ALPA_ASSIGN_OR_RETURN(InstructionList list, CompileInstructionList(program));
  SpmdRunOptions run_options;
  run_options.communicator = options;
  ALPA_ASSIGN_OR_RETURN(SpmdRun run,
                        RunSpmdProgram(list, std::move(arguments_per_device), run_options));
  return std::move(run.outputs);
}

}  // namespace alpa::runtime
