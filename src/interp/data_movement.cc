// Data movement: broadcast, reshape/bitcast, transpose, slice, reverse, concatenate, pad, iota.
//
// Broadcast, transpose, slice and reverse are one strided copy: out[o] = in[base + sum o_d * s_d],
// with s_d = 0 for broadcast dimensions, the permuted operand strides for transpose, the operand
// stride times the slice stride for slice, and a negated stride (base at the far end) for reverse.
#include <cstring>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

template <int kBytes>
void StridedCopyImpl(const std::byte* in, int64_t base, const std::vector<int64_t>& strides,
                     const std::vector<int64_t>& dims, std::byte* out) {
  if (dims.empty()) {
    std::memcpy(out, in + base * kBytes, kBytes);
    return;
  }
  const int64_t inner = dims.back();
  const int64_t inner_stride = strides.back();
  std::vector<int64_t> outer_dims(dims.begin(), dims.end() - 1);
  std::vector<int64_t> outer_strides(strides.begin(), strides.end() - 1);
  std::vector<int64_t> index(outer_dims.size(), 0);
  int64_t written = 0;
  do {
    const std::byte* src = in + (base + Dot(index, outer_strides)) * kBytes;
    for (int64_t i = 0; i < inner; ++i) {
      std::memcpy(out + (written + i) * kBytes, src + i * inner_stride * kBytes, kBytes);
    }
    written += inner;
  } while (NextIndex(index, outer_dims));
}

// A new literal of `shape` with out[o] = in[base + sum o_d * strides[d]].
Literal StridedCopy(const Literal& in, int64_t base, const std::vector<int64_t>& strides,
                    const ir::Shape& shape) {
  Literal out = Literal::CreateZeros(shape);
  if (out.element_count() == 0) return out;
  const std::byte* src = in.data();
  std::byte* dst = out.data();
  switch (ir::DTypeByteSize(shape.dtype())) {
    case 1: StridedCopyImpl<1>(src, base, strides, shape.dims(), dst); break;
    case 2: StridedCopyImpl<2>(src, base, strides, shape.dims(), dst); break;
    case 4: StridedCopyImpl<4>(src, base, strides, shape.dims(), dst); break;
    case 8: StridedCopyImpl<8>(src, base, strides, shape.dims(), dst); break;
    case 16: StridedCopyImpl<16>(src, base, strides, shape.dims(), dst); break;
    default: ALPA_CHECK(false, "element size of {}", shape.ToString());
  }
  return out;
}

Status ExpectArrayResult(const ir::Instruction& instruction, const Literal& operand) {
  const ir::Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.dtype() != operand.shape().dtype()) {
    return InvalidArgument("result {} must be an array of the operand's element type ({})",
                           shape.ToString(false), operand.shape().ToString(false));
  }
  return Status::Ok();
}

Status CheckOperandAndResult(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 1));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  return ExpectArrayResult(instruction, *operands[0]);
}

}  // namespace

Literal Permute(const Literal& input, const std::vector<int64_t>& permutation) {
  const std::vector<int64_t>& dims = input.shape().dims();
  ALPA_CHECK(permutation.size() == dims.size(), "permutation of rank {}", dims.size());
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) identity &= permutation[i] == static_cast<int64_t>(i);
  if (identity) return input;
  const std::vector<int64_t> in_strides = ir::RowMajorStrides(dims);
  std::vector<int64_t> out_dims, strides;
  for (int64_t p : permutation) {
    out_dims.push_back(dims[static_cast<size_t>(p)]);
    strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  return StridedCopy(input, 0, strides, ir::Shape::Array(input.shape().dtype(), out_dims));
}

Result<Literal> EvaluateBroadcast(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(CheckOperandAndResult(instruction, operands));
  const Literal& in = *operands[0];
  const ir::Shape& shape = instruction.shape();
  const std::vector<int64_t>& dimensions = instruction.attributes().dimensions;
  if (static_cast<int64_t>(dimensions.size()) != in.shape().rank()) {
    return InvalidArgument("dimensions has {} entries for an operand of rank {}",
                           dimensions.size(), in.shape().rank());
  }
  std::vector<int64_t> in_strides = ir::RowMajorStrides(in.shape().dims());
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 0);
  for (size_t i = 0; i < dimensions.size(); ++i) {
    const int64_t d = dimensions[i];
    if (d < 0 || d >= shape.rank() || shape.dim(d) != in.shape().dim(static_cast<int64_t>(i))) {
      return InvalidArgument("operand dimension {} maps to result dimension {} of {}", i, d,
                             shape.ToString(false));
    }
    strides[static_cast<size_t>(d)] = in_strides[i];
  }
  return StridedCopy(in, 0, strides, shape);
}

