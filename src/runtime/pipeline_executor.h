// Runs pipelined programs: every device runs its own static list of pipeline instructions (Alpa's
// PipelineInstruction: RUN, SEND, RECV, FREE), concurrently with the others, over value slots
// that hold its tiles: its stages' weights and optimizer state, each micro-batch's inputs,
// residuals and cotangents, and the summed gradients.
//
//   run         one of the device's programs (a stage's forward, backward or update, an
//               instruction list over the stage's mesh) on input slots, into output slots
//   send        a box of a slot's tile to another device, tagged; it returns at once (the
//               message waits in the mailbox, mailbox.h), so no schedule can deadlock on it
//   receive     a tagged box from another device into a slot's tile (zeros when the slot is
//               empty), copied, or added where the pieces of a pending sum meet
//   accumulate  slot += another slot (the first micro-batch's gradient is moved, not added)
//   scale       slot *= a factor (the mean of the summed gradients)
//   zeros       slot = a tile of zeros (a sum that receives its terms)
//   load        slot = the device's host input `index` (a micro-batch's batch tile, handed over
//               when the device starts that micro-batch, as a data loader feeds it)
// Every instruction lists the slots freed after it: their last reader ran.
//
// The runtime knows nothing of stages or schedules: the lists are compiled by the API layer
// (api/pipeshard_executable.h) from the plan, and a test can write one by hand.
//
// Memory: each device counts the bytes of its slots; a run adds its program's peak over its
// arguments (the program's own temporaries), so
//   peak = max over instructions of (bytes held in slots + the run's peak - its arguments)
#ifndef ALPA_RUNTIME_PIPELINE_EXECUTOR_H_
#define ALPA_RUNTIME_PIPELINE_EXECUTOR_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "interp/device_context.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/device_threads.h"
#include "runtime/in_process_communicator.h"
#include "runtime/instruction_list.h"
#include "runtime/mailbox.h"
#include "support/status.h"

namespace alpa::runtime {

// A program a device runs: an instruction list over the devices of its mesh.
struct MeshProgram {
  std::shared_ptr<const ir::Module> module;
  std::shared_ptr<const InstructionList> list;
  std::vector<int64_t> mesh_devices;  // global ids of its mesh's devices, by partition id
  std::string name;                   // for traces and errors: "stage 1 forward"
};

struct Box {
  std::vector<int64_t> start;
  std::vector<int64_t> sizes;
};

struct PipelineInstruction {
  enum class Kind { kRun, kSend, kReceive, kAccumulate, kScale, kZeros, kLoad };
  Kind kind = Kind::kRun;
  std::string label;  // "F3 stage 1", what traces and errors name
  // kRun: program index (PipelineDevice::programs) and its input and output slots.
  int64_t program = -1;
  std::vector<int64_t> inputs;
  std::vector<int64_t> outputs;
  // kSend, kReceive, kAccumulate, kScale: the slot.
  int64_t slot = -1;
  // kSend / kReceive: the other device and the message's tag; the box of the slot's tile.
  int64_t peer = -1;
  int64_t tag = 0;
  Box box;
  ir::Shape tile;            // kReceive: the tile an empty slot starts as (zeros); kZeros: the tile
  bool add = false;          // kReceive: add the piece in place of copying it
  int64_t source_slot = -1;  // kAccumulate
  double factor = 1.0;       // kScale
  int64_t host_input = -1;   // kLoad
  std::vector<int64_t> release;  // slots freed after the instruction
};

struct PipelineDevice {
  int64_t device = 0;  // global id
  std::vector<MeshProgram> programs;
  std::vector<PipelineInstruction> instructions;
  int64_t slot_count = 0;
};

// What one device did in a run.
struct PipelineEvent {
  std::string label;
  int64_t instruction = -1;  // its index in the device's list
  bool transfer = false;  // a send or receive
  double start_s = 0;
  double duration_s = 0;
};
struct PipelineProfile {
  int64_t peak_bytes = 0;
  std::string peak_label;  // the instruction that first reached it
  int64_t peak_instruction =
      -1;                  // and its index in the device's list (-1: the slots it began with)
  double busy_s = 0;       // in runs
  int64_t sent_bytes = 0;  // to other devices
  std::vector<PipelineEvent> events;
};

struct PipelineRunOptions {
  InProcessOptions communicator;  // the collectives' and the receives' timeout
  bool trace = false;
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  // Each device's memory; a run or receive past it fails naming the slot. 0: no limit.
  int64_t memory_limit_bytes = 0;
  DeviceThreads* threads = nullptr;  // as many as devices; null: started for this run
};

// Runs every device's list on `slots` (by device, PipelineDevice::slot_count each; the caller's
// state in, whatever the lists leave out) and `host_inputs` (by device: what its loads take, in
// host memory until then; null: none), each device on a thread of this process, their messages in
// one InProcessMailbox. Errors: every failing device's, named ("device 2: F3 stage 1: ..."), its
// own before the timeouts it caused in its peers.
Result<std::vector<PipelineProfile>> RunPipeline(
    const std::vector<PipelineDevice>& devices, std::vector<std::vector<ir::Literal>>& slots,
    const PipelineRunOptions& options = {},
    std::vector<std::vector<ir::Literal>>* host_inputs = nullptr);

// Runs one device's list as this process's device (an MPI rank: `world` is its communicator, its
// rank the device's id, and `mailbox` carries its messages), the other devices' lists running in
// other processes. `options.communicator` and `options.threads` are not read: the engines have
// their own timeouts. Errors are this device's, named; a peer that fails leaves this one to time
// out on what it waits for (the caller ends the job: MpiWorld::Abort).
Result<PipelineProfile> RunPipelineDevice(const PipelineDevice& device,
                                          std::vector<ir::Literal>& slots, Communicator& world,
                                          Mailbox& mailbox, const PipelineRunOptions& options = {},
                                          std::vector<ir::Literal>* host_inputs = nullptr);

// Every device's profile on every process, from each process's `own` (RunPipelineDevice's, of
// device world.rank()): a collective over the world. The events come along when `trace`, each
// process's timed from its `epoch` on the host's monotonic clock and shifted to this process's
// epoch, so the devices of one host share a timeline (other hosts' are offset by their clocks).
Result<std::vector<PipelineProfile>> GatherPipelineProfiles(
    Communicator& world, const std::vector<PipelineDevice>& devices, const PipelineProfile& own,
    bool trace, std::chrono::steady_clock::time_point epoch);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_PIPELINE_EXECUTOR_H_
