// Runs an SPMD program (one HLO module that every device runs, as XLA's SPMD partitioner emits:
// local shapes, partition-id, collectives naming device ids) on in-process devices.
//
// Each device is a thread running the program's instruction list (device_executor.h): kernels
// from the interpreter's handlers, collectives over the device's Communicator through
// CommunicatorCollectives, buffers freed after their last reader and counted, so that a run
// reports each device's peak memory and, when asked, its timeline.
#ifndef ALPA_RUNTIME_SPMD_EXECUTOR_H_
#define ALPA_RUNTIME_SPMD_EXECUTOR_H_

#include <cstdint>
#include <span>
#include <vector>

#include "interp/device_context.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/communicator.h"
#include "runtime/device_executor.h"
#include "runtime/device_threads.h"
#include "runtime/in_process_communicator.h"
#include "runtime/instruction_list.h"
#include "support/status.h"

namespace alpa::runtime {

// The interpreter's collectives over a Communicator: device ids are the communicator's ranks, and
// each literal is passed as a typed view of its row-major elements (no copy).
class CommunicatorCollectives : public interp::CollectiveBackend {
 public:
  explicit CommunicatorCollectives(Communicator& communicator) : communicator_(communicator) {}

  Status AllReduce(interp::CollectiveGroup group, interp::CollectiveReduction reduction,
                   const ir::Literal& input, ir::Literal& output) override;
  Status AllGather(interp::CollectiveGroup group, const ir::Literal& input,
                   ir::Literal& output) override;
  Status ReduceScatter(interp::CollectiveGroup group, interp::CollectiveReduction reduction,
                       const ir::Literal& input, ir::Literal& output) override;
  Status AllToAll(interp::CollectiveGroup group, const ir::Literal& input,
                  ir::Literal& output) override;
  Status CollectivePermute(interp::CollectiveGroup group,
                           std::span<const interp::SourceTargetPair> pairs,
                           const ir::Literal& input, ir::Literal& output) override;
  Status Broadcast(interp::CollectiveGroup group, int64_t root, const ir::Literal& input,
                   ir::Literal& output) override;

 private:
  Communicator& communicator_;
};

struct SpmdRunOptions {
  InProcessOptions communicator;
  ExecuteOptions execute;  // every device's: tracing, the epoch, the memory limit
  // The devices' threads, kept from one run to the next (as many as devices; not owned); null:
  // threads started for this run alone.
  DeviceThreads* threads = nullptr;
};

struct SpmdRun {
  std::vector<std::vector<ir::Literal>> outputs;  // by device, as below
  std::vector<ExecutionProfile> profiles;         // by device
};

// Runs `program` on N = arguments_per_device.size() in-process devices: device d runs the
// instruction list on arguments_per_device[d] (local shapes) with partition-id d, and the
// collectives run over an InProcessWorld of N devices. Returns each device's outputs, indexed by
// device: the elements of the root when it is a tuple, else the root's value alone.
//
// An error on any device fails the whole run with every failing device's message, each prefixed
// "device d: ", the devices' own errors before the timeouts they caused: peers blocked in a
// collective that a failed device never reaches give up after options.communicator's timeout.
Result<SpmdRun> RunSpmdProgram(const InstructionList& program,
                               std::vector<std::vector<ir::Literal>> arguments_per_device,
                               const SpmdRunOptions& options = {});

// Compiles `program`'s instruction list and runs it once; the outputs alone.
Result<std::vector<std::vector<ir::Literal>>> RunSpmdProgram(
    const ir::Module& program, std::vector<std::vector<ir::Literal>> arguments_per_device,
    const InProcessOptions& options = {});

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_SPMD_EXECUTOR_H_
