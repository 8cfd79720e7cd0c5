#include "ir/index_folding.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ir/post_order_rebuild.h"

namespace alpa::ir {
namespace {

bool IsIndexType(const Shape& shape) {
  return shape.IsArray() && shape.rank() == 0 &&
         (IsInteger(shape.dtype()) || shape.dtype() == DType::kPred);
}

// The value of an integer or pred scalar constant; nullopt for anything else.
std::optional<int64_t> IndexConstant(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kConstant || !IsIndexType(instruction->shape()) ||
      !instruction->attributes().literal.has_value()) {
    return std::nullopt;
  }
  return instruction->attributes().literal->GetInt(0);
}

// `value` as `dtype` holds it: wrapped to its width, as the machine's arithmetic does.
int64_t Wrap(int64_t value, DType dtype) {
  if (dtype == DType::kPred) return value != 0 ? 1 : 0;
  const int64_t bits = 8 * DTypeByteSize(dtype);
  if (bits >= 64) return value;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  const uint64_t low = static_cast<uint64_t>(value) & mask;
  if (IsUnsignedInteger(dtype)) return static_cast<int64_t>(low);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((low ^ sign) - sign);  // sign-extended
}

bool Compare(int64_t a, int64_t b, ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kLt:
      return a < b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kGe:
      return a >= b;
  }
  return false;
}

// The value of `instruction` when it is integer arithmetic on scalar constants.
std::optional<int64_t> FoldScalar(const Instruction& instruction) {
  if (!IsIndexType(instruction.shape()) || instruction.operand_count() == 0) return std::nullopt;
  std::vector<int64_t> v;
  for (const Instruction* operand : instruction.operands()) {
    const std::optional<int64_t> value = IndexConstant(operand);
    if (!value.has_value()) return std::nullopt;
    v.push_back(*value);
  }
  std::optional<int64_t> result;
  switch (instruction.opcode()) {
    // In unsigned arithmetic, which wraps as the machine's does (signed overflow is undefined).
    case Opcode::kAdd:
      result = static_cast<int64_t>(static_cast<uint64_t>(v[0]) + static_cast<uint64_t>(v[1]));
      break;
    case Opcode::kSubtract:
      result = static_cast<int64_t>(static_cast<uint64_t>(v[0]) - static_cast<uint64_t>(v[1]));
      break;
    case Opcode::kMultiply:
      result = static_cast<int64_t>(static_cast<uint64_t>(v[0]) * static_cast<uint64_t>(v[1]));
      break;
    case Opcode::kNegate:
      result = static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(v[0]));
      break;
    case Opcode::kMaximum:
      result = std::max(v[0], v[1]);
      break;
    case Opcode::kMinimum:
      result = std::min(v[0], v[1]);
      break;
    case Opcode::kClamp:  // clamp(low, x, high)
      result = std::min(std::max(v[1], v[0]), v[2]);
      break;
    case Opcode::kSelect:
      result = v[0] != 0 ? v[1] : v[2];
      break;
    case Opcode::kConvert:
      result = v[0];
      break;
    case Opcode::kCompare:
      result = Compare(v[0], v[1], instruction.attributes().comparison_direction) ? 1 : 0;
      break;
    default:
      return std::nullopt;
  }
  return Wrap(*result, instruction.shape().dtype());
}

// The constant start indices of a dynamic-slice or dynamic-update-slice (operands from `first`
// on), clamped as the op clamps them so that a window of `sizes` fits in `dims`.
std::optional<std::vector<int64_t>> ConstantStarts(const Instruction& instruction, int64_t first,
                                                   const std::vector<int64_t>& dims,
                                                   const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts;
  for (int64_t i = first; i < instruction.operand_count(); ++i) {
    const std::optional<int64_t> start = IndexConstant(instruction.operand(i));
    if (!start.has_value()) return std::nullopt;
    const size_t d = starts.size();
    starts.push_back(std::clamp<int64_t>(*start, 0, dims[d] - sizes[d]));
  }
  if (starts.size() != dims.size()) return std::nullopt;
  return starts;
}

class IndexFolder {
 public:
  explicit IndexFolder(Computation& computation) : computation_(computation) {}

  void Run() {
    RebuildInPostOrder(computation_, [this](std::unique_ptr<Instruction> instruction) {
      return Place(std::move(instruction));
    });
    computation_.RemoveDeadInstructions();
  }

