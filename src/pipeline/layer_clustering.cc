#include "pipeline/layer_clustering.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace alpa::pipeline {
namespace {

constexpr int64_t kHeavyOpLowerBound = 3;  // Alpa's LAYER_HEAVY_OP_LOWER_BOUND
constexpr double kTieTolerance = 1e-4;     // relative, as Alpa's DP
constexpr double kInf = std::numeric_limits<double>::infinity();

// input_bytes(k, r) for 0 <= k <= r <= K, row-major in a (K + 1) x (K + 1) table.
class InputBytesTable {
 public:
  InputBytesTable() = default;
  explicit InputBytesTable(int64_t num_units)
      : stride_(num_units + 1), bytes_(static_cast<size_t>(stride_ * stride_), 0) {}
  const int64_t* row(int64_t k) const { return &bytes_[static_cast<size_t>(k * stride_)]; }
  int64_t* row(int64_t k) { return &bytes_[static_cast<size_t>(k * stride_)]; }

 private:
  int64_t stride_ = 0;
  std::vector<int64_t> bytes_;
};

// What every L shares: the validated units and the input_bytes table.
struct Prepared {
  const std::vector<ClusteringUnit>* units = nullptr;
  InputBytesTable input_bytes;
  double total_cost = 0;
  int64_t heavy_count = 0;
};

struct Value {
  int64_t producer = 0;
  int64_t bytes = 0;
};

// A value produced before k counts in input_bytes(k, r) iff its first reader at or after k,
// next(k), is before r. So row k is a prefix sum over r of the values' bytes placed at next(k) + 1.
// Sweeping k from K down to 0 keeps next() current: the readers of unit k - 1 become their
// values' next reader. O(K · (#values + K)).
InputBytesTable BuildInputBytes(int64_t num_units, const std::vector<Value>& values,
                                const std::vector<std::vector<int64_t>>& values_read_by) {
  InputBytesTable table(num_units);
  std::vector<int64_t> next_reader(values.size(), -1);
  std::vector<int64_t> delta(static_cast<size_t>(num_units + 2));
  for (int64_t k = num_units; k >= 0; --k) {
    std::fill(delta.begin(), delta.end(), 0);
    for (size_t v = 0; v < values.size(); ++v) {
      if (values[v].producer < k && next_reader[v] >= 0) {
        delta[static_cast<size_t>(next_reader[v] + 1)] += values[v].bytes;
      }
    }
    int64_t* row = table.row(k);
    int64_t sum = 0;
    for (int64_t r = 0; r <= num_units; ++r) {
      sum += delta[static_cast<size_t>(r)];
      row[r] = r >= k ? sum : 0;
    }
    if (k > 0) {
      for (int64_t v : values_read_by[static_cast<size_t>(k - 1)]) {
        next_reader[static_cast<size_t>(v)] = k - 1;
      }
    }
  }
  return table;
}

Result<Prepared> Prepare(const std::vector<ClusteringUnit>& units,
                         const std::vector<ValueEdge>& edges) {
  const int64_t num_units = static_cast<int64_t>(units.size());
  Prepared prepared;
  prepared.units = &units;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!std::isfinite(units[i].cost) || units[i].cost < 0) {
      return InvalidArgument("units[{}].cost is {}: it must be finite and >= 0", i, units[i].cost);
    }
    prepared.total_cost += units[i].cost;
    prepared.heavy_count += units[i].heavy ? 1 : 0;
  }
  // Values numbered densely in order of first appearance; the readers of each unit.
  std::map<int64_t, size_t> index_of_id;
  std::vector<Value> values;
  std::vector<std::vector<int64_t>> values_read_by(units.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    const ValueEdge& edge = edges[i];
    if (edge.producer < 0 || edge.producer >= num_units) {
      return InvalidArgument("edges[{}].producer is {}: it must be in [0, {})", i, edge.producer,
                             num_units);
    }
    if (edge.consumer <= edge.producer || edge.consumer >= num_units) {
      return InvalidArgument(
          "edges[{}].consumer is {}: it must be after the producer {} and below {} (units are in "
          "topological order)",
          i, edge.consumer, edge.producer, num_units);
    }
    if (edge.bytes < 0) {
      return InvalidArgument("edges[{}].bytes is {}: it must be >= 0", i, edge.bytes);
    }
    auto [it, inserted] = index_of_id.emplace(edge.value_id, values.size());
    if (inserted) {
      values.push_back({edge.producer, edge.bytes});
    } else if (values[it->second].producer != edge.producer ||
               values[it->second].bytes != edge.bytes) {
      return InvalidArgument(
          "edges[{}].value_id {} was produced by unit {} with {} bytes in an earlier edge, here by "
          "unit {} with {} bytes",
          i, edge.value_id, values[it->second].producer, values[it->second].bytes, edge.producer,
          edge.bytes);
    }
    values_read_by[static_cast<size_t>(edge.consumer)].push_back(static_cast<int64_t>(it->second));
  }
  prepared.input_bytes = BuildInputBytes(num_units, values, values_read_by);
  return prepared;
}

