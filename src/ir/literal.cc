#include "ir/literal.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <cmath>
#include <cstring>

namespace alpa::ir {
namespace {

using Half = Eigen::half;
using BFloat16 = Eigen::bfloat16;

template <typename T>
T Load(const std::byte* data, int64_t index) {
  T value;
  std::memcpy(&value, data + index * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return value;
}

template <typename T>
void Store(std::byte* data, int64_t index, T value) {
  std::memcpy(data + index * static_cast<int64_t>(sizeof(T)), &value, sizeof(T));
}

// Shortest text that reads back to the same value of the element type (`0.1`, `-inf`, `nan`).
std::string FormatFloat(double value, DType dtype) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (dtype == DType::kF64) return fmt::format("{}", value);
  return fmt::format("{}", static_cast<float>(value));
}

std::string FormatElement(const Literal& literal, int64_t index) {
  DType dtype = literal.shape().dtype();
  if (dtype == DType::kPred) return literal.GetInt(index) ? "true" : "false";
  if (IsComplex(dtype)) {
    std::complex<double> c = literal.GetComplex(index);
    DType part = dtype == DType::kC64 ? DType::kF32 : DType::kF64;
    return fmt::format("({}, {})", FormatFloat(c.real(), part), FormatFloat(c.imag(), part));
  }
  if (IsFloating(dtype)) return FormatFloat(literal.GetDouble(index), dtype);
  if (dtype == DType::kU64) return fmt::format("{}", static_cast<uint64_t>(literal.GetInt(index)));
  return fmt::format("{}", literal.GetInt(index));
}

// XLA's layout of array literal text: rank 1 `{1, 2}`, higher ranks `{ { 1, 2 }, { 3, 4 } }`.
void FormatArray(const Literal& literal, int64_t dim, int64_t& index, std::string& out) {
  const Shape& shape = literal.shape();
  if (dim == shape.rank()) {
    out += FormatElement(literal, index++);
    return;
  }
  const bool innermost = dim + 1 == shape.rank();
  out += innermost ? "{" : "{ ";
  for (int64_t i = 0; i < shape.dim(dim); ++i) {
    if (i > 0) out += ", ";
    FormatArray(literal, dim + 1, index, out);
  }
  out += innermost ? "}" : " }";
}

// Every array element zero (false for pred), tuples recursively.
void ZeroFill(Literal& literal) {
  if (literal.size_bytes() > 0)
    std::memset(literal.data(), 0, static_cast<size_t>(literal.size_bytes()));
  for (Literal& element : literal.tuple_elements()) ZeroFill(element);
}

}  // namespace

Literal Literal::CreateZeros(const Shape& shape) {
  Literal literal = CreateUninitialized(shape);
  ZeroFill(literal);
  return literal;
}

Literal Literal::CreateUninitialized(const Shape& shape) {
  Literal literal;
  literal.shape_ = shape;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      literal.elements_.push_back(CreateUninitialized(element));
    }
  } else if (shape.IsArray()) {
    literal.bytes_.resize(static_cast<size_t>(shape.ByteSize()));
  }
  return literal;
}

Literal Literal::CreateElided(const Shape& shape) {
  Literal literal;
  literal.shape_ = shape;
  literal.elided_ = true;
  return literal;
}

Literal Literal::CreateTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& element : elements) shapes.push_back(element.shape());
  Literal literal;
  literal.shape_ = Shape::Tuple(std::move(shapes));
  literal.elements_ = std::move(elements);
  return literal;
}

Literal Literal::FromDoubles(const Shape& shape, const std::vector<double>& values) {
  Literal literal = CreateZeros(shape);
  ALPA_CHECK(static_cast<int64_t>(values.size()) == shape.ElementCount(), "{} values for shape {}",
             values.size(), shape.ToString());
  for (size_t i = 0; i < values.size(); ++i) literal.SetDouble(static_cast<int64_t>(i), values[i]);
  return literal;
}

Literal Literal::FromInts(const Shape& shape, const std::vector<int64_t>& values) {
  Literal literal = CreateZeros(shape);
  ALPA_CHECK(static_cast<int64_t>(values.size()) == shape.ElementCount(), "{} values for shape {}",
             values.size(), shape.ToString());
  for (size_t i = 0; i < values.size(); ++i) literal.SetInt(static_cast<int64_t>(i), values[i]);
  return literal;
}

