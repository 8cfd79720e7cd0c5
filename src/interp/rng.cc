// rng and rng-bit-generator: deterministic pseudo-random numbers.
//
// Both use SplitMix64 (Steele, Lea, Flood 2014) as the bit source. The values are reproducible
// across runs and machines but are NOT the bits XLA produces: XLA's rng uses a per-module
// Philox/ThreeFry state and rng-bit-generator implements ThreeFry or Philox. Tests that compare a
// sharded program against the interpreter must run the same rng ops in both (or avoid them).
//
// rng: every executed rng op takes the next number of the evaluation's counter as its stream, so
// two rng ops, or one op in two loop iterations, draw different values.
//   uniform(a, b):  floats a + (b - a) * u with u in [0, 1) from 53 random bits (rounded to the
//                   element type, and moved one ulp down if that rounding reached b, which the
//                   half-open range [a, b) excludes); integers a + (bits mod (b - a)), or a
//                   when b <= a.
//   normal(mu, sigma): mu + sigma * sqrt(-2 ln u1) * cos(2 pi u2) (Box-Muller), floats only.
// rng-bit-generator(state): word i of the output is SplitMix64(s0 ^ SplitMix64(s_last + i)) over
// the state words s; the new state is the old one with the last word advanced by the number of
// words drawn. The output's bytes are those words, little-endian.
#include <cmath>
#include <cstring>
#include <numbers>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from the top 53 bits.
double ToUnit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Replaces the IEEE float `U`-sized element i of `literal` by the next representable value below
// it: magnitude - 1 ulp for x > 0, + 1 ulp for x < 0, and -(smallest subnormal) for x = +-0.
template <typename U>
void StepDownAs(Literal& literal, int64_t i) {
  constexpr U kSign = static_cast<U>(U{1} << (8 * sizeof(U) - 1));
  U bits;
  std::memcpy(&bits, literal.data() + i * static_cast<int64_t>(sizeof(U)), sizeof(U));
  if ((bits & static_cast<U>(~kSign)) == 0) {
    bits = static_cast<U>(kSign | 1);
  } else if ((bits & kSign) == 0) {
    bits = static_cast<U>(bits - 1);
  } else {
    bits = static_cast<U>(bits + 1);
  }
  std::memcpy(literal.data() + i * static_cast<int64_t>(sizeof(U)), &bits, sizeof(U));
}

void StepDown(Literal& literal, int64_t i) {
  switch (ir::DTypeByteSize(literal.shape().dtype())) {
    case 1:
      return StepDownAs<uint8_t>(literal, i);
    case 2:
      return StepDownAs<uint16_t>(literal, i);
    case 4:
      return StepDownAs<uint32_t>(literal, i);
    default:
      return StepDownAs<uint64_t>(literal, i);
  }
}

}  // namespace

Result<Literal> EvaluateRng(const ir::Instruction& instruction, const Operands& operands,
                            EvalContext& context) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 2));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const ir::Shape& shape = instruction.shape();
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  if (!shape.IsArray() || a.shape().rank() != 0 || b.shape().rank() != 0 ||
      a.shape().dtype() != shape.dtype() || b.shape().dtype() != shape.dtype()) {
    return InvalidArgument("rng needs two scalar parameters of the result's element type");
  }
  const ir::DType dtype = shape.dtype();
  const bool floating = ir::IsFloating(dtype);
  const bool normal = instruction.attributes().distribution == ir::RandomDistribution::kNormal;
  if ((!floating && !ir::IsInteger(dtype)) || (normal && !floating)) {
    return InvalidArgument("rng {} is not defined on element type {}",
                           normal ? "rng_normal" : "rng_uniform", ir::DTypeName(dtype));
  }
  const uint64_t stream = SplitMix64(context.rng_counter++);
  Literal out = Literal::CreateZeros(shape);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const uint64_t bits = SplitMix64(stream + 2 * static_cast<uint64_t>(i));
    if (normal) {
      const double u1 = 1.0 - ToUnit(bits);  // (0, 1]: log stays finite
      const double u2 = ToUnit(SplitMix64(stream + 2 * static_cast<uint64_t>(i) + 1));
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      out.SetDouble(i, a.GetDouble(0) + b.GetDouble(0) * z);
    } else if (floating) {
      const double lo = a.GetDouble(0);
      const double hi = b.GetDouble(0);
      out.SetDouble(i, lo + (hi - lo) * ToUnit(bits));
      // lo + (hi - lo) u < hi in f64, but rounding to a narrower element type can reach hi
      // (always, when hi is lo's neighbour and u >= 1/2); the range is [lo, hi), so step down.
      if (hi > lo && out.GetDouble(i) >= hi) StepDown(out, i);
    } else {
      const int64_t lo = a.GetInt(0);
      const int64_t hi = b.GetInt(0);
      const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
      out.SetInt(i, hi <= lo ? lo : static_cast<int64_t>(static_cast<uint64_t>(lo) + bits % range));
    }
  }
  return out;
}

Result<Literal> EvaluateRngBitGenerator(const ir::Instruction& instruction,
                                        const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& state = *operands[0];
  const ir::Shape& shape = instruction.shape();
  if (state.shape().dtype() != ir::DType::kU64 || state.shape().rank() != 1 ||
      state.element_count() < 1 || !shape.IsTuple() || shape.tuple_size() != 2 ||
      !shape.tuple_shape(0).Compatible(state.shape()) || !shape.tuple_shape(1).IsArray()) {
    return InvalidArgument("rng-bit-generator needs a u64[n] state and gives (u64[n], bits)");
  }
  Literal bits = Literal::CreateZeros(shape.tuple_shape(1));
  const uint64_t* words = state.typed_data<uint64_t>();
  const int64_t last = state.element_count() - 1;
  const int64_t bytes = bits.size_bytes();
  const int64_t count = (bytes + 7) / 8;
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t word = SplitMix64(words[0] ^ SplitMix64(words[last] + static_cast<uint64_t>(i)));
    const int64_t n = std::min<int64_t>(8, bytes - 8 * i);
    std::memcpy(bits.data() + 8 * i, &word, static_cast<size_t>(n));
  }
  Literal new_state = state;
  new_state.typed_data<uint64_t>()[last] += static_cast<uint64_t>(count);
  std::vector<Literal> elements;
  elements.push_back(std::move(new_state));
  elements.push_back(std::move(bits));
  return Literal::CreateTuple(std::move(elements));
}

}  // namespace alpa::interp::internal
