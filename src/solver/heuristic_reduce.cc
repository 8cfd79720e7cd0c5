#include "solver/heuristic_reduce.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace alpa::solver {
namespace {

int64_t AddSat(int64_t a, int64_t b) {
  int64_t sum;
  if (a == kInf || b == kInf || __builtin_add_overflow(a, b, &sum)) return kInf;
  return sum;
}

int64_t Raw(int64_t cost) { return cost >= kForbiddenCost ? kInf : cost; }

class Reducer {
 public:
  explicit Reducer(ReducedGraph& g) : g_(g) {}

  // Edge e's cost when its end `x` takes s and the other end takes t.
  int64_t Entry(const ReducedEdge& e, int32_t x, int32_t s, int32_t t) const {
    const int32_t kb = g_.nodes[e.b].k();
    return e.a == x ? e.cost[int64_t{s} * kb + t] : e.cost[int64_t{t} * kb + s];
  }
  int32_t Other(const ReducedEdge& e, int32_t x) const { return e.a == x ? e.b : e.a; }

  // Alive incident edges of x (drops dead ids on the way).
  std::vector<int32_t>& Edges(int32_t x) {
    std::vector<int32_t>& list = g_.nodes[x].edges;
    std::erase_if(list, [&](int32_t e) { return !g_.edges[e].alive; });
    return list;
  }

  // Keeps the strategies s of x with keep[s]; returns whether any was dropped.
  bool Compact(int32_t x, const std::vector<char>& keep) {
    ReducedNode& node = g_.nodes[x];
    const int32_t k = node.k();
    std::vector<int32_t> index;
    for (int32_t s = 0; s < k; ++s) {
      if (keep[s]) index.push_back(s);
    }
    if (static_cast<int32_t>(index.size()) == k) return false;
    auto select = [&](auto& values) {
      std::remove_reference_t<decltype(values)> kept(index.size());
      for (size_t i = 0; i < index.size(); ++i) kept[i] = values[index[i]];
      values = std::move(kept);
    };
    for (int32_t e : Edges(x)) {
      ReducedEdge& edge = g_.edges[e];
      const int32_t y = Other(edge, x), ky = g_.nodes[y].k();
      std::vector<int64_t> cost(index.size() * ky);
      const bool row = edge.a == x;
      for (size_t i = 0; i < index.size(); ++i) {
        for (int32_t t = 0; t < ky; ++t) {
          cost[row ? i * ky + t : t * index.size() + i] = Entry(edge, x, index[i], t);
        }
      }
      edge.cost = std::move(cost);
    }
    select(node.cost);
    for (MemoryItem& item : node.items) select(item.usage);
    for (Member& member : node.members) select(member.strategy);
    if (index.empty()) g_.infeasible = true;
    return true;
  }

  // Arc consistency to a fixpoint; returns whether anything was dropped.
  bool PruneAll() {
    const int32_t n = static_cast<int32_t>(g_.nodes.size());
    std::vector<int32_t> queue;
    std::vector<char> queued(n, 0);
    for (int32_t x = 0; x < n; ++x) {
      if (g_.nodes[x].alive) {
        queue.push_back(x);
        queued[x] = 1;
      }
    }
    bool changed = false;
    for (size_t head = 0; head < queue.size() && !g_.infeasible; ++head) {
      const int32_t x = queue[head];
      queued[x] = 0;
      ReducedNode& node = g_.nodes[x];
      std::vector<char> keep(node.k());
      for (int32_t s = 0; s < node.k(); ++s) keep[s] = node.cost[s] != kInf;
      for (int32_t e : Edges(x)) {
        const ReducedEdge& edge = g_.edges[e];
        const int32_t ky = g_.nodes[Other(edge, x)].k();
        for (int32_t s = 0; s < node.k(); ++s) {
          bool supported = false;
          for (int32_t t = 0; t < ky && !supported && keep[s]; ++t) {
            supported = Entry(edge, x, s, t) != kInf;
          }
          keep[s] = keep[s] && supported;
        }
      }
      if (!Compact(x, keep)) continue;
      changed = true;
      for (int32_t e : Edges(x)) {
        const int32_t y = Other(g_.edges[e], x);
        if (!queued[y]) {
          queued[y] = 1;
          queue.push_back(y);
        }
      }
    }
    return changed;
  }