Result<Literal> EvaluateReshape(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(CheckOperandAndResult(instruction, operands));
  const Literal& in = *operands[0];
  if (instruction.shape().ElementCount() != in.element_count()) {
    return InvalidArgument("cannot reshape {} ({} elements) to {}", in.shape().ToString(false),
                           in.element_count(), instruction.shape().ToString(false));
  }
  Literal out = Literal::CreateZeros(instruction.shape());
  if (out.size_bytes() > 0) {
    std::memcpy(out.data(), in.data(), static_cast<size_t>(out.size_bytes()));
  }
  return out;
}

// Result dimension i is operand dimension dimensions[i].
Result<Literal> EvaluateTranspose(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(CheckOperandAndResult(instruction, operands));
  const Literal& in = *operands[0];
  const ir::Shape& shape = instruction.shape();
  const std::vector<int64_t>& permutation = instruction.attributes().dimensions;
  if (static_cast<int64_t>(permutation.size()) != in.shape().rank() ||
      shape.rank() != in.shape().rank()) {
    return InvalidArgument("dimensions must permute the {} operand dimensions",
                           in.shape().rank());
  }
  std::vector<int64_t> in_strides = ir::RowMajorStrides(in.shape().dims());
  std::vector<int64_t> strides(permutation.size());
  std::vector<bool> seen(permutation.size(), false);
  for (size_t i = 0; i < permutation.size(); ++i) {
    const int64_t p = permutation[i];
    if (p < 0 || p >= in.shape().rank() || seen[static_cast<size_t>(p)] ||
        shape.dim(static_cast<int64_t>(i)) != in.shape().dim(p)) {
      return InvalidArgument("dimensions is not a permutation giving {} from {}",
                             shape.ToString(false), in.shape().ToString(false));
    }
    seen[static_cast<size_t>(p)] = true;
    strides[i] = in_strides[static_cast<size_t>(p)];
  }
  return StridedCopy(in, 0, strides, shape);
}

Result<Literal> EvaluateSlice(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(CheckOperandAndResult(instruction, operands));
  const Literal& in = *operands[0];
  const ir::Shape& shape = instruction.shape();
  const std::vector<ir::SliceDim>& slice = instruction.attributes().slice;
  if (static_cast<int64_t>(slice.size()) != in.shape().rank() || shape.rank() != in.shape().rank()) {
    return InvalidArgument("slice has {} dimensions for an operand of rank {}", slice.size(),
                           in.shape().rank());
  }
  std::vector<int64_t> in_strides = ir::RowMajorStrides(in.shape().dims());
  std::vector<int64_t> strides(slice.size());
  int64_t base = 0;
  for (size_t i = 0; i < slice.size(); ++i) {
    const ir::SliceDim& s = slice[i];
    const int64_t dim = in.shape().dim(static_cast<int64_t>(i));
    const int64_t size = s.stride > 0 ? (s.limit - s.start + s.stride - 1) / s.stride : -1;
    if (s.stride <= 0 || s.start < 0 || s.limit > dim || s.start > s.limit ||
        shape.dim(static_cast<int64_t>(i)) != size) {
      return InvalidArgument("slice [{}:{}:{}] of dimension {} (size {}) does not give size {}",
                             s.start, s.limit, s.stride, i, dim,
                             shape.dim(static_cast<int64_t>(i)));
    }
    base += s.start * in_strides[i];
    strides[i] = in_strides[i] * s.stride;
  }
  return StridedCopy(in, base, strides, shape);
}

Result<Literal> EvaluateReverse(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(CheckOperandAndResult(instruction, operands));
  const Literal& in = *operands[0];
  if (!instruction.shape().Compatible(in.shape())) {
    return InvalidArgument("result {} differs from operand {}",
                           instruction.shape().ToString(false), in.shape().ToString(false));
  }
  std::vector<int64_t> strides = ir::RowMajorStrides(in.shape().dims());
  int64_t base = 0;
  for (int64_t d : instruction.attributes().dimensions) {
    if (d < 0 || d >= in.shape().rank()) {
      return InvalidArgument("dimension {} out of range for {}", d, in.shape().ToString(false));
    }
    if (in.shape().dim(d) == 0) continue;
    base += (in.shape().dim(d) - 1) * strides[static_cast<size_t>(d)];
    strides[static_cast<size_t>(d)] = -strides[static_cast<size_t>(d)];
  }
  return StridedCopy(in, base, strides, instruction.shape());
}

