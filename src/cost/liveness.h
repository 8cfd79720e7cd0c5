// Liveness of the buffers of a computation over a schedule (an order of its instructions): when
// each result is allocated and freed, and the bytes live at each step.
//
// Step t runs order[t]. Each instruction's result is one buffer whose live interval is half-open
// over steps, like solver::Interval (the auto-sharding problem's node intervals):
//
//   [start, end) = [def, last_use + 1)     def = its step, last_use = the last step reading it
//   usage(t)     = sum over instructions i with start(i) <= t < end(i) of bytes(i)
//   peak         = max over t of usage(t), first reached at peak_step
//
// Rules (the naive schedule: nothing is rematerialized or reused in place):
//   - a result nobody reads is freed right after its own step: [def, def + 1);
//   - parameters live for the whole program (the caller owns them): [0, steps);
//   - the root lives to the end (it is the output): end = steps;
//   - tuple, get-tuple-element, bitcast and opt-barrier allocate nothing (bytes 0): they alias
//     their operands, which therefore live as long as any reader of the alias; so do the
//     broadcasts the runtime reads in place (ir/broadcast_folding.h), the values it computes
//     inside their readers' loops (ir/loop_fusion.h; a fusing compiler keeps them inside kernels
//     too), and, given a fusion (kernel_fusion.h), the values computed inside their readers'
//     kernels: each reader's kernel reads their operands;
//   - a donated parameter's next value (XLA's input_output_alias, as a train step donates its
//     weights and optimizer state) is written over the parameter's buffer when no reader of the
//     parameter runs after it: it allocates nothing (bytes 0, in_place). XLA's compiler updates
//     donated buffers so on the devices whose kernels it fuses; our CPU runtime does not (it
//     keeps the old weights and state through the update), so there nothing is donated;
//   - constants are buffers like any other;
//   - given how the shardings chosen for a device are lowered (`Lowering`, below), step t also
//     holds its operands' resharded copies and its result's unreduced partial sums while it runs:
//     usage(t) is then the largest of the three moments of the step the SPMD partitioner emits,
//         resharding:  before(t) + copies(t)
//         kernel:      before(t) + copies(t) - copied(t) + (partial(t) if any, else bytes(t))
//         collective:  before(t) - copied(t) - dying(t) + partial(t) + bytes(t)
//     where before(t) is what is live before t allocates, copied(t) the operands that die once
//     copied, dying(t) the other buffers t reads last (the copies die with them, unless t is
//     computed inside its reader's kernel, where they live until that reader ran), and a value
//     read through a copy is never computed inside a kernel (a collective reads it);
//   - buffers inside called computations (fusion temporaries, loop bodies) are not counted: a
//     fusion's output is the only buffer it materializes.
//
// Bytes come from a caller's function (default: the result's full ByteSize(), tuples all leaves)
// so that the sharding layer can pass per-device shard bytes for the same intervals.
#ifndef ALPA_COST_LIVENESS_H_
#define ALPA_COST_LIVENESS_H_

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "cost/kernel_fusion.h"
#include "ir/computation.h"

namespace alpa::cost {

// Bytes of one instruction's result on the device being modelled.
using BufferBytesFn = std::function<int64_t(const ir::Instruction&)>;

// The default: shape().ByteSize().
int64_t FullShapeBytes(const ir::Instruction& instruction);

struct BufferInterval {
  const ir::Instruction* instruction = nullptr;
  int64_t start = 0;   // first step it is live
  int64_t end = 0;     // one past the last step it is live
  int64_t bytes = 0;   // 0 for aliases
  bool alias = false;  // a view of its operands' buffers or a fused value (the rules above)
  bool in_place = false;  // written over a donated parameter's buffer (the rules above)

  bool live_at(int64_t step) const { return start <= step && step < end; }
};

struct Liveness {
  std::vector<const ir::Instruction*> order;  // the schedule: step t runs order[t]
  std::vector<BufferInterval> buffers;        // buffers[t]: the result of order[t]
  std::vector<int64_t> usage;                 // usage[t]: bytes live at step t
  int64_t peak_bytes = 0;                     // max of usage; 0 when there are no steps
  int64_t peak_step = -1;                     // first step reaching peak_bytes; -1 if none
  int64_t parameter_bytes = 0;                // bytes of all parameters (live throughout)
  std::unordered_map<const ir::Instruction*, int64_t> step_of;  // the inverse of order
  // What the peak is made of: held_at_peak[t] says whether buffers[t] is live at the peak (at a
  // lowered step, at the moment that is its peak), and peak_lowering_bytes counts the resharded
  // copies and partial sums beside them; together they are peak_bytes.
  std::vector<bool> held_at_peak;
  int64_t peak_lowering_bytes = 0;

  int64_t steps() const { return static_cast<int64_t>(order.size()); }
  // The step of `instruction`, or -1 when it is not in the order.
  int64_t StepOf(const ir::Instruction* instruction) const;
  // The buffer of `instruction` (which must be in the order).
  const BufferInterval& BufferOf(const ir::Instruction* instruction) const;
};

// A parameter whose buffer the computation may write `next`, the value the caller reads in its
// place, over (the rules above).
struct DonatedBuffer {
  const ir::Instruction* parameter = nullptr;
  const ir::Instruction* next = nullptr;
};

// What lowering the chosen shardings adds around one instruction on a device: the partitioner
// reshards the operands right before it and runs its strategy's collective right after it.
struct LoweredInstruction {
  // Bytes of the copies of its operands in the layouts it reads (all-gathered, all-to-all'ed or
  // sliced), and the operands so copied.
  int64_t resharded_operand_bytes = 0;
  std::vector<const ir::Instruction*> resharded_operands;
  // Bytes its kernel writes before its strategy's collective combines them into the result (the
  // partial sums an all-reduce or a reduce-scatter reduces); 0 when it runs none.
  int64_t unreduced_result_bytes = 0;
};
using Lowering = std::unordered_map<const ir::Instruction*, LoweredInstruction>;

// Liveness over the post order (ir::Computation::MakePostOrder). `fused`: the values kept inside
// kernels beyond the runtime's loops, which count always (empty for our CPU runtime);
// `donated`: the parameters updated in place; `lowering`: the partitioner's buffers around each
// instruction (none for an unpartitioned program).
Liveness ComputeLiveness(const ir::Computation& computation,
                         const BufferBytesFn& bytes = FullShapeBytes,
                         const FusedValues& fused = NoFusion(),
                         const std::vector<DonatedBuffer>& donated = {},
                         const Lowering& lowering = {});

// Liveness over a given order: every instruction of `computation` exactly once, each after its
// operands (checked).
Liveness ComputeLiveness(const ir::Computation& computation,
                         std::vector<const ir::Instruction*> order, const BufferBytesFn& bytes,
                         const FusedValues& fused = NoFusion(),
                         const std::vector<DonatedBuffer>& donated = {},
                         const Lowering& lowering = {});

}  // namespace alpa::cost

#endif  // ALPA_COST_LIVENESS_H_