  // Single-strategy nodes hand their edges to their neighbours' costs.
  bool FoldAll() {
    bool changed = false;
    for (int32_t x = 0; x < static_cast<int32_t>(g_.nodes.size()); ++x) {
      if (!g_.nodes[x].alive || g_.nodes[x].k() != 1) continue;
      for (int32_t e : Edges(x)) {
        ReducedEdge& edge = g_.edges[e];
        const int32_t y = Other(edge, x);
        ReducedNode& other = g_.nodes[y];
        for (int32_t t = 0; t < other.k(); ++t) {
          other.cost[t] = AddSat(other.cost[t], Entry(edge, x, 0, t));
        }
        edge.alive = false;
        changed = true;
      }
      Edges(x);
    }
    return changed;
  }

  // Merges y into x, where y takes pi[r] whenever x takes r.
  void Contract(int32_t x, int32_t y, const std::vector<int32_t>& pi) {
    ReducedNode& into = g_.nodes[x];
    ReducedNode& from = g_.nodes[y];
    const int32_t kx = into.k();
    for (int32_t r = 0; r < kx; ++r) into.cost[r] = AddSat(into.cost[r], from.cost[pi[r]]);
    for (MemoryItem& item : from.items) {
      MemoryItem mapped{item.lo, item.hi, std::vector<int64_t>(kx)};
      for (int32_t r = 0; r < kx; ++r) mapped.usage[r] = item.usage[pi[r]];
      into.items.push_back(std::move(mapped));
    }
    for (Member& member : from.members) {
      Member mapped{member.node, std::vector<int32_t>(kx)};
      for (int32_t r = 0; r < kx; ++r) mapped.strategy[r] = member.strategy[pi[r]];
      into.members.push_back(std::move(mapped));
    }
    const std::vector<int32_t> from_edges = Edges(y);
    for (int32_t e : from_edges) {
      ReducedEdge& edge = g_.edges[e];
      edge.alive = false;
      const int32_t z = Other(edge, y);
      if (z == x) {
        for (int32_t r = 0; r < kx; ++r) {
          into.cost[r] = AddSat(into.cost[r], Entry(edge, y, pi[r], r));
        }
        continue;
      }
      const int32_t kz = g_.nodes[z].k();
      // The x-z edge, created when x has none yet; entries added as M'(r, t) = M(pi[r], t).
      int32_t target = -1;
      for (int32_t f : Edges(x)) {
        if (Other(g_.edges[f], x) == z) target = f;
      }
      if (target < 0) {
        target = static_cast<int32_t>(g_.edges.size());
        g_.edges.push_back({true, x, z, std::vector<int64_t>(int64_t{kx} * kz, 0)});
        g_.nodes[x].edges.push_back(target);
        g_.nodes[z].edges.push_back(target);
      }
      ReducedEdge& merged = g_.edges[target];
      const ReducedEdge& old = g_.edges[e];
      const int32_t kb = g_.nodes[merged.b].k();
      for (int32_t r = 0; r < kx; ++r) {
        for (int32_t t = 0; t < kz; ++t) {
          int64_t& cell =
              merged.a == x ? merged.cost[int64_t{r} * kb + t] : merged.cost[int64_t{t} * kb + r];
          cell = AddSat(cell, Entry(old, y, pi[r], t));
        }
      }
    }
    ReducedNode& gone = g_.nodes[y];
    gone.alive = false;
    gone.cost.clear();
    gone.items.clear();
    gone.members.clear();
    gone.edges.clear();
  }

  // pi with pi[r] the one strategy of y with a finite entry against r of x, or empty.
  std::vector<int32_t> Function(const ReducedEdge& edge, int32_t x) const {
    const int32_t y = Other(edge, x);
    const int32_t kx = g_.nodes[x].k(), ky = g_.nodes[y].k();
    std::vector<int32_t> pi(kx, -1);
    for (int32_t r = 0; r < kx; ++r) {
      for (int32_t t = 0; t < ky; ++t) {
        if (Entry(edge, x, r, t) == kInf) continue;
        if (pi[r] >= 0) return {};
        pi[r] = t;
      }
      if (pi[r] < 0) return {};
    }
    return pi;
  }

  bool ContractAll() {
    bool changed = false;
    for (size_t e = 0; e < g_.edges.size(); ++e) {
      if (!g_.edges[e].alive) continue;
      const int32_t a = g_.edges[e].a, b = g_.edges[e].b;
      if (g_.nodes[a].k() == 1 || g_.nodes[b].k() == 1) continue;
      // Merge the end with fewer edges into the other when both directions are functions.
      const bool a_small = Edges(a).size() <= Edges(b).size();
      const int32_t first = a_small ? b : a, second = a_small ? a : b;
      if (std::vector<int32_t> pi = Function(g_.edges[e], first); !pi.empty()) {
        Contract(first, second, pi);
        changed = true;
      } else if (pi = Function(g_.edges[e], second); !pi.empty()) {
        Contract(second, first, pi);
        changed = true;
      }
    }
    return changed;
  }