// The layers [k, r) allowed for a start k are the ends r in [first, last] (none if first > last).
// They form one interval: as r grows, cnt and cost only grow, so the ends with cnt < h allowed
// (cost >= bound) are the last ones of that stretch, every end with cnt == h is allowed, and the
// ends with cnt > h allowed (cost < bound) are the first ones of theirs.
struct EndRange {
  int64_t first = 0;
  int64_t last = -1;
};

std::vector<EndRange> AllowedEnds(const std::vector<ClusteringUnit>& units, int64_t h,
                                  double bound) {
  const int64_t num_units = static_cast<int64_t>(units.size());
  std::vector<EndRange> ends(units.size());
  for (int64_t k = 0; k < num_units; ++k) {
    EndRange& range = ends[static_cast<size_t>(k)];
    range = {num_units + 1, k};
    int64_t count = 0;
    double cost = 0;
    for (int64_t r = k + 1; r <= num_units; ++r) {
      const ClusteringUnit& unit = units[static_cast<size_t>(r - 1)];
      count += unit.heavy ? 1 : 0;
      cost += unit.cost;
      if (count > h && cost >= bound) break;  // so is every longer layer
      if (count >= h || cost >= bound) {
        range.first = std::min(range.first, r);
        range.last = r;
      }
    }
  }
  return ends;
}

// G(r, q) with its tie-breakers and the start k of the last layer.
struct Cell {
  double value = kInf;
  double sum = kInf;                                      // of the layers' input bytes
  int64_t squares = std::numeric_limits<int64_t>::max();  // of the layers' lengths
  int64_t start = -1;
};

// Alpa's acceptance rule: a smaller objective, or one within the tolerance with a smaller sum, or
// both within the tolerance with a smaller imbalance. Candidates arrive by increasing k.
bool Better(const Cell& candidate, const Cell& current) {
  if (candidate.value < current.value) return true;
  if (candidate.value > current.value * (1 + kTieTolerance)) return false;
  if (candidate.sum < current.sum) return true;
  return candidate.sum <= current.sum * (1 + kTieTolerance) && candidate.squares < current.squares;
}

// The layer starts of the best partition into L layers, or nothing when none is allowed.
// O(K² L): for each q and start k, the allowed ends r.
std::optional<std::vector<int64_t>> SolveDp(const InputBytesTable& input_bytes,
                                            const std::vector<EndRange>& ends, int64_t num_layers) {
  const int64_t num_units = static_cast<int64_t>(ends.size());
  std::vector<std::vector<Cell>> g(static_cast<size_t>(num_layers + 1),
                                   std::vector<Cell>(static_cast<size_t>(num_units + 1)));
  g[0][0] = {.value = 0, .sum = 0, .squares = 0, .start = -1};
  for (int64_t q = 1; q <= num_layers; ++q) {
    const std::vector<Cell>& previous = g[static_cast<size_t>(q - 1)];
    std::vector<Cell>& current = g[static_cast<size_t>(q)];
    const int64_t last_end = num_units - (num_layers - q);  // one unit for each later layer
    for (int64_t k = q - 1; k < last_end; ++k) {
      const Cell& before = previous[static_cast<size_t>(k)];
      if (before.value == kInf) continue;
      const EndRange& range = ends[static_cast<size_t>(k)];
      const int64_t* row = input_bytes.row(k);
      for (int64_t r = range.first; r <= std::min(range.last, last_end); ++r) {
        const double bytes = static_cast<double>(row[r]);
        const Cell candidate{.value = std::max(before.value, bytes),
                             .sum = before.sum + bytes,
                             .squares = before.squares + (r - k) * (r - k),
                             .start = k};
        Cell& cell = current[static_cast<size_t>(r)];
        if (Better(candidate, cell)) cell = candidate;
      }
    }
  }
  if (g[static_cast<size_t>(num_layers)][static_cast<size_t>(num_units)].value == kInf) {
    return std::nullopt;
  }
  std::vector<int64_t> starts(static_cast<size_t>(num_layers));
  int64_t r = num_units;
  for (int64_t q = num_layers; q >= 1; --q) {
    r = g[static_cast<size_t>(q)][static_cast<size_t>(r)].start;
    starts[static_cast<size_t>(q - 1)] = r;
  }
  ALPA_CHECK(r == 0, "layer clustering backtrack ended at unit {}", r);
  return starts;
}

