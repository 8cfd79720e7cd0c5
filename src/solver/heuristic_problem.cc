#include "solver/heuristic_problem.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

#include "solver/heuristic_reduce.h"

namespace alpa::solver {
namespace {

// Edge matrices stored once per distinct content. A model's repeated layers give the same
// matrices over and over (a 1.4B GPT step on a [2, 8] mesh: 181 distinct among 8,123 edges, 69 MB
// of cells in all), and every TRW-S pass and local-search move reads them all: shared, they stay
// in cache instead of streaming from memory.
class MatrixStore {
 public:
  explicit MatrixStore(std::vector<int64_t>& matrices) : matrices_(matrices) {}

  // The offset of `cells` in the matrices, appended unless an equal matrix is there already.
  int64_t Intern(const std::vector<int64_t>& cells) {
    uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a over the cells' values
    for (int64_t c : cells) hash = (hash ^ static_cast<uint64_t>(c)) * 0x100000001b3ULL;
    std::vector<int64_t>& offsets = offsets_by_hash_[hash];
    for (int64_t offset : offsets) {
      if (Equal(offset, cells)) return offset;
    }
    const int64_t offset = static_cast<int64_t>(matrices_.size());
    matrices_.insert(matrices_.end(), cells.begin(), cells.end());
    offsets.push_back(offset);
    return offset;
  }

 private:
  bool Equal(int64_t offset, const std::vector<int64_t>& cells) const {
    return offset + static_cast<int64_t>(cells.size()) <= static_cast<int64_t>(matrices_.size()) &&
           std::equal(cells.begin(), cells.end(), matrices_.begin() + offset);
  }

