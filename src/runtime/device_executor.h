// Runs one device's instruction list (instruction_list.h): kernels through the kernels layer where
// it has a fast one (fast_kernels.h) or a fused loop (fused_loops.h) and the interpreter's
// handlers otherwise, collectives through
// the device's backend, buffers freed after their last reader. It counts the bytes it holds, so a
// run reports its measured peak, and can record when each instruction ran (a timeline for Chrome's
// trace viewer, execution_trace.h).
//
//   live(t) = bytes of the arguments + bytes of the slots holding a value after step t's result
//             is written and before its dead operands are freed
//   peak    = max over t of live(t)
//
// Bytes are those of the values the executor holds (a tuple counts its elements); the kernels'
// own scratch is not counted, as the memory model does not count it either.
#ifndef ALPA_RUNTIME_DEVICE_EXECUTOR_H_
#define ALPA_RUNTIME_DEVICE_EXECUTOR_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "interp/device_context.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "runtime/instruction_list.h"
#include "support/status.h"

namespace alpa::runtime {

// One instruction's run on a device; times in seconds since ExecuteOptions::epoch.
struct ExecutionEvent {
  const ir::Instruction* instruction = nullptr;
  bool collective = false;
  bool interpreted = false;  // InterpretedStep of its step
  double start_s = 0;
  double duration_s = 0;
  int32_t fused_values = 0;  // values its step's loop computed besides the instruction (0: none)
};

// Whether `step` runs on the interpreter's handler for want of a fast kernel
// (runtime/fast_kernels.h): a computation that is neither a collective nor a tuple's or element's
// move or copy.
bool InterpretedStep(const InstructionStep& step);

struct ExecutionProfile {
  int64_t peak_bytes = 0;
  const ir::Instruction* peak_instruction = nullptr;  // the step that first reached the peak
  int64_t argument_bytes = 0;                         // included in peak_bytes
  std::vector<ExecutionEvent> events;                 // when ExecuteOptions::trace
};

struct ExecuteOptions {
  bool trace = false;
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  // The device's memory; a step whose result would take the live bytes past it fails, naming
  // the buffer and the bytes it needs (out of memory). 0: no limit.
  int64_t memory_limit_bytes = 0;
};

// Bytes a value holds: an array's elements, a tuple's elements' bytes.
int64_t LiteralBytes(const ir::Literal& literal);

// Runs `list` on `arguments` (one per parameter, local shapes, checked) as `device`. Returns the
// root's value; `profile` (optional) receives the peak and, when tracing, the events. Errors name
// the instruction that failed.
Result<ir::Literal> ExecuteInstructionList(const InstructionList& list,
                                           std::vector<ir::Literal> arguments,
                                           const interp::DeviceContext& device,
                                           const ExecuteOptions& options = {},
                                           ExecutionProfile* profile = nullptr);

// The same on arguments the caller keeps: they are moved in for the run and handed back after
// it, on success or error (a weight read by every micro-batch's program is never copied). An
// argument marked in `donated` (one flag per argument; null: none) is the run's to free: it is
// freed after its last reader and handed back empty, so it counts in the peak only while read.
Result<ir::Literal> ExecuteOnBorrowedArguments(const InstructionList& list,
                                               std::vector<ir::Literal>& arguments,
                                               const interp::DeviceContext& device,
                                               const ExecuteOptions& options = {},
                                               ExecutionProfile* profile = nullptr,
                                               const std::vector<bool>* donated = nullptr);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_DEVICE_EXECUTOR_H_
