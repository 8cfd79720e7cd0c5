// Automatic layer construction: cutting a topologically ordered list of operators ("units") into
// L contiguous layers (Alpa's cluster_jaxpr_by_cost, ../shared/reference/alpa.md §2.d; paper §5.2,
// Eq. 6). The algorithm works on plain data; layer_construction.h feeds it an IR computation.
//
// With K units, units [k, r) form a layer (0-based, r exclusive):
//   input_bytes(k, r) = bytes of the distinct values produced by units [0, k) and read by a unit of
//                       [k, r): what the layer receives from the layers before it.
//   G(r, q) = min over k < r, allowed(k, r), of max(G(k, q - 1), input_bytes(k, r)),  G(0, 0) = 0
// and the answer is G(K, L): the largest input of a layer, as small as it can be (paper Eq. 6,
// C(i, k) = input bytes). Compute balance is a constraint, not the objective: with
//   bound = (1 + eps) · total cost / L
//   h     = min(3, floor(#heavy / L))      (3: Alpa's LAYER_HEAVY_OP_LOWER_BOUND)
// and a layer holding cnt heavy units of total cost c,
//   allowed  iff  (cnt < h and c >= bound) or cnt == h or (cnt > h and c < bound):
// a layer needs h heavy ops (dots, convolutions: what intra-op parallelism shards) unless it is
// expensive on its own, and a layer with more than h must stay under the bound. This is Alpa's
// scan ("stop at the first heavy op that reaches the bound once cnt > h") written for costs on any
// unit; the two agree when only heavy units cost something, as in Alpa.
// Candidates within 1e-4 (relative) of the best objective are tied; ties go to the smaller sum of
// the layers' input bytes, then to the smaller sum of squared layer lengths (same order as the
// variance of the lengths, Alpa's "imbalance"), then to the earliest start of the last layer.
//
// When no partition is allowed (a small eps, heavy ops bunched together), Alpa stops on an assert;
// we double the bound until one is (at the latest once bound > total cost, where every partition
// with >= h heavy units per layer is allowed, and one always exists) and set `relaxed`.
#ifndef ALPA_PIPELINE_LAYER_CLUSTERING_H_
#define ALPA_PIPELINE_LAYER_CLUSTERING_H_

#include <cstdint>
#include <vector>

#include "support/status.h"

namespace alpa::pipeline {

struct ClusteringUnit {
  double cost = 0;     // compute cost, e.g. FLOPs; finite and >= 0
  bool heavy = false;  // a dot or convolution (Alpa's "non-trivial" op)
};

// Unit `consumer` reads value `value_id` (`bytes` bytes) that unit `producer` computed. A value
// read by several units has one edge per reader, all with the same value_id, producer and bytes; it
// counts once in a layer's input however many of the layer's units read it.
struct ValueEdge {
  int64_t producer = 0;
  int64_t consumer = 0;  // producer < consumer < #units
  int64_t bytes = 0;
  int64_t value_id = 0;
};

struct LayerClusteringOptions {
  int64_t num_layers = 1;  // L, 1 <= L <= #units
  double eps = 0.5;        // Alpa's DEFAULT_EPS
};

struct LayerClustering {
  std::vector<int64_t> layer_of_unit;      // nondecreasing, from 0 to L - 1
  int64_t objective = 0;                   // G(K, L): max over layers of layer_input_bytes
  std::vector<double> layer_costs;         // sum of the units' costs, per layer
  std::vector<int64_t> layer_input_bytes;  // input_bytes(k, r) of each layer
  int64_t heavy_lower_bound = 0;           // h
  double cost_bound = 0;                   // the bound the answer satisfies
  bool relaxed = false;                    // cost_bound is above (1 + eps) · total / L
};

// Errors (INVALID_ARGUMENT) name the field: num_layers outside [1, #units], eps < 0, a cost or
// bytes that is negative or not finite, an edge whose producer is not before its consumer or out
// of range, a value_id with two producers or sizes. Deterministic.
// Time O(K² L + K · #values), memory O(K²) (the input_bytes table, 8 bytes a pair).
Result<LayerClustering> ClusterUnitsIntoLayers(const std::vector<ClusteringUnit>& units,
                                               const std::vector<ValueEdge>& edges,
                                               const LayerClusteringOptions& options);

// Alpa's layer_num = "auto" (search_layer_num): binary search on L in [2, #heavy / 3 + 1),
// keeping the largest L seen whose objective <= objective(L = 2) · (1 + layer_eps); an L that
// needs a relaxed bound counts as worse (Alpa's objective is infinite there). Needs >= 2 units.
Result<LayerClustering> ClusterUnitsAutoLayers(const std::vector<ClusteringUnit>& units,
                                               const std::vector<ValueEdge>& edges, double eps,
                                               double layer_eps);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_LAYER_CLUSTERING_H_
