#include "kernels/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "kernels/parallel_for.h"

namespace alpa::kernels {
namespace {

// An element of N bytes; copying one is a single load and store.
template <int N>
struct Element {
  std::byte bytes[N];
};

// The view with size-1 dimensions dropped and mergeable neighbours merged: d and d + 1 merge when
// stepping d by one equals stepping d + 1 by its whole extent in both views.
StridedView Canonical(const StridedView& view) {
  StridedView out;
  for (size_t d = 0; d < view.dims.size(); ++d) {
    if (view.dims[d] == 1) continue;
    if (!out.dims.empty() && out.in_strides.back() == view.in_strides[d] * view.dims[d] &&
        out.out_strides.back() == view.out_strides[d] * view.dims[d]) {
      out.dims.back() *= view.dims[d];
      out.in_strides.back() = view.in_strides[d];
      out.out_strides.back() = view.out_strides[d];
      continue;
    }
    out.dims.push_back(view.dims[d]);
    out.in_strides.push_back(view.in_strides[d]);
    out.out_strides.push_back(view.out_strides[d]);
  }
  if (out.dims.empty()) out = {{1}, {0}, {0}};
  return out;
}

// One innermost row: `length` elements from `in` (stride `in_stride`) to `out` (`out_stride`).
template <int N>
void CopyRow(const Element<N>* in, int64_t in_stride, Element<N>* out, int64_t out_stride,
             int64_t length) {
  if (in_stride == 1 && out_stride == 1) {
    std::memcpy(out, in, static_cast<size_t>(length) * N);
  } else if (in_stride == 0 && out_stride == 1) {
    std::fill(out, out + length, *in);
  } else {
    for (int64_t i = 0; i < length; ++i) out[i * out_stride] = in[i * in_stride];
  }
}

// The offsets in both views of outer index `linear` over the first `rank` dimensions.
void OffsetsOf(const StridedView& view, size_t rank, int64_t linear, int64_t& in_offset,
               int64_t& out_offset) {
  in_offset = 0;
  out_offset = 0;
  for (size_t d = rank; d-- > 0;) {
    const int64_t index = linear % view.dims[d];
    linear /= view.dims[d];
    in_offset += index * view.in_strides[d];
    out_offset += index * view.out_strides[d];
  }
}

int64_t Product(const std::vector<int64_t>& dims, size_t rank) {
  int64_t product = 1;
  for (size_t d = 0; d < rank; ++d) product *= dims[d];
  return product;
}

// Rows: the innermost dimension is one CopyRow; rows split over the team.
template <int N>
void CopyRows(const StridedView& view, const Element<N>* in, Element<N>* out) {
  const size_t outer_rank = view.dims.size() - 1;
  const int64_t length = view.dims.back();
  const int64_t rows_per_chunk = std::max<int64_t>(1, internal::kElementGrain / length);
  internal::ParallelFor(
      Product(view.dims, outer_rank), rows_per_chunk, [&](int64_t begin, int64_t end) {
        // The outer index of row `begin`, then advanced row by row with carries.
        std::vector<int64_t> index(outer_rank, 0);
        int64_t in_offset = 0;
        int64_t out_offset = 0;
        OffsetsOf(view, outer_rank, begin, in_offset, out_offset);
        for (int64_t rest = begin, d = static_cast<int64_t>(outer_rank) - 1; d >= 0; --d) {
          index[static_cast<size_t>(d)] = rest % view.dims[static_cast<size_t>(d)];
          rest /= view.dims[static_cast<size_t>(d)];
        }
        for (int64_t row = begin; row < end; ++row) {
          CopyRow(in + in_offset, view.in_strides.back(), out + out_offset, view.out_strides.back(),
                  length);
          for (size_t d = outer_rank; d-- > 0;) {
            in_offset += view.in_strides[d];
            out_offset += view.out_strides[d];
            if (++index[d] < view.dims[d]) break;
            in_offset -= index[d] * view.in_strides[d];
            out_offset -= index[d] * view.out_strides[d];
            index[d] = 0;
          }
        }
      });
}

// A transpose of the last two dimensions [P, L]: the input dense along P, the output along L.
// Row by row, the input would be read a whole stride apart per element; tile by tile (kTile x
// kTile), the lines read for one output row are still in cache for the next.
template <int N>
void CopyTiles(const StridedView& view, const Element<N>* in, Element<N>* out) {
  constexpr int64_t kTile = 32;
  const size_t rank = view.dims.size();
  const int64_t extent_p = view.dims[rank - 2];
  const int64_t extent_l = view.dims[rank - 1];
  const int64_t in_l = view.in_strides[rank - 1];
  const int64_t out_p = view.out_strides[rank - 2];
  const int64_t tile_rows = (extent_p + kTile - 1) / kTile;
  const int64_t tasks_per_chunk =
      std::max<int64_t>(1, internal::kElementGrain / (kTile * extent_l));
  internal::ParallelFor(Product(view.dims, rank - 2) * tile_rows, tasks_per_chunk,
                        [&](int64_t begin, int64_t end) {
                          for (int64_t task = begin; task < end; ++task) {
                            int64_t in_offset = 0;
                            int64_t out_offset = 0;
                            OffsetsOf(view, rank - 2, task / tile_rows, in_offset, out_offset);
                            const int64_t p0 = task % tile_rows * kTile;
                            const int64_t p1 = std::min(extent_p, p0 + kTile);
                            for (int64_t l0 = 0; l0 < extent_l; l0 += kTile) {
                              const int64_t l1 = std::min(extent_l, l0 + kTile);
                              for (int64_t p = p0; p < p1; ++p) {
                                const Element<N>* from = in + in_offset + p;
                                Element<N>* to = out + out_offset + p * out_p;
                                for (int64_t l = l0; l < l1; ++l) to[l] = from[l * in_l];
                              }
                            }
                          }
                        });
}

template <int N>
void CopyView(const StridedView& view, const Element<N>* in, Element<N>* out) {
  const size_t rank = view.dims.size();
  const bool transposes_last_two = rank >= 2 && view.in_strides[rank - 2] == 1 &&
                                   view.out_strides[rank - 1] == 1 &&
                                   view.in_strides[rank - 1] != 1;
  if (transposes_last_two) {
    CopyTiles(view, in, out);
  } else {
    CopyRows(view, in, out);
  }
}

// Calls fn(Element<N>{}) for the element size, or InvalidArgument.
template <typename Fn>
Status VisitElementBytes(int64_t element_bytes, Fn&& fn) {
  switch (element_bytes) {
    case 1:
      fn(Element<1>{});
      return Status::Ok();
    case 2:
      fn(Element<2>{});
      return Status::Ok();
    case 4:
      fn(Element<4>{});
      return Status::Ok();
    case 8:
      fn(Element<8>{});
      return Status::Ok();
    case 16:
      fn(Element<16>{});
      return Status::Ok();
    default:
      return InvalidArgument("elements of {} bytes cannot be copied", element_bytes);
  }
}

}  // namespace

Status StridedCopy(int64_t element_bytes, const StridedView& view, const void* in, void* out) {
  if (view.in_strides.size() != view.dims.size() || view.out_strides.size() != view.dims.size()) {
    return InvalidArgument("a strided copy of rank {} has {} input and {} output strides",
                           view.dims.size(), view.in_strides.size(), view.out_strides.size());
  }
  for (int64_t dim : view.dims) {
    if (dim < 0) return InvalidArgument("a strided copy has a negative dimension {}", dim);
    if (dim == 0) return Status::Ok();
  }
  const StridedView canonical = Canonical(view);
  return VisitElementBytes(element_bytes, [&](auto element) {
    using E = decltype(element);
    CopyView(canonical, static_cast<const E*>(in), static_cast<E*>(out));
  });
}

Status Fill(int64_t element_bytes, const void* value, void* out, int64_t n) {
  return VisitElementBytes(element_bytes, [&](auto element) {
    using E = decltype(element);
    const E fill = *static_cast<const E*>(value);
    E* target = static_cast<E*>(out);
    internal::ParallelFor(n, internal::kElementGrain, [&](int64_t begin, int64_t end) {
      std::fill(target + begin, target + end, fill);
    });
  });
}

}  // namespace alpa::kernels
