// XLA's sharding annotation (`sharding={...}` on an HLO instruction) as data, its text form, and
// the conversion to and from a ShardingSpec on a logical mesh.
//
// An HloSharding (openxla/xla: xla/hlo/ir/hlo_sharding.h; reference/hlo-text-and-sharding.md 3.1)
// is one of:
//   {replicated}                every device holds the whole tensor
//   {manual}                    the program is already per device (shard_map)
//   {maximal device=3}          one device holds the tensor
//   {devices=[2,1]0,1}          tiled: a tile assignment, an array of devices shaped like the tile
//                               grid (here 2 tiles of dimension 0: device 0 holds the first)
//   {{replicated}, {...}}       a tuple: one sharding per element of a tuple-shaped value
// A tile assignment may have trailing SUBGROUP dimensions beyond the tensor's: the devices along
// one hold the same tile, as copies (`last_tile_dim_replicate`, or `last_tile_dims={replicated}`),
// as manual shards (`manual`) or as partial sums still to be added (`unreduced`):
//   {devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}     tile 0 on devices 0 and 1
//   {devices=[2,1,2,2]<=[8] last_tile_dims={unreduced, replicated}}
// The device array is written as a list, or in the iota form `[dims]<=[reshape]T(perm)`:
// arange(N).reshape(reshape).transpose(perm).reshape(dims); `<=[N]` without T is arange(N).
// E.g. [2,2]<=[2,2]T(1,0) is 0,2,1,3.
//
// The parser reads every form above, skips a `metadata={...}` inside the braces, and keeps the
// device array expanded. The printer writes XLA's spelling and writes the array in the iota form
// whenever it is one (in its canonical form: fewest reshape dimensions, T only when not the
// identity), as XLA does for the shardings GSPMD builds; a single replicated subgroup prints as
// `last_tile_dim_replicate`, as XLA normalizes it. Print(Parse(t)) is therefore t up to those two
// normalizations and the dropped metadata.
#ifndef ALPA_SHARDING_HLO_SHARDING_H_
#define ALPA_SHARDING_HLO_SHARDING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sharding/sharding_spec.h"
#include "support/status.h"

namespace alpa::sharding {

// The kind of a trailing subgroup dimension (XLA's OpSharding::Type of `last_tile_dims`).
enum class SubgroupType { kReplicated, kManual, kUnreduced };
std::string_view SubgroupTypeName(SubgroupType type);  // "replicated", "manual", "unreduced"

struct HloSharding {
  enum class Kind { kReplicated, kManual, kMaximal, kTiled, kTuple };

  Kind kind = Kind::kReplicated;
  int64_t device = 0;  // kMaximal: the device
  // kTiled: the tile grid (the tensor's dimensions, then one per subgroup) and the device of each
  // tile, row-major over it.
  std::vector<int64_t> tile_dims;
  std::vector<int64_t> devices;
  std::vector<SubgroupType> subgroups;  // the trailing tile dimensions' kinds, in order
  std::vector<HloSharding> elements;    // kTuple

  static HloSharding Replicated() { return {}; }
  static HloSharding Manual();
  static HloSharding Maximal(int64_t device);
  static HloSharding Tuple(std::vector<HloSharding> elements);
  static HloSharding Tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices,
                           std::vector<SubgroupType> subgroups = {});

  // kTiled: the number of tensor dimensions the tile grid cuts.
  int64_t TensorRank() const;

  friend bool operator==(const HloSharding&, const HloSharding&) = default;
};

// Parses the value of `sharding=`, braces included. Errors name the column (1-based) and what
// was expected there ("sharding column 12: expected ']' ..."); they also reject a tile
// assignment whose device count is not the product of its dimensions, a device listed twice, an
// iota that does not match its dimensions, and subgroups that do not fit the tile grid.
Result<HloSharding> ParseHloSharding(std::string_view text);

// XLA's text, braces included: "{devices=[2,1,2]<=[4] last_tile_dim_replicate}".
std::string ToString(const HloSharding& sharding);

// The device array [dims]<=[reshape_dims]T(perm): the ids 0..N-1 arranged as reshape_dims, then
// transposed by perm (output dimension k is input dimension perm[k]), read row-major.
std::vector<int64_t> TransposedIota(const std::vector<int64_t>& reshape_dims,
                                    const std::vector<int64_t>& perm);

// --- Conversion on a logical mesh. Device ids are the mesh positions 0..n-1 in row-major order
// (the SPMD partition ids), so the mesh itself is arange(n).reshape(mesh_shape).

// The tile grid of `spec`: one tile dimension per tensor dimension (the product of its axes),
// then the partial axes as one `unreduced` subgroup, then the replicated axes as one
// `replicated` subgroup (printed `last_tile_dim_replicate` when it is the only one); a subgroup
// of size 1 is left out, and a spec that splits nothing and is partial over nothing is
// {replicated}. The device array is the mesh transposed so that its axes come in that order
// (each dimension's axes major first): an iota. A partial spec keeps the tile-grid form, where
// XLA would write a tensor unreduced over every device as {unreduced}. `spec` must use each axis
// of the mesh at most once (aborts otherwise).
HloSharding ToHloSharding(const ShardingSpec& spec, const std::vector<int64_t>& mesh_shape);

// The XLA sharding text of a value whose leaves (one for an array) have `leaf_specs`: one
// sharding, or a tuple sharding "{a, b}".
std::string ToHloShardingText(const std::vector<ShardingSpec>& leaf_specs,
                              const std::vector<int64_t>& mesh_shape);

// The spec whose ToHloSharding is `sharding`, for a tensor of `tensor_rank` dimensions: each tile
// dimension must step through the devices as a mixed-radix count over some mesh axes (major
// first), i.e. the device array must be the mesh transposed and regrouped, with device 0 first.
// Subgroup dimensions too: copies listed in another order (GSPMD never writes them so) are refused.
// Axes of size 1 are never chosen (they come back replicated). Errors say why not, e.g.
// "tile assignment [4,2] devices 0,2,4,6,... is not a split of mesh [2,4] axes: ...", and reject
// manual, maximal and tuple shardings, manual subgroups, a device count other than the mesh's
// and a tile rank other than tensor_rank plus the subgroups.
Result<ShardingSpec> FromHloSharding(const HloSharding& sharding,
                                     const std::vector<int64_t>& mesh_shape, int64_t tensor_rank);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_HLO_SHARDING_H_
