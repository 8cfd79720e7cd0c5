#include "runtime/spmd_executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <utility>

#include "interp/evaluator.h"

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

Result<std::vector<std::vector<ir::Literal>>> RunSpmdProgram(
    const ir::Module& program, std::vector<std::vector<ir::Literal>> arguments_per_device,
    const InProcessOptions& options) {
  const int64_t devices = static_cast<int64_t>(arguments_per_device.size());
  if (devices < 1) {
    return InvalidArgument("RunSpmdProgram of {} needs the arguments of at least one device",
                           program.name());
  }
  InProcessWorld world(devices, options);
  std::vector<ir::Literal> results(static_cast<size_t>(devices));
  const std::vector<Status> statuses = RunOnDevices(world, [&](Communicator& communicator) {
    const int64_t device = communicator.rank();
    CommunicatorCollectives collectives(communicator);
    interp::DeviceContext context;
    context.partition_id = device;
    context.num_partitions = devices;
    context.collectives = &collectives;
    Result<ir::Literal> result = interp::EvaluateModule(
        program, std::move(arguments_per_device[static_cast<size_t>(device)]), context);
    if (!result.ok()) return result.status();
    results[static_cast<size_t>(device)] = std::move(result).value();
    return Status::Ok();
  });
  // A device's own error first: the timeouts (kResourceExhausted) of its peers follow from it.
  std::vector<std::string> errors, timeouts;
  StatusCode code = StatusCode::kResourceExhausted;
  for (int64_t device = 0; device < devices; ++device) {
    const Status& status = statuses[static_cast<size_t>(device)];
    if (status.ok()) continue;
    const bool timeout = status.code() == StatusCode::kResourceExhausted;
    if (!timeout && errors.empty()) code = status.code();
    (timeout ? timeouts : errors).push_back(fmt::format("device {}: {}", device, status.message()));
  }
  if (!errors.empty() || !timeouts.empty()) {
    errors.insert(errors.end(), timeouts.begin(), timeouts.end());
    return Status(code, fmt::format("module {} on {} devices failed: {}", program.name(), devices,
                                    fmt::join(errors, "; ")));
  }
  std::vector<std::vector<ir::Literal>> outputs(static_cast<size_t>(devices));
  for (int64_t device = 0; device < devices; ++device) {
    ir::Literal& result = results[static_cast<size_t>(device)];
    if (result.shape().IsTuple()) {
      outputs[static_cast<size_t>(device)] = std::move(result.tuple_elements());
    } else {
      outputs[static_cast<size_t>(device)].push_back(std::move(result));
    }
  }
  return outputs;
}

}  // namespace alpa::runtime
