// A computation as the static instruction list one device runs: each step runs a kernel or a
// collective over value slots, then frees the slots it was the last reader of. Compiled once per
// program, run every training step (device_executor.h).
//
//   slot s     = the result of the s-th instruction of the post order (parameters included)
//   step t     = run steps[t].instruction on its operand slots into steps[t].result (with its
//                fast kernel when it has one, fast_kernels.h), then free steps[t].release
//
// With the fast kernels, a broadcast read in place (ir/broadcast_folding.h) gets no step and its
// slot stays empty: its users' steps read the broadcast's operand slot instead, which therefore
// lives until the last of them, as the memory model's alias rule says. Likewise a value computed
// inside its reader's loop (ir/loop_fusion.h) gets no step and no buffer: the loop's root step
// runs the whole loop (fused_loops.h) and reads every input of the loop, so each input lives until
// then, as the memory model's alias rule says.
//
// The buffers' lifetimes follow the memory model's rules (cost/liveness.h), so that a measured
// peak and the predicted one count the same buffers: parameters live to the end (the caller owns
// them), the root is the output, and a result nobody reads is freed right after its step. Tuple
// and get-tuple-element move their operand's buffers when they are its last reader, so like the
// model they allocate nothing then; otherwise they copy, and the copy is counted.
#ifndef ALPA_RUNTIME_INSTRUCTION_LIST_H_
#define ALPA_RUNTIME_INSTRUCTION_LIST_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/computation.h"
#include "ir/module.h"
#include "runtime/fast_kernels.h"
#include "runtime/fused_loops.h"
#include "support/status.h"

namespace alpa::runtime {

struct InstructionStep {
  const ir::Instruction* instruction = nullptr;
  std::vector<int32_t> operands;  // slots read, in operand order
  // Whether the step may move its operands' buffers into its result: a tuple or
  // get-tuple-element that is the last reader of each of its operand slots (so none is a
  // parameter or the root), none read twice.
  bool moves_operands = false;
  int32_t result = -1;
  std::vector<int32_t> release;  // slots freed after the step: their last reader ran
  // Parameter slots whose last reader the step is: freed after it when the caller donated them
  // (ExecuteOnBorrowedArguments), as XLA frees a donated buffer once it is consumed.
  std::vector<int32_t> release_if_donated;
  bool collective = false;
  // The kernels layer's kernel for the instruction, or nullptr: the interpreter runs it (unless
  // the step runs a loop).
  FastKernel fast_kernel = nullptr;
  // The loop the instruction roots, whose inputs are `operands`; null for a step of its own.
  std::shared_ptr<const FusedLoop> loop;
};

struct InstructionList {
  const ir::Computation* computation = nullptr;
  int32_t slot_count = 0;
  std::vector<int32_t> parameter_slots;  // by parameter number
  int32_t root_slot = -1;
  std::vector<InstructionStep> steps;  // every instruction but the parameters, in post order
};

enum class KernelChoice {
  kFast,       // the kernels layer's where fast_kernels.h has one, broadcasts read in place,
               // elementwise chains fused into loops
  kReference,  // the interpreter's handlers for every instruction: the oracle, for comparisons
};

// The entry computation of `module` (an error when it has none, or no root).
Result<InstructionList> CompileInstructionList(const ir::Module& module,
                                               KernelChoice kernels = KernelChoice::kFast);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_INSTRUCTION_LIST_H_
