// Rules of the elementwise opcodes. With y = f(x) (or f(a, b)) and cotangent g:
//   add        da = g, db = g                 subtract   da = g, db = -g
//   multiply   da = g b, db = g a             divide     da = g / b, db = -g y / b
//   maximum    da = g where a >= b, else 0; db the rest (a tie goes to a, so the two sum to g)
//   power      da = g b a^(b-1), db = g y log(a)
//   minimum    da = g where a <= b, else 0; db the rest
//   negate -g      exp g y      expm1 g (y + 1)     log g / x     log1p g / (1 + x)
//   tanh g (1 - y^2)     logistic g y (1 - y)     sqrt g / (2 y)     rsqrt -g y / (2 x)
//   sine g cos x     cosine -g sin x     abs g sign(x)     erf g 2/sqrt(pi) exp(-x^2)
//   select(p, a, b)   da = select(p, g, 0), db = select(p, 0, g), p has none
//   convert           dx = convert(g) back to x's type
#include <cmath>
#include <numbers>

#include "autodiff/vjp.h"

namespace alpa::autodiff {

using ir::Instruction;
using ir::Opcode;

namespace {

Result<Instruction*> UnaryVjp(Opcode opcode, Instruction* x, Instruction* y, Instruction* g,
                              ir::ComputationBuilder& b) {
  switch (opcode) {
    case Opcode::kNegate:
      return b.Negate(g);
    case Opcode::kExp:
      return b.Multiply(g, y);
    case Opcode::kExpm1:
      return b.Multiply(g, b.Add(y, Full(b, y, 1)));
    case Opcode::kLog:
      return b.Divide(g, x);
    case Opcode::kLog1p:
      return b.Divide(g, b.Add(x, Full(b, x, 1)));
    case Opcode::kTanh:
      return b.Multiply(g, b.Subtract(Full(b, y, 1), b.Multiply(y, y)));
    case Opcode::kLogistic:
      return b.Multiply(g, b.Multiply(y, b.Subtract(Full(b, y, 1), y)));
    case Opcode::kSqrt:
      return b.Divide(g, b.Multiply(Full(b, y, 2), y));
    case Opcode::kRsqrt:
      return b.Divide(b.Multiply(g, y), b.Multiply(Full(b, x, -2), x));
    case Opcode::kSin:
      return b.Multiply(g, b.Unary(Opcode::kCos, x));
    case Opcode::kCos:
      return b.Negate(b.Multiply(g, b.Unary(Opcode::kSin, x)));
    case Opcode::kAbs:
      return b.Multiply(g, b.Unary(Opcode::kSign, x));
    case Opcode::kErf:
      return b.Multiply(g, b.Multiply(Full(b, x, 2 / std::sqrt(std::numbers::pi)),
                                      b.Exp(b.Negate(b.Multiply(x, x)))));
    default:
      return Unimplemented("no gradient rule for {}", ir::OpcodeName(opcode));
  }
}

Result<std::vector<Instruction*>> BinaryVjp(Opcode opcode, Instruction* a, Instruction* x_b,
                                            Instruction* y, Instruction* g,
                                            ir::ComputationBuilder& b) {
  switch (opcode) {
    case Opcode::kAdd:
      return std::vector<Instruction*>{g, g};
    case Opcode::kSubtract:
      return std::vector<Instruction*>{g, b.Negate(g)};
    case Opcode::kMultiply:
      return std::vector<Instruction*>{b.Multiply(g, x_b), b.Multiply(g, a)};
    case Opcode::kDivide:
      return std::vector<Instruction*>{b.Divide(g, x_b), b.Negate(b.Divide(b.Multiply(g, y), x_b))};
    case Opcode::kPower:
      return std::vector<Instruction*>{
          b.Multiply(g, b.Multiply(x_b, b.Power(a, b.Subtract(x_b, Full(b, x_b, 1))))),
          b.Multiply(g, b.Multiply(y, b.Log(a)))};
    case Opcode::kMaximum:
    case Opcode::kMinimum: {
      const auto direction =
          opcode == Opcode::kMaximum ? ir::ComparisonDirection::kGe : ir::ComparisonDirection::kLe;
      Instruction* a_wins = b.Compare(a, x_b, direction);
      Instruction* zero = Full(b, g, 0);
      return std::vector<Instruction*>{b.Select(a_wins, g, zero), b.Select(a_wins, zero, g)};
    }
    default:
      return Unimplemented("no gradient rule for {}", ir::OpcodeName(opcode));
  }
}

}  // namespace

Result<std::vector<Instruction*>> ElementwiseVjp(const VjpInputs& in, ir::ComputationBuilder& b) {
  const Opcode opcode = in.forward.opcode();
  Instruction* g = in.cotangent;
  if (opcode == Opcode::kSelect) {
    Instruction* zero = Full(b, g, 0);
    Instruction* p = in.operands[0];
    return std::vector<Instruction*>{nullptr, b.Select(p, g, zero), b.Select(p, zero, g)};
  }
  if (opcode == Opcode::kConvert) {
    return std::vector<Instruction*>{b.Convert(g, in.operands[0]->shape().dtype())};
  }
  if (ir::IsElementwiseUnary(opcode)) {
    ALPA_ASSIGN_OR_RETURN(Instruction * dx, UnaryVjp(opcode, in.operands[0], in.output, g, b));
    return std::vector<Instruction*>{dx};
  }
  return BinaryVjp(opcode, in.operands[0], in.operands[1], in.output, g, b);
}

}  // namespace alpa::autodiff
