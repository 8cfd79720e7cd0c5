#include "ir/opcode.h"

#include <array>

namespace alpa::ir {
namespace {

constexpr std::array<std::string_view, kOpcodeCount> kOpcodeNames = {
#define ALPA_OPCODE_NAME(name, text) text,
    ALPA_OPCODE_LIST(ALPA_OPCODE_NAME)
#undef ALPA_OPCODE_NAME
};

}  // namespace

std::string_view OpcodeName(Opcode opcode) { return kOpcodeNames[static_cast<size_t>(opcode)]; }

std::optional<Opcode> ParseOpcode(std::string_view text) {
  if (text == "optimization-barrier") return Opcode::kOptimizationBarrier;
  for (size_t i = 0; i < kOpcodeNames.size(); ++i) {
    if (kOpcodeNames[i] == text) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

bool IsElementwiseUnary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kCos:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kComplex:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseArithmetic(Opcode opcode) {
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return true;
  switch (opcode) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsCollective(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

}  // namespace alpa::ir