// Viewing each operand as [outer, dim_d * inner], the result row `o` is the operands' rows `o`
// side by side.
Result<Literal> EvaluateConcatenate(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const ir::Shape& shape = instruction.shape();
  if (operands.empty()) return InvalidArgument("concatenate needs at least one operand");
  ALPA_RETURN_IF_ERROR(ExpectArrayResult(instruction, *operands[0]));
  if (instruction.attributes().dimensions.size() != 1) {
    return InvalidArgument("concatenate needs exactly one dimension in dimensions={{...}}");
  }
  const int64_t d = instruction.attributes().dimensions[0];
  if (d < 0 || d >= shape.rank()) return InvalidArgument("dimension {} out of range", d);
  int64_t total = 0;
  for (const Literal* operand : operands) {
    const ir::Shape& s = operand->shape();
    bool fits = s.dtype() == shape.dtype() && s.rank() == shape.rank();
    for (int64_t i = 0; fits && i < s.rank(); ++i) fits = i == d || s.dim(i) == shape.dim(i);
    if (!fits) {
      return InvalidArgument("operand {} does not fit result {} along dimension {}",
                             s.ToString(false), shape.ToString(false), d);
    }
    total += s.dim(d);
  }
  if (total != shape.dim(d)) {
    return InvalidArgument("operands add up to {} along dimension {}, result has {}", total, d,
                           shape.dim(d));
  }
  int64_t outer = 1;
  for (int64_t i = 0; i < d; ++i) outer *= shape.dim(i);
  const int64_t row_bytes = shape.ElementCount() == 0 ? 0 : shape.ByteSize() / outer;
  Literal out = Literal::CreateZeros(shape);
  std::byte* dst = out.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Literal* operand : operands) {
      const int64_t bytes = operand->element_count() == 0 ? 0 : operand->size_bytes() / outer;
      if (bytes > 0) std::memcpy(dst, operand->data() + o * bytes, static_cast<size_t>(bytes));
      dst += bytes;
    }
  }
  ALPA_CHECK(dst - out.data() == outer * row_bytes, "concatenate wrote a wrong byte count");
  return out;
}

// Operand element i lands at low + i * (interior + 1) in each dimension; positions outside the
// result (negative low/high crop) are dropped, everything else is the padding value.
Result<Literal> EvaluatePad(const ir::Instruction& instruction, const Operands& operands) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, 2));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  const Literal& in = *operands[0];
  const Literal& value = *operands[1];
  ALPA_RETURN_IF_ERROR(ExpectArrayResult(instruction, in));
  const ir::Shape& shape = instruction.shape();
  const std::vector<ir::PaddingDim>& padding = instruction.attributes().padding;
  if (value.shape().rank() != 0 || value.shape().dtype() != in.shape().dtype() ||
      static_cast<int64_t>(padding.size()) != in.shape().rank() ||
      shape.rank() != in.shape().rank()) {
    return InvalidArgument("pad needs a scalar padding value of the operand's type and one "
                           "padding entry per dimension");
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    const ir::PaddingDim& p = padding[static_cast<size_t>(i)];
    const int64_t dim = in.shape().dim(i);
    const int64_t size = p.low + p.high + dim + std::max<int64_t>(dim - 1, 0) * p.interior;
    if (p.interior < 0 || size != shape.dim(i)) {
      return InvalidArgument("padding {}_{}_{} of dimension {} (size {}) does not give size {}",
                             p.low, p.high, p.interior, i, dim, shape.dim(i));
    }
  }
  Literal out = Literal::CreateZeros(shape);
  for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(value, 0, out, i);
  if (in.element_count() == 0 || out.element_count() == 0) return out;
  std::vector<int64_t> out_strides = ir::RowMajorStrides(shape.dims());
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
  int64_t linear = 0;
  do {
    int64_t target = 0;
    bool inside = true;
    for (size_t d = 0; d < index.size() && inside; ++d) {
      const ir::PaddingDim& p = padding[d];
      const int64_t position = p.low + index[d] * (p.interior + 1);
      inside = position >= 0 && position < shape.dims()[d];
      target += position * out_strides[d];
    }
    if (inside) CopyElement(in, linear, out, target);
    ++linear;
  } while (NextIndex(index, in.shape().dims()));
  return out;
}

Result<Literal> EvaluateIota(const ir::Instruction& instruction) {
  const ir::Shape& shape = instruction.shape();
  const int64_t d = instruction.attributes().iota_dimension;
  if (!shape.IsArray() || d < 0 || d >= shape.rank()) {
    return InvalidArgument("iota_dimension={} is not a dimension of {}", d, shape.ToString(false));
  }
  Literal out = Literal::CreateZeros(shape);
  const int64_t stride = ir::RowMajorStrides(shape.dims())[static_cast<size_t>(d)];
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const int64_t value = (i / stride) % shape.dim(d);
    if (ir::IsComplex(shape.dtype())) {
      out.SetComplex(i, {static_cast<double>(value), 0.0});
    } else {
      out.SetInt(i, value);
    }
  }
  return out;
}

}  // namespace alpa::interp::internal