 private:
  // Adds `instruction`, or what the rules replace it with, and returns the value standing for it.
  Instruction* Place(std::unique_ptr<Instruction> instruction) {
    if (instruction->opcode() == Opcode::kGetTupleElement &&
        instruction->operand(0)->opcode() == Opcode::kTuple) {
      return instruction->operand(0)->operand(instruction->attributes().tuple_index);
    }
    if (const std::optional<int64_t> value = FoldScalar(*instruction)) {
      auto constant = std::make_unique<Instruction>(instruction->name(), Opcode::kConstant,
                                                    instruction->shape());
      constant->mutable_attributes().literal = Literal::FromInts(instruction->shape(), {*value});
      constant->set_location(instruction->location());
      return computation_.AddInstruction(std::move(constant));
    }
    if (instruction->opcode() == Opcode::kDynamicSlice) {
      const std::optional<std::vector<int64_t>> starts = ConstantStarts(
          *instruction, 1, instruction->operand(0)->shape().dims(), instruction->shape().dims());
      if (starts.has_value()) return PlaceWindow(*instruction, *starts);
    }
    if (instruction->opcode() == Opcode::kSlice) {
      std::vector<int64_t> starts;
      bool unit_strides = true;
      for (const SliceDim& dim : instruction->attributes().slice) {
        starts.push_back(dim.start);
        unit_strides = unit_strides && dim.stride == 1;
      }
      if (unit_strides) {
        const Window window =
            ReadThroughUpdates(instruction->operand(0), starts, instruction->shape().dims());
        if (window.update != nullptr) return window.update;
        if (window.array != instruction->operand(0)) {
          return PlaceSlice(*instruction, window.array, starts);
        }
      }
    }
    return computation_.AddInstruction(std::move(instruction));
  }

  // Where the window [starts, starts + sizes) of `array` can be read: the update of the
  // dynamic-update-slice of the chain below `array` that wrote exactly that window, else the
  // deepest array of the chain whose window the updates passed over left unchanged.
  struct Window {
    Instruction* update = nullptr;
    Instruction* array = nullptr;
  };
  static Window ReadThroughUpdates(Instruction* array, const std::vector<int64_t>& starts,
                                   const std::vector<int64_t>& sizes) {
    while (array->opcode() == Opcode::kDynamicUpdateSlice) {
      Instruction* update = array->operand(1);
      const std::optional<std::vector<int64_t>> written =
          ConstantStarts(*array, 2, array->shape().dims(), update->shape().dims());
      if (!written.has_value()) break;
      bool exact = true;
      bool disjoint = false;
      for (size_t d = 0; d < starts.size(); ++d) {
        const int64_t end = starts[d] + sizes[d];
        const int64_t written_end = (*written)[d] + update->shape().dims()[d];
        exact = exact && starts[d] == (*written)[d] && end == written_end;
        disjoint = disjoint || end <= (*written)[d] || written_end <= starts[d];
      }
      if (exact) return {update, nullptr};
      if (!disjoint) break;
      array = array->operand(0);
    }
    return {nullptr, array};
  }

  // The window [starts, starts + shape) of `original`'s operand as `original` reads it: the
  // update that wrote it, else a slice of the array the updates left it unchanged in.
  Instruction* PlaceWindow(const Instruction& original, const std::vector<int64_t>& starts) {
    const Window window = ReadThroughUpdates(original.operand(0), starts, original.shape().dims());
    if (window.update != nullptr) return window.update;
    return PlaceSlice(original, window.array, starts);
  }

  Instruction* PlaceSlice(const Instruction& original, Instruction* array,
                          const std::vector<int64_t>& starts) {
    auto slice = std::make_unique<Instruction>(original.name(), Opcode::kSlice, original.shape());
    slice->AppendOperand(array);
    Attributes& attributes = slice->mutable_attributes();
    attributes.metadata = original.attributes().metadata;
    attributes.sharding = original.attributes().sharding;
    for (size_t d = 0; d < starts.size(); ++d) {
      attributes.slice.push_back({starts[d], starts[d] + original.shape().dims()[d], 1});
    }
    slice->set_location(original.location());
    return computation_.AddInstruction(std::move(slice));
  }

  Computation& computation_;
};

}  // namespace

void FoldUnrolledIndices(Computation& computation) { IndexFolder(computation).Run(); }

}  // namespace alpa::ir
