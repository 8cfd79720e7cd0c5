#include "cost/kernel_fusion.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace alpa::cost {
namespace {

using ir::Instruction;
using ir::Opcode;

bool IsLoopFusible(Opcode opcode) {
  if (ir::IsElementwiseArithmetic(opcode)) return true;
  switch (opcode) {
    case Opcode::kBitcastConvert:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
      return true;
    default:
      return false;
  }
}

// Too costly to recompute in every reader's kernel: XLA's InstructionFusion::IsExpensive, less
// what its GPU fusion passes count as cheap (GpuInstructionFusion::IsExpensive): divide, sqrt,
// rsqrt and exp of f32 or f16, each one hardware instruction or close to it.
bool IsExpensive(const Instruction& instruction) {
  const ir::Shape& shape = instruction.shape();
  const bool f32_or_f16 =
      shape.IsArray() && (shape.dtype() == ir::DType::kF32 || shape.dtype() == ir::DType::kF16);
  switch (instruction.opcode()) {
    case Opcode::kDivide:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kExp:
      return !f32_or_f16;
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kTanh:
    case Opcode::kErf:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kCbrt:
    case Opcode::kRemainder:
    case Opcode::kPower:
    case Opcode::kAtan2:
      return true;
    default:
      return false;
  }
}

bool CanHost(const Instruction& reader, Opcode producer) {
  const Opcode opcode = reader.opcode();
  if (IsLoopFusible(opcode) || opcode == Opcode::kReduce || opcode == Opcode::kDynamicUpdateSlice) {
    return true;
  }
  const bool layout_only = producer == Opcode::kReshape || producer == Opcode::kTranspose;
  return layout_only && (opcode == Opcode::kDot || opcode == Opcode::kConvolution);
}

}  // namespace

const FusedValues& NoFusion() {
  static const FusedValues none;
  return none;
}

FusedValues FuseIntoReaders(const ir::Computation& computation) {
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> readers;
  for (const auto& instruction : computation.instructions()) {
    for (const Instruction* operand : instruction->operands()) {
      std::vector<const Instruction*>& list = readers[operand];
      if (std::find(list.begin(), list.end(), instruction.get()) == list.end()) {
        list.push_back(instruction.get());
      }
    }
  }
  FusedValues fused;
  for (const auto& instruction : computation.instructions()) {
    const Opcode opcode = instruction->opcode();
    if (!IsLoopFusible(opcode) || instruction.get() == computation.root()) continue;
    auto it = readers.find(instruction.get());
    if (it == readers.end()) continue;
    const std::vector<const Instruction*>& list = it->second;
    if (list.size() > 1 && IsExpensive(*instruction)) continue;
    if (std::all_of(list.begin(), list.end(),
                    [&](const Instruction* reader) { return CanHost(*reader, opcode); })) {
      fused.insert(instruction.get());
    }
  }
  return fused;
}

double KernelBytes(const Instruction& root, const FusedValues& fused) {
  // What the kernel reads of each materialized value: all of it, or the parts its slices keep.
  struct Read {
    bool whole = false;
    int64_t sliced = 0;
  };
  std::unordered_map<const Instruction*, Read> reads;
  std::unordered_set<const Instruction*> visited{&root};
  std::vector<const Instruction*> members{&root};
  while (!members.empty()) {
    const Instruction* member = members.back();
    members.pop_back();
    const bool slices =
        member->opcode() == Opcode::kSlice || member->opcode() == Opcode::kDynamicSlice;
    for (const Instruction* operand : member->operands()) {
      if (!fused.contains(operand)) {
        Read& read = reads[operand];
        // A dynamic-slice's start indices are read whole (they are scalars).
        if (slices && operand == member->operand(0)) {
          read.sliced += member->shape().ByteSize();
        } else {
          read.whole = true;
        }
      } else if (visited.insert(operand).second) {
        members.push_back(operand);
      }
    }
  }
  // Integer bytes: the sum does not depend on the map's order.
  int64_t bytes = root.shape().ByteSize();
  for (const auto& [value, read] : reads) {
    const int64_t size = value->shape().ByteSize();
    bytes += read.whole ? size : std::min(size, read.sliced);
  }
  return static_cast<double>(bytes);
}

}  // namespace alpa::cost