double Literal::GetDouble(int64_t index) const {
  ALPA_CHECK(!elided_, "reading an elided constant");
  const std::byte* p = data();
  switch (shape_.dtype()) {
    case DType::kF16:
      return static_cast<float>(Load<Half>(p, index));
    case DType::kBF16:
      return static_cast<float>(Load<BFloat16>(p, index));
    case DType::kF32:
      return Load<float>(p, index);
    case DType::kF64:
      return Load<double>(p, index);
    case DType::kC64:
    case DType::kC128:
      return GetComplex(index).real();
    case DType::kU64:
      return static_cast<double>(static_cast<uint64_t>(GetInt(index)));
    default:
      return static_cast<double>(GetInt(index));
  }
}

void Literal::SetDouble(int64_t index, double value) {
  std::byte* p = data();
  switch (shape_.dtype()) {
    case DType::kF16:
      return Store(p, index, Half(static_cast<float>(value)));
    case DType::kBF16:
      return Store(p, index, BFloat16(static_cast<float>(value)));
    case DType::kF32:
      return Store(p, index, static_cast<float>(value));
    case DType::kF64:
      return Store(p, index, value);
    case DType::kC64:
    case DType::kC128:
      return SetComplex(index, {value, 0.0});
    case DType::kPred:
      return SetInt(index, value != 0.0 ? 1 : 0);
    case DType::kU64:
      return SetInt(index, static_cast<int64_t>(static_cast<uint64_t>(value)));
    default:
      return SetInt(index, static_cast<int64_t>(value));
  }
}

int64_t Literal::GetInt(int64_t index) const {
  ALPA_CHECK(!elided_, "reading an elided constant");
  const std::byte* p = data();
  switch (shape_.dtype()) {
    case DType::kPred:
      return Load<uint8_t>(p, index) != 0;
    case DType::kS4:
    case DType::kS8:
      return Load<int8_t>(p, index);
    case DType::kS16:
      return Load<int16_t>(p, index);
    case DType::kS32:
      return Load<int32_t>(p, index);
    case DType::kS64:
      return Load<int64_t>(p, index);
    case DType::kU4:
    case DType::kU8:
      return Load<uint8_t>(p, index);
    case DType::kU16:
      return Load<uint16_t>(p, index);
    case DType::kU32:
      return Load<uint32_t>(p, index);
    case DType::kU64:
      return static_cast<int64_t>(Load<uint64_t>(p, index));
    default:
      return static_cast<int64_t>(GetDouble(index));
  }
}

void Literal::SetInt(int64_t index, int64_t value) {
  std::byte* p = data();
  switch (shape_.dtype()) {
    case DType::kPred:
      return Store<uint8_t>(p, index, value != 0);
    case DType::kS4:
    case DType::kS8:
      return Store(p, index, static_cast<int8_t>(value));
    case DType::kS16:
      return Store(p, index, static_cast<int16_t>(value));
    case DType::kS32:
      return Store(p, index, static_cast<int32_t>(value));
    case DType::kS64:
      return Store(p, index, value);
    case DType::kU4:
    case DType::kU8:
      return Store(p, index, static_cast<uint8_t>(value));
    case DType::kU16:
      return Store(p, index, static_cast<uint16_t>(value));
    case DType::kU32:
      return Store(p, index, static_cast<uint32_t>(value));
    case DType::kU64:
      return Store(p, index, static_cast<uint64_t>(value));
    default:
      return SetDouble(index, static_cast<double>(value));
  }
}

std::complex<double> Literal::GetComplex(int64_t index) const {
  ALPA_CHECK(!elided_, "reading an elided constant");
  switch (shape_.dtype()) {
    case DType::kC64: {
      auto c = Load<std::complex<float>>(data(), index);
      return {c.real(), c.imag()};
    }
    case DType::kC128:
      return Load<std::complex<double>>(data(), index);
    default:
      return {GetDouble(index), 0.0};
  }
}

void Literal::SetComplex(int64_t index, std::complex<double> value) {
  switch (shape_.dtype()) {
    case DType::kC64:
      return Store(
          data(), index,
          std::complex<float>(static_cast<float>(value.real()), static_cast<float>(value.imag())));
    case DType::kC128:
      return Store(data(), index, value);
    default:
      return SetDouble(index, value.real());
  }
}

bool Literal::operator==(const Literal& other) const {
  return shape_.Compatible(other.shape_) && elided_ == other.elided_ && bytes_ == other.bytes_ &&
         elements_ == other.elements_;
}

std::string Literal::ToString() const {
  if (elided_) return "{...}";
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i > 0) out += ", ";
      out += elements_[i].ToString();
    }
    return out + ")";
  }
  if (!shape_.IsArray()) return "";
  std::string out;
  int64_t index = 0;
  FormatArray(*this, 0, index, out);
  return out;
}

}  // namespace alpa::ir