Result<LayerClustering> Solve(const Prepared& prepared, const LayerClusteringOptions& options) {
  const std::vector<ClusteringUnit>& units = *prepared.units;
  const int64_t num_units = static_cast<int64_t>(units.size());
  const int64_t num_layers = options.num_layers;
  if (num_layers < 1 || num_layers > num_units) {
    return InvalidArgument("num_layers is {}: it must be in [1, {}] (the number of units)",
                           num_layers, num_units);
  }
  if (!std::isfinite(options.eps) || options.eps < 0) {
    return InvalidArgument("eps is {}: it must be finite and >= 0", options.eps);
  }
  LayerClustering clustering;
  clustering.heavy_lower_bound = std::min(kHeavyOpLowerBound, prepared.heavy_count / num_layers);
  clustering.cost_bound = (1 + options.eps) * prepared.total_cost / static_cast<double>(num_layers);
  std::optional<std::vector<int64_t>> starts;
  while (true) {
    starts = SolveDp(prepared.input_bytes,
                     AllowedEnds(units, clustering.heavy_lower_bound, clustering.cost_bound),
                     num_layers);
    if (starts) break;
    ALPA_CHECK(clustering.cost_bound != kInf, "an infinite cost bound allows a partition");
    // Double the bound; past the total cost (or when all costs are 0) every layer with >= h
    // heavy units is allowed, which a partition always satisfies since h <= #heavy / L.
    clustering.relaxed = true;
    const double doubled = 2 * clustering.cost_bound;
    clustering.cost_bound = doubled > prepared.total_cost || doubled == 0 ? kInf : doubled;
  }

  clustering.layer_of_unit.resize(units.size());
  clustering.layer_costs.assign(static_cast<size_t>(num_layers), 0);
  clustering.layer_input_bytes.resize(static_cast<size_t>(num_layers));
  for (int64_t q = 0; q < num_layers; ++q) {
    const int64_t k = (*starts)[static_cast<size_t>(q)];
    const int64_t r = q + 1 < num_layers ? (*starts)[static_cast<size_t>(q + 1)] : num_units;
    for (int64_t unit = k; unit < r; ++unit) {
      clustering.layer_of_unit[static_cast<size_t>(unit)] = q;
      clustering.layer_costs[static_cast<size_t>(q)] += units[static_cast<size_t>(unit)].cost;
    }
    const int64_t bytes = prepared.input_bytes.row(k)[r];
    clustering.layer_input_bytes[static_cast<size_t>(q)] = bytes;
    clustering.objective = std::max(clustering.objective, bytes);
  }
  return clustering;
}

}  // namespace

Result<LayerClustering> ClusterUnitsIntoLayers(const std::vector<ClusteringUnit>& units,
                                               const std::vector<ValueEdge>& edges,
                                               const LayerClusteringOptions& options) {
  ALPA_ASSIGN_OR_RETURN(const Prepared prepared, Prepare(units, edges));
  return Solve(prepared, options);
}

Result<LayerClustering> ClusterUnitsAutoLayers(const std::vector<ClusteringUnit>& units,
                                               const std::vector<ValueEdge>& edges, double eps,
                                               double layer_eps) {
  if (!std::isfinite(layer_eps) || layer_eps < 0) {
    return InvalidArgument("layer_eps is {}: it must be finite and >= 0", layer_eps);
  }
  ALPA_ASSIGN_OR_RETURN(const Prepared prepared, Prepare(units, edges));
  ALPA_ASSIGN_OR_RETURN(LayerClustering best, Solve(prepared, {.num_layers = 2, .eps = eps}));
  const double limit = static_cast<double>(best.objective) * (1 + layer_eps);
  // Alpa's search_layer_num: lo stays acceptable, hi is rejected or the end of the range.
  int64_t lo = 2;
  int64_t hi = prepared.heavy_count / 3 + 1;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    ALPA_ASSIGN_OR_RETURN(LayerClustering candidate,
                          Solve(prepared, {.num_layers = mid, .eps = eps}));
    if (candidate.relaxed || static_cast<double>(candidate.objective) > limit) {
      hi = mid;
    } else {
      lo = mid;
      best = std::move(candidate);
    }
  }
  return best;
}

}  // namespace alpa::pipeline