  // A node whose usage does not depend on its strategy has no say in memory.
  static bool MemoryFree(const ReducedNode& node) {
    return std::all_of(node.items.begin(), node.items.end(), [](const MemoryItem& item) {
      return item.lo == item.hi || std::all_of(item.usage.begin(), item.usage.end(),
                                               [&](int64_t u) { return u == item.usage[0]; });
    });
  }

  // Memory-free nodes of degree 0 keep their cheapest strategy; of degree 1 they become their
  // neighbour's: pi(r) = argmin_t cost(t) + edge(r, t).
  bool LeavesAll() {
    bool changed = false;
    for (int32_t y = 0; y < static_cast<int32_t>(g_.nodes.size()); ++y) {
      ReducedNode& node = g_.nodes[y];
      if (!node.alive || node.k() == 1 || !MemoryFree(node)) continue;
      const std::vector<int32_t>& edges = Edges(y);
      if (edges.size() > 1) continue;
      changed = true;
      if (edges.empty()) {
        const auto best = std::min_element(node.cost.begin(), node.cost.end());
        std::vector<char> keep(node.k(), 0);
        keep[best - node.cost.begin()] = 1;
        Compact(y, keep);
        continue;
      }
      const ReducedEdge& edge = g_.edges[edges[0]];
      const int32_t x = Other(edge, y);
      std::vector<int32_t> pi(g_.nodes[x].k(), 0);
      for (int32_t r = 0; r < g_.nodes[x].k(); ++r) {
        int64_t best = kInf;
        for (int32_t t = 0; t < node.k(); ++t) {
          const int64_t value = AddSat(node.cost[t], Entry(edge, x, r, t));
          if (value < best) {
            best = value;
            pi[r] = t;
          }
        }
      }
      Contract(x, y, pi);
    }
    return changed;
  }

 private:
  ReducedGraph& g_;
};

}  // namespace

ReducedGraph ReduceRequest(const Request& request) {
  ReducedGraph g;
  const int32_t n = static_cast<int32_t>(request.nodes.size());
  g.has_limit = request.usage_limit.has_value();
  g.limit = request.usage_limit.value_or(0);

  std::vector<int64_t> points;
  for (const Node& node : request.nodes) {
    if (!node.interval.empty()) points.push_back(node.interval.start);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  g.num_times = static_cast<int32_t>(points.size());
  auto point = [&](int64_t time) {
    return static_cast<int32_t>(std::lower_bound(points.begin(), points.end(), time) -
                                points.begin());
  };

  g.nodes.resize(n);
  for (int32_t v = 0; v < n; ++v) {
    const Node& source = request.nodes[v];
    ReducedNode& node = g.nodes[v];
    for (int64_t c : source.costs) node.cost.push_back(Raw(c));
    if (!source.interval.empty()) {
      node.items.push_back(
          {point(source.interval.start), point(source.interval.end), source.usages});
    }
    node.members.push_back({v, std::vector<int32_t>(source.costs.size())});
    std::iota(node.members[0].strategy.begin(), node.members[0].strategy.end(), 0);
  }
  // Parallel edges merge; an edge is stored from its smaller node.
  std::map<std::pair<int32_t, int32_t>, int32_t> by_pair;
  for (const Edge& source : request.edges) {
    const int32_t u = static_cast<int32_t>(source.from), v = static_cast<int32_t>(source.to);
    const int32_t a = std::min(u, v), b = std::max(u, v);
    const int64_t ku = request.nodes[u].num_strategies(), kv = request.nodes[v].num_strategies();
    auto [it, inserted] = by_pair.try_emplace({a, b}, static_cast<int32_t>(g.edges.size()));
    if (inserted) {
      g.edges.push_back({true, a, b, std::vector<int64_t>(ku * kv, 0)});
      g.nodes[a].edges.push_back(it->second);
      g.nodes[b].edges.push_back(it->second);
    }
    ReducedEdge& edge = g.edges[it->second];
    const int64_t kb = request.nodes[b].num_strategies();
    for (int64_t s = 0; s < ku; ++s) {
      for (int64_t t = 0; t < kv; ++t) {
        int64_t& cell = u == a ? edge.cost[s * kb + t] : edge.cost[t * kb + s];
        cell = AddSat(cell, Raw(source.costs[s * kv + t]));
      }
    }
  }

  Reducer reducer(g);
  bool changed = true;
  while (changed && !g.infeasible) {
    changed = reducer.PruneAll();
    if (g.infeasible) break;
    changed = reducer.FoldAll() || changed;
    changed = reducer.ContractAll() || changed;
    changed = reducer.LeavesAll() || changed;
  }
  return g;
}

}  // namespace alpa::solver
