#include "sharding/batch_dims.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "ir/dot_dimensions.h"
#include "ir/known_custom_calls.h"
#include "sharding/elementwise_strategies.h"
#include "sharding/slice_strategies.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

constexpr int64_t kNone = -1;

int64_t IndexOf(const std::vector<int64_t>& values, int64_t value) {
  auto it = std::find(values.begin(), values.end(), value);
  return it == values.end() ? kNone : static_cast<int64_t>(it - values.begin());
}

int64_t Product(const std::vector<int64_t>& dims, int64_t end) {
  return std::accumulate(dims.begin(), dims.begin() + end, int64_t{1}, std::multiplies<>());
}

// Ops whose result dimension d is operand dimension d when the extents agree (identity
// custom-calls such as layer boundaries among them).
bool KeepsDimensions(const ir::Instruction& instruction) {
  switch (instruction.opcode()) {
    case ir::Opcode::kCustomCall:
      return ir::IsIdentityCustomCall(instruction) || ir::IsElementwiseCustomCall(instruction);
    case ir::Opcode::kReverse:
    case ir::Opcode::kCopy:
    case ir::Opcode::kSort:
    case ir::Opcode::kReduceWindow:
    case ir::Opcode::kSelectAndScatter:
    case ir::Opcode::kScatter:
    case ir::Opcode::kAllReduce:
    case ir::Opcode::kOptimizationBarrier:
      return true;
    default:
      return IsElementwiseStrategyOpcode(instruction.opcode()) ||
             IsSliceStrategyOpcode(instruction.opcode());
  }
}

// The dimension of `to` that dimension `d` of `from` maps to under a reshape (see the header).
int64_t ReshapeDim(const std::vector<int64_t>& from, int64_t d, const std::vector<int64_t>& to) {
  const int64_t before = Product(from, d);
  for (int64_t e = 0; e < static_cast<int64_t>(to.size()); ++e) {
    const int64_t prefix = Product(to, e);
    if (prefix > before) return kNone;
    const int64_t a = from[static_cast<size_t>(d)];
    const int64_t b = to[static_cast<size_t>(e)];
    if (prefix == before && b > 1 && (a % b == 0 || b % a == 0)) return e;
  }
  return kNone;
}

// Output dimension of dot operand `o`'s dimension `d`, or (inverse) operand dimension of output
// dimension `d`.
int64_t DotDim(const ir::Instruction& dot, int64_t o, int64_t d, bool to_output) {
  const ir::DotDimensionNumbers& n = *dot.attributes().dot_dims;
  const std::vector<int64_t>& batch = o == 0 ? n.lhs_batch_dims : n.rhs_batch_dims;
  const std::vector<int64_t>& contracting =
      o == 0 ? n.lhs_contracting_dims : n.rhs_contracting_dims;
  const std::vector<int64_t> free =
      ir::DotFreeDims(dot.operand(o)->shape().rank(), batch, contracting);
  const int64_t batch_count = static_cast<int64_t>(batch.size());
  int64_t first_free = batch_count;
  if (o == 1) {
    first_free += static_cast<int64_t>(
        ir::DotFreeDims(dot.operand(0)->shape().rank(), n.lhs_batch_dims, n.lhs_contracting_dims)
            .size());
  }
  if (to_output) {
    if (const int64_t t = IndexOf(batch, d); t != kNone) return t;
    if (const int64_t p = IndexOf(free, d); p != kNone) return first_free + p;
    return kNone;
  }
  if (d < batch_count) return batch[static_cast<size_t>(d)];
  const int64_t p = d - first_free;
  return p >= 0 && p < static_cast<int64_t>(free.size()) ? free[static_cast<size_t>(p)] : kNone;
}

