#include "ir/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/status.h"

namespace alpa::ir {

Shape Shape::Array(DType dtype, std::vector<int64_t> dims) {
  Shape shape;
  shape.is_tuple_ = false;
  shape.dtype_ = dtype;
  shape.dims_ = std::move(dims);
  return shape;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.tuple_shapes_ = std::move(elements);
  return shape;
}

int64_t Shape::ElementCount() const {
  ALPA_CHECK(!is_tuple_, "ElementCount of tuple shape {}", ToString());
  int64_t count = 1;
  for (int64_t d : dims_) count *= d;
  return count;
}

bool Shape::is_dynamic_dim(int64_t i) const {
  return !dynamic_dims_.empty() && dynamic_dims_[static_cast<size_t>(i)];
}

void Shape::set_dynamic_dim(int64_t i, bool dynamic) {
  if (dynamic_dims_.empty()) {
    if (!dynamic) return;
    dynamic_dims_.assign(dims_.size(), false);
  }
  dynamic_dims_[static_cast<size_t>(i)] = dynamic;
  bool any = false;
  for (bool d : dynamic_dims_) any |= d;
  if (!any) dynamic_dims_.clear();
}

void Shape::ClearLayouts() {
  layout_.reset();
  for (Shape& element : tuple_shapes_) element.ClearLayouts();
}

int64_t Shape::ByteSize() const {
  if (is_tuple_) {
    int64_t total = 0;
    for (const Shape& element : tuple_shapes_) total += element.ByteSize();
    return total;
  }
  return ElementCount() * DTypeByteSize(dtype_);
}

int64_t Shape::LeafCount() const {
  if (!is_tuple_) return 1;
  int64_t total = 0;
  for (const Shape& element : tuple_shapes_) total += element.LeafCount();
  return total;
}

bool Shape::Compatible(const Shape& other) const {
  if (is_tuple_ != other.is_tuple_) return false;
  if (is_tuple_) {
    if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (!tuple_shapes_[i].Compatible(other.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return dtype_ == other.dtype_ && dims_ == other.dims_;
}

std::string Shape::ToString(bool print_layout) const {
  if (is_tuple_) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i > 0) out += ", ";
      out += tuple_shapes_[i].ToString(print_layout);
    }
    return out + ")";
  }
  std::string out = fmt::format("{}[", DTypeName(dtype_));
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ",";
    if (is_dynamic_dim(static_cast<int64_t>(i))) out += "<=";
    out += std::to_string(dims_[i]);
  }
  out += "]";
  if (print_layout && layout_.has_value()) {
    out += fmt::format("{{{}", fmt::join(layout_->minor_to_major, ","));
    if (!layout_->extra.empty()) out += ":" + layout_->extra;
    out += "}";
  }
  return out;
}

std::string ProgramShape::ToString(bool print_layout) const {
  std::string out = "(";
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i > 0) out += ", ";
    out += parameters[i].ToString(print_layout);
  }
  return out + ")->" + result.ToString(print_layout);
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

}  // namespace alpa::ir
