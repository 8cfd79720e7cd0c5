// Shapes: an array (element type + dimensions + optional layout), a tuple of shapes, or a token.
//
// Layouts are parsed and kept so that HLO text round-trips, but nothing interprets them: every
// array in this project is stored row-major (dimension 0 most major).
#ifndef ALPA_IR_SHAPE_H_
#define ALPA_IR_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace alpa::ir {

struct Layout {
  std::vector<int64_t> minor_to_major;
  // Everything after ':' inside the braces (tiling `T(8,128)`, memory space `S(1)`, ...), verbatim.
  std::string extra;

  bool operator==(const Layout&) const = default;
};

class Shape {
 public:
  Shape() = default;  // an empty tuple
  static Shape Array(DType dtype, std::vector<int64_t> dims);
  static Shape Scalar(DType dtype) { return Array(dtype, {}); }
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token() { return Array(DType::kToken, {}); }

  bool IsTuple() const { return is_tuple_; }
  // An array of a data type (not a token, opaque or tuple).
  bool IsArray() const { return !is_tuple_ && IsArrayDType(dtype_); }
  bool IsToken() const { return !is_tuple_ && dtype_ == DType::kToken; }

  // Array accessors; a tuple has no dtype or dims.
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t ElementCount() const;

  // Bounded dynamic dimensions (`f32[<=10]`): the bound is dims()[i].
  bool is_dynamic_dim(int64_t i) const;
  void set_dynamic_dim(int64_t i, bool dynamic);

  const std::optional<Layout>& layout() const { return layout_; }
  void set_layout(std::optional<Layout> layout) { layout_ = std::move(layout); }
  // Drops layouts here and in every tuple element.
  void ClearLayouts();

  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  const Shape& tuple_shape(int64_t i) const { return tuple_shapes_[static_cast<size_t>(i)]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  // Bytes of all array leaves (element count x element size).
  int64_t ByteSize() const;
  // Number of array leaves.
  int64_t LeafCount() const;

  // Same type and dims (and tuple structure); layouts ignored. This is what shape rules check.
  bool Compatible(const Shape& other) const;
  bool operator==(const Shape& other) const = default;

  // HLO text: `f32[8,16]{1,0}`, `(f32[], s32[4])`, `token[]`.
  std::string ToString(bool print_layout = true) const;

 private:
  bool is_tuple_ = true;
  DType dtype_ = DType::kToken;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_dims_;  // empty when no dim is dynamic
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
};

// The signature of a computation: parameter shapes and result shape.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;

  bool operator==(const ProgramShape&) const = default;
  // `(f32[8], s32[])->f32[8]`
  std::string ToString(bool print_layout = true) const;
};

// Row-major strides of `dims` in elements: stride[i] = prod(dims[i+1:]).
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace alpa::ir

#endif  // ALPA_IR_SHAPE_H_