// Output dimension of gather indices dimension `d`, or the inverse: the output's non-offset
// dimensions list the indices' dimensions other than index_vector_dim, in order.
int64_t GatherIndicesDim(const ir::Instruction& gather, int64_t d, bool to_output) {
  const ir::GatherDimensionNumbers& n = *gather.attributes().gather_dims;
  std::vector<int64_t> batch_out;  // output dims that are not offset dims
  for (int64_t e = 0; e < gather.shape().rank(); ++e) {
    if (IndexOf(n.offset_dims, e) == kNone) batch_out.push_back(e);
  }
  std::vector<int64_t> batch_in;  // indices dims other than the index vector
  for (int64_t e = 0; e < gather.operand(1)->shape().rank(); ++e) {
    if (e != n.index_vector_dim) batch_in.push_back(e);
  }
  const std::vector<int64_t>& from = to_output ? batch_in : batch_out;
  const std::vector<int64_t>& to = to_output ? batch_out : batch_in;
  const int64_t k = IndexOf(from, d);
  return k != kNone && k < static_cast<int64_t>(to.size()) ? to[static_cast<size_t>(k)] : kNone;
}

// The result dimension that dimension `d` of operand `o` maps to (to_output), or the operand
// dimension that result dimension `d` maps to (!to_output); kNone when the batch does not pass.
int64_t MapDim(const ir::Instruction& instruction, int64_t o, int64_t d, bool to_output) {
  const ir::Shape& operand = instruction.operand(o)->shape();
  const ir::Shape& result = instruction.shape();
  if (!operand.IsArray() || !result.IsArray()) return kNone;
  const ir::Attributes& attributes = instruction.attributes();
  const ir::Opcode opcode = instruction.opcode();
  if (KeepsDimensions(instruction) ||
      (opcode == ir::Opcode::kBitcast && operand.dims() == result.dims())) {
    const bool same =
        operand.rank() == result.rank() && d < operand.rank() && operand.dim(d) == result.dim(d);
    return same ? d : kNone;
  }
  switch (opcode) {
    case ir::Opcode::kBroadcast:
      return to_output ? attributes.dimensions[static_cast<size_t>(d)]
                       : IndexOf(attributes.dimensions, d);
    case ir::Opcode::kTranspose:
      return to_output ? IndexOf(attributes.dimensions, d)
                       : attributes.dimensions[static_cast<size_t>(d)];
    case ir::Opcode::kReshape:
    case ir::Opcode::kBitcast:
      return to_output ? ReshapeDim(operand.dims(), d, result.dims())
                       : ReshapeDim(result.dims(), d, operand.dims());
    case ir::Opcode::kDot:
      return o < 2 && attributes.dot_dims ? DotDim(instruction, o, d, to_output) : kNone;
    case ir::Opcode::kConvolution: {
      if (o != 0 || !attributes.conv_dims || attributes.batch_group_count != 1) return kNone;
      const ir::ConvolutionDimensionNumbers& n = *attributes.conv_dims;
      const int64_t from = to_output ? n.input_batch : n.output_batch;
      return d == from ? (to_output ? n.output_batch : n.input_batch) : kNone;
    }
    case ir::Opcode::kReduce: {
      if (o >= instruction.operand_count() / 2) return kNone;  // init values
      const std::vector<int64_t>& reduced = attributes.dimensions;
      if (to_output) {
        if (IndexOf(reduced, d) != kNone) return kNone;
        return d - std::count_if(reduced.begin(), reduced.end(), [d](int64_t r) { return r < d; });
      }
      for (int64_t e = 0, kept = 0; e < operand.rank(); ++e) {
        if (IndexOf(reduced, e) != kNone) continue;
        if (kept++ == d) return e;
      }
      return kNone;
    }
    case ir::Opcode::kGather:
      if (!attributes.gather_dims) return kNone;
      if (o == 1) return GatherIndicesDim(instruction, d, to_output);
      return kNone;
    default:
      return kNone;
  }
}

