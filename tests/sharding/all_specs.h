// Test helper: every sharding spec of a tensor of a given rank on a mesh of a given rank.
#ifndef ALPA_TESTS_SHARDING_ALL_SPECS_H_
#define ALPA_TESTS_SHARDING_ALL_SPECS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sharding/sharding_spec.h"

namespace alpa::sharding {

// Each mesh axis replicates, splits one of the `rank` dimensions or (with `with_partial`) is
// partial; the axes of a dimension come in every order. (rank + 2)^mesh_rank assignments times
// the orders: 125 assignments for rank 3 on a 3-D mesh.
inline std::vector<ShardingSpec> AllSpecs(int64_t mesh_rank, int64_t rank, bool with_partial) {
  const int64_t lowest = with_partial ? -2 : -1;
  std::vector<ShardingSpec> specs;
  std::vector<int64_t> role(static_cast<size_t>(mesh_rank), lowest);  // -2 P, -1 R, d: split d
  while (true) {
    ShardingSpec spec = ShardingSpec::Replicated(rank);
    for (int64_t axis = 0; axis < mesh_rank; ++axis) {
      const int64_t r = role[static_cast<size_t>(axis)];
      if (r == -2) spec.partial_axes.push_back(axis);
      if (r >= 0) spec.dim_axes[static_cast<size_t>(r)].push_back(axis);
    }
    // Every combination of the orders of the dimensions' axes (each list starts sorted).
    std::vector<ShardingSpec> orders = {spec};
    for (int64_t d = 0; d < rank; ++d) {
      std::vector<ShardingSpec> next;
      for (const ShardingSpec& s : orders) {
        ShardingSpec t = s;
        auto& axes = t.dim_axes[static_cast<size_t>(d)];
        do {
          next.push_back(t);
        } while (std::next_permutation(axes.begin(), axes.end()));
      }
      orders = std::move(next);
    }
    specs.insert(specs.end(), orders.begin(), orders.end());
    // Next assignment (odometer over -2|-1 .. rank-1).
    size_t i = 0;
    while (i < role.size() && ++role[i] == rank) role[i++] = lowest;
    if (i == role.size()) break;
  }
  return specs;
}

}  // namespace alpa::sharding

#endif  // ALPA_TESTS_SHARDING_ALL_SPECS_H_
