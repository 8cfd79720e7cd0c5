#include "interp/random_inputs.h"

#include <fmt/format.h>

#include <cmath>
#include <complex>

namespace alpa::interp {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a fixed, portable mixing function.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) from the top 53 bits.
double Signed(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0; }

constexpr uint64_t kFnvOffset = 0xCBF29CE484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001B3ull;

uint64_t Fnv1a(uint64_t hash, const std::byte* data, int64_t size) {
  for (int64_t i = 0; i < size; ++i) {
    hash ^= static_cast<uint64_t>(data[i]);
    hash *= kFnvPrime;
  }
  return hash;
}

void Accumulate(const ir::Literal& literal, Checksum& checksum) {
  const ir::Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    for (const ir::Literal& element : literal.tuple_elements()) Accumulate(element, checksum);
    return;
  }
  const std::string text = shape.ToString(false);
  checksum.hash = Fnv1a(checksum.hash, reinterpret_cast<const std::byte*>(text.data()),
                        static_cast<int64_t>(text.size()));
  if (!shape.IsArray() || literal.is_elided()) return;
  checksum.hash = Fnv1a(checksum.hash, literal.data(), literal.size_bytes());
  const bool complex = ir::IsComplex(shape.dtype());
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (complex) {
      const std::complex<double> z = literal.GetComplex(i);
      checksum.sum += z.real() + z.imag();
      checksum.abs_sum += std::fabs(z.real()) + std::fabs(z.imag());
    } else {
      const double value = literal.GetDouble(i);
      checksum.sum += value;
      checksum.abs_sum += std::fabs(value);
    }
  }
  checksum.count += literal.element_count();
}

}  // namespace

ir::Literal RandomLiteral(const ir::Shape& shape, uint64_t seed) {
  if (shape.IsTuple()) {
    std::vector<ir::Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      elements.push_back(RandomLiteral(shape.tuple_shape(i), Mix(seed ^ Mix(i + 1))));
    }
    return ir::Literal::CreateTuple(std::move(elements));
  }
  ir::Literal literal = ir::Literal::CreateZeros(shape);
  if (!shape.IsArray()) return literal;
  const ir::DType dtype = shape.dtype();
  const uint64_t stream = Mix(seed);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const uint64_t bits = Mix(stream + 2 * static_cast<uint64_t>(i));
    if (ir::IsComplex(dtype)) {
      literal.SetComplex(i, {Signed(bits), Signed(Mix(stream + 2 * static_cast<uint64_t>(i) + 1))});
    } else if (ir::IsFloating(dtype)) {
      literal.SetDouble(i, Signed(bits));
    } else if (dtype == ir::DType::kPred) {
      literal.SetInt(i, static_cast<int64_t>(bits >> 63));
    } else if (ir::IsInteger(dtype)) {
      literal.SetInt(i, static_cast<int64_t>(bits >> 61));  // top 3 bits: [0, 8)
    }
  }
  return literal;
}

std::vector<ir::Literal> RandomArguments(const ir::Computation& computation, uint64_t seed) {
  std::vector<ir::Literal> arguments;
  const std::vector<ir::Instruction*> parameters = computation.parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    const ir::Shape shape = parameters[i] != nullptr ? parameters[i]->shape() : ir::Shape();
    arguments.push_back(RandomLiteral(shape, Mix(seed) ^ Mix(Mix(i))));
  }
  return arguments;
}

std::string Checksum::ToString() const {
  return fmt::format("count={} sum={:.17g} abs_sum={:.17g} hash={:016x}", count, sum, abs_sum,
                     hash);
}

Checksum ComputeChecksum(const ir::Literal& literal) {
  Checksum checksum;
  checksum.hash = kFnvOffset;
  Accumulate(literal, checksum);
  return checksum;
}

}  // namespace alpa::interp