// For a get-tuple-element of a tuple instruction: the element it selects (a view of that
// value); else nullptr.
const ir::Instruction* SelectedElement(const ir::Instruction& instruction) {
  if (instruction.opcode() != ir::Opcode::kGetTupleElement ||
      instruction.operand(0)->opcode() != ir::Opcode::kTuple) {
    return nullptr;
  }
  return instruction.operand(0)->operand(instruction.attributes().tuple_index);
}

bool IsSource(const ir::Instruction& instruction) {
  return instruction.opcode() == ir::Opcode::kParameter ||
         instruction.opcode() == ir::Opcode::kConstant;
}

// Gives `instruction` batch dimension `d` unless it has one; true when that changed the map.
bool Assign(BatchDims& dims, const ir::Instruction& instruction, int64_t d) {
  if (d == kNone || !instruction.shape().IsArray() || dims.count(&instruction) > 0) return false;
  dims[&instruction] = d;
  return true;
}

// One forward and one backward sweep; true when anything was assigned.
bool Sweep(const std::vector<ir::Instruction*>& order, BatchDims& dims) {
  bool changed = false;
  for (const ir::Instruction* instruction : order) {
    if (const ir::Instruction* element = SelectedElement(*instruction)) {
      if (auto it = dims.find(element); it != dims.end()) {
        changed |= Assign(dims, *instruction, it->second);
      }
      continue;
    }
    for (int64_t o = 0; o < instruction->operand_count() && !dims.count(instruction); ++o) {
      auto it = dims.find(instruction->operand(o));
      if (it != dims.end())
        changed |= Assign(dims, *instruction, MapDim(*instruction, o, it->second, true));
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Instruction& instruction = **it;
    auto found = dims.find(&instruction);
    if (found == dims.end()) continue;
    if (const ir::Instruction* element = SelectedElement(instruction)) {
      if (!IsSource(*element)) changed |= Assign(dims, *element, found->second);
      continue;
    }
    for (int64_t o = 0; o < instruction.operand_count(); ++o) {
      const ir::Instruction& operand = *instruction.operand(o);
      if (IsSource(operand)) continue;
      changed |= Assign(dims, operand, MapDim(instruction, o, found->second, false));
    }
  }
  return changed;
}

}  // namespace

BatchDims AnalyzeBatchDims(const ir::Computation& computation,
                           const std::vector<std::string>& batch_parameters) {
  BatchDims dims;
  for (const ir::Instruction* parameter : computation.parameters()) {
    if (parameter->shape().IsArray() && parameter->shape().rank() > 0 &&
        std::find(batch_parameters.begin(), batch_parameters.end(), parameter->name()) !=
            batch_parameters.end()) {
      dims[parameter] = 0;
    }
  }
  const std::vector<ir::Instruction*> order = computation.MakePostOrder();
  if (dims.empty()) {
    for (const ir::Instruction* instruction : order) {
      const ir::Opcode opcode = instruction->opcode();
      if ((opcode == ir::Opcode::kDot || opcode == ir::Opcode::kConvolution) &&
          instruction->shape().rank() > 0) {
        dims[instruction] = 0;
        break;
      }
    }
  }
  while (Sweep(order, dims)) {
  }
  return dims;
}

StrategySet KeepBatchSplit(StrategySet set, int64_t batch_dim, int64_t axis,
                           const std::vector<int64_t>& mesh_shape) {
  const std::vector<int64_t> wanted = mesh_shape[static_cast<size_t>(axis)] > 1
                                          ? std::vector<int64_t>{axis}
                                          : std::vector<int64_t>{};
  std::vector<Strategy> kept;
  for (const Strategy& strategy : set.strategies) {
    if (strategy.output.size() != 1) return set;
    if (strategy.output[0].dim_axes[static_cast<size_t>(batch_dim)] == wanted)
      kept.push_back(strategy);
  }
  if (kept.empty() || kept.size() == set.strategies.size()) return set;
  set.strategies = std::move(kept);
  set.follows_operand = -1;
  return set;
}

}  // namespace alpa::sharding
