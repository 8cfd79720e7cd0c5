// A value of a Shape: a dense row-major array, or a tuple of literals.
//
// Arrays store elements in their own type (f16 and bf16 as 16-bit values, pred as one byte per
// element). Element accessors convert through double/int64/complex for code that is not
// performance-critical; the interpreter reads typed_data<T>() directly.
#ifndef ALPA_IR_LITERAL_H_
#define ALPA_IR_LITERAL_H_

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/buffer_allocator.h"
#include "ir/shape.h"
#include "support/status.h"

namespace alpa::ir {

class Literal {
 public:
  Literal() = default;  // the empty tuple
  // All elements zero (false for pred); tuples recursively.
  static Literal CreateZeros(const Shape& shape);
  // An array whose bytes are left as the allocator gives them, for kernels that write every
  // element (it saves CreateZeros' pass over memory). Tuples are built of such arrays.
  static Literal CreateUninitialized(const Shape& shape);
  // A constant whose value the HLO printer dropped (`constant({...})`). Reading it is an error.
  static Literal CreateElided(const Shape& shape);
  static Literal CreateTuple(std::vector<Literal> elements);
  // Array literal from values converted to the shape's element type (row-major order).
  static Literal FromDoubles(const Shape& shape, const std::vector<double>& values);
  static Literal FromInts(const Shape& shape, const std::vector<int64_t>& values);
  static Literal Scalar(DType dtype, double value) {
    return FromDoubles(Shape::Scalar(dtype), {value});
  }

  const Shape& shape() const { return shape_; }
  bool is_elided() const { return elided_; }

  const std::vector<Literal>& tuple_elements() const { return elements_; }
  std::vector<Literal>& tuple_elements() { return elements_; }
  const Literal& tuple_element(int64_t i) const { return elements_[static_cast<size_t>(i)]; }
  Literal& tuple_element(int64_t i) { return elements_[static_cast<size_t>(i)]; }

  // Raw storage of an array literal, row-major.
  std::byte* data() { return bytes_.data(); }
  const std::byte* data() const { return bytes_.data(); }
  int64_t size_bytes() const { return static_cast<int64_t>(bytes_.size()); }
  int64_t element_count() const { return shape_.ElementCount(); }
  template <typename T>
  T* typed_data() {
    ALPA_CHECK(sizeof(T) == static_cast<size_t>(DTypeByteSize(shape_.dtype())),
               "typed_data size mismatch for {}", shape_.ToString());
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T>
  const T* typed_data() const {
    return const_cast<Literal*>(this)->typed_data<T>();
  }

  // Element `index` (row-major linear index) converted. Complex reads give the real part.
  double GetDouble(int64_t index) const;
  void SetDouble(int64_t index, double value);
  int64_t GetInt(int64_t index) const;  // floats truncate toward zero, pred is 0/1
  void SetInt(int64_t index, int64_t value);
  std::complex<double> GetComplex(int64_t index) const;
  void SetComplex(int64_t index, std::complex<double> value);

  // Same shape (layouts ignored), same elision and same bytes.
  bool operator==(const Literal& other) const;

  // The value in HLO text: `1.5`, `{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`, `(1, {2, 3})`, `{...}`.
  std::string ToString() const;

 private:
  Shape shape_;
  bool elided_ = false;
  std::vector<std::byte, BufferAllocator<std::byte>> bytes_;
  std::vector<Literal> elements_;
};

}  // namespace alpa::ir

#endif  // ALPA_IR_LITERAL_H_