  std::vector<int64_t>& matrices_;
  std::unordered_map<uint64_t, std::vector<int64_t>> offsets_by_hash_;
};

}  // namespace

HeuristicProblem BuildHeuristicProblem(const Request& request) {
  const ReducedGraph g = ReduceRequest(request);
  HeuristicProblem p;
  p.infeasible = g.infeasible;
  if (p.infeasible) return p;
  p.has_limit = g.has_limit;
  p.limit = g.limit;
  p.num_times = g.num_times;

  std::vector<int32_t> index(g.nodes.size(), -1);
  for (size_t x = 0; x < g.nodes.size(); ++x) {
    if (g.nodes[x].alive) index[x] = p.num_nodes++;
  }
  // The clamped forbidden cost: node v's evaluation adds its unary and one entry per incident
  // edge, and tree messages are clamped at 2 * big, so (max degree + 2) * 2 * big < 2^62.
  int64_t max_degree = 0;
  for (const ReducedNode& node : g.nodes) {
    if (node.alive) max_degree = std::max<int64_t>(max_degree, node.edges.size());
  }
  p.big = std::min<int64_t>(int64_t{1} << 48, (int64_t{1} << 60) / (max_degree + 2));
  auto clamp = [&](int64_t cost) { return std::min(cost, p.big); };

  p.strategy_begin.assign(p.num_nodes + 1, 0);
  p.item_begin.assign(p.num_nodes + 1, 0);
  p.group_of.assign(request.nodes.size(), 0);
  p.member_begin.assign(request.nodes.size(), 0);
  std::vector<int64_t> base_diff(p.num_times + 1, 0), least_diff(p.num_times + 1, 0);
  for (size_t x = 0; x < g.nodes.size(); ++x) {
    if (index[x] < 0) continue;
    const ReducedNode& node = g.nodes[x];
    const int32_t v = index[x], k = node.k();
    p.strategy_begin[v + 1] = p.strategy_begin[v] + k;
    for (int64_t c : node.cost) p.unary.push_back(clamp(c));
    p.group_root.push_back(node.members[0].node);
    for (const Member& member : node.members) {
      p.group_of[member.node] = v;
      p.member_begin[member.node] = static_cast<int64_t>(p.member_strategy.size());
      p.member_strategy.insert(p.member_strategy.end(), member.strategy.begin(),
                               member.strategy.end());
    }
    // Items over the same range add up; a constant one goes to the base profile.
    std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> items;
    for (const MemoryItem& item : node.items) {
      std::vector<int64_t>& usage = items[{item.lo, item.hi}];
      usage.resize(k, 0);
      for (int32_t s = 0; s < k; ++s) usage[s] += item.usage[s];
    }
    for (const auto& [range, usage] : items) {
      const auto [lo, hi] = range;
      const auto [least, most] = std::minmax_element(usage.begin(), usage.end());
      least_diff[lo] += *least;
      least_diff[hi] -= *least;
      if (*least == *most) {
        base_diff[lo] += *least;
        base_diff[hi] -= *least;
        continue;
      }
      p.item_node.push_back(v);
      p.item_lo.push_back(lo);
      p.item_hi.push_back(hi);
      p.item_usage.push_back(static_cast<int64_t>(p.usage.size()));
      p.usage.insert(p.usage.end(), usage.begin(), usage.end());
    }
    p.item_begin[v + 1] = static_cast<int64_t>(p.item_lo.size());
  }
  p.base_usage.resize(p.num_times);
  int64_t base = 0, least = 0;
  for (int32_t t = 0; t < p.num_times; ++t) {
    base += base_diff[t];
    least += least_diff[t];
    p.base_usage[t] = base;
    // The sum of per-item minima bounds the usage at t from below.
    if (p.has_limit && least > p.limit) p.infeasible = true;
  }

  // Adjacency with each edge's matrix in both orientations (MatrixStore shares equal ones).
  std::vector<int64_t> degree(p.num_nodes, 0);
  for (const ReducedEdge& edge : g.edges) {
    if (!edge.alive) continue;
    ++degree[index[edge.a]];
    ++degree[index[edge.b]];
  }
  p.adj_begin.assign(p.num_nodes + 1, 0);
  for (int32_t v = 0; v < p.num_nodes; ++v) p.adj_begin[v + 1] = p.adj_begin[v] + degree[v];
  p.adj_node.resize(p.adj_begin[p.num_nodes]);
  p.adj_matrix.resize(p.adj_begin[p.num_nodes]);
  p.adj_reverse.resize(p.adj_begin[p.num_nodes]);
  std::vector<int64_t> fill(p.adj_begin.begin(), p.adj_begin.end() - 1);
  MatrixStore store(p.matrices);
  std::vector<int64_t> cells;
  for (const ReducedEdge& edge : g.edges) {
    if (!edge.alive) continue;
    const int32_t a = index[edge.a], b = index[edge.b];
    const int32_t ka = p.num_strategies(a), kb = p.num_strategies(b);
    // For a: entry [t (b's strategy) * ka + s (a's)], the transpose of the stored matrix.
    cells.resize(edge.cost.size());
    for (int32_t s = 0; s < ka; ++s) {
      for (int32_t t = 0; t < kb; ++t) {
        cells[int64_t{t} * ka + s] = clamp(edge.cost[int64_t{s} * kb + t]);
      }
    }
    const int64_t for_a = store.Intern(cells);
    // For b: entry [s (a's) * kb + t (b's)], as stored.
    std::transform(edge.cost.begin(), edge.cost.end(), cells.begin(), clamp);
    const int64_t for_b = store.Intern(cells);
    p.adj_node[fill[a]] = b;
    p.adj_matrix[fill[a]] = for_a;
    p.adj_reverse[fill[a]] = fill[b];
    p.adj_node[fill[b]] = a;
    p.adj_matrix[fill[b]] = for_b;
    p.adj_reverse[fill[b]++] = fill[a]++;
  }
  return p;
}

std::vector<int64_t> ToOriginalChoice(const HeuristicProblem& problem,
                                      const std::vector<int32_t>& choice) {
  std::vector<int64_t> result(problem.group_of.size());
  for (size_t v = 0; v < result.size(); ++v) {
    result[v] = problem.member_strategy[problem.member_begin[v] + choice[problem.group_of[v]]];
  }
  return result;
}

std::vector<int32_t> FromOriginalChoice(const HeuristicProblem& problem,
                                        const std::vector<int64_t>& choice) {
  if (choice.size() != problem.group_of.size()) return {};
  std::vector<int32_t> result(problem.num_nodes);
  for (int32_t group = 0; group < problem.num_nodes; ++group) {
    const int32_t root = problem.group_root[group];
    const auto first = problem.member_strategy.begin() + problem.member_begin[root];
    const auto last = first + problem.num_strategies(group);
    const auto it = std::find(first, last, choice[root]);
    if (it == last) return {};
    result[group] = static_cast<int32_t>(it - first);
  }
  return result;
}

ChoiceCheck CheckChoice(const Request& request, const std::vector<int64_t>& choice) {
  ChoiceCheck check;
  if (choice.size() != request.nodes.size()) return check;
  bool allowed = true;
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, usage change)
  for (size_t v = 0; v < request.nodes.size(); ++v) {
    const Node& node = request.nodes[v];
    if (choice[v] < 0 || choice[v] >= node.num_strategies()) return check;
    const int64_t cost = node.costs[choice[v]];
    allowed = allowed && cost < kForbiddenCost;
    check.cost += cost;
    if (!node.interval.empty()) {
      events.emplace_back(node.interval.start, node.usages[choice[v]]);
      events.emplace_back(node.interval.end, -node.usages[choice[v]]);
    }
  }
  for (const Edge& edge : request.edges) {
    const int64_t cost =
        edge.costs[choice[edge.from] * request.nodes[edge.to].num_strategies() + choice[edge.to]];
    allowed = allowed && cost < kForbiddenCost;
    check.cost += cost;
  }
  // Ends sort before starts at the same time: the intervals are half-open.
  std::sort(events.begin(), events.end());
  TotalCost usage = 0;
  bool fits = true;
  for (const auto& [time, change] : events) {
    usage += change;
    if (request.usage_limit && usage > *request.usage_limit) fits = false;
  }
  check.feasible = allowed && fits;
  return check;
}

}  // namespace alpa::solver
