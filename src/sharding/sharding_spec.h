// How one tensor is laid out over the devices of an N-D logical mesh.
//
// For every tensor dimension, the ordered list of mesh axes it is split over (major first); the
// axes over which each device holds a partial sum still to be reduced (a dot whose contracting
// dimension is split leaves its result partial); every other mesh axis replicates the tensor.
//
// Tiles: a dimension of size n split over axes (a, b) of a mesh of shape M is cut into
// M[a] * M[b] tiles of ceil(n / (M[a] * M[b])) elements (the last ones padded, as GSPMD does);
// the device at mesh coordinates c holds tile c[a] * M[b] + c[b] of that dimension.
//
// Examples on a (2, 4) mesh, in the notation of ToString (Alpa's, extended to N-D):
//   [S0,R]        dim 0 split over axis 0, replicated over axis 1
//   [S01,R]       dim 0 split over both axes (8 tiles)
//   [R,S1]        dim 1 split over axis 1 (Megatron's column split of a weight)
//   [R,R] P1      replicated values that are partial sums over axis 1
#ifndef ALPA_SHARDING_SHARDING_SPEC_H_
#define ALPA_SHARDING_SHARDING_SPEC_H_

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"

namespace alpa::sharding {

struct ShardingSpec {
  // dim_axes[d]: the mesh axes dimension d is split over, major first; empty: not split.
  std::vector<std::vector<int64_t>> dim_axes;
  // Axes over which the tensor is a pending sum, ascending.
  std::vector<int64_t> partial_axes;

  static ShardingSpec Replicated(int64_t rank);
  // Dimension `dim` split over `axes`, every other dimension whole.
  static ShardingSpec SplitDim(int64_t rank, int64_t dim, std::vector<int64_t> axes);

  int64_t rank() const { return static_cast<int64_t>(dim_axes.size()); }
  bool IsFullyReplicated() const;  // nothing split, nothing partial
  // The tensor dimension an axis splits, or -1 when the axis splits none.
  int64_t DimOfAxis(int64_t axis) const;
  bool IsPartialOver(int64_t axis) const;
  // Axes of a mesh of rank `mesh_rank` that neither split a dimension nor are partial, ascending.
  std::vector<int64_t> ReplicatedAxes(int64_t mesh_rank) const;

  friend auto operator<=>(const ShardingSpec&, const ShardingSpec&) = default;
  friend bool operator==(const ShardingSpec&, const ShardingSpec&) = default;
};

// Checks `spec` against a mesh shape and the tensor's dimensions: one entry per dimension, axes in
// range, every axis used at most once (across dimensions and partial axes), and no dimension cut
// into more tiles than it has elements. The message names the dimension or axis.
Status CheckSpec(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape,
                 const std::vector<int64_t>& tensor_dims);

// Number of tiles dimension `dim` is cut into: the product of its axes' sizes.
int64_t TileCount(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape, int64_t dim);
// Dimensions of the tile one device holds: ceil(n / tiles) per dimension.
std::vector<int64_t> ShardDims(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape,
                               const std::vector<int64_t>& tensor_dims);

// "[S0,R]", "[S01,R] P1"; an axis of 10 or more is written in parentheses: "S(10)".
std::string ToString(const ShardingSpec& spec);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_SHARDING_SPEC_H_
