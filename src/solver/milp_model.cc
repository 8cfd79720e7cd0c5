#include "solver/milp_model.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace alpa::solver {
namespace {

// The edges between one pair of nodes a < b, merged: entry (i, j) (s(a) = i, s(b) = j) is the sum
// of the parts' entries, forbidden when any part's is.
struct NodePair {
  int64_t a = 0;
  int64_t b = 0;
  std::vector<const Edge*> parts;  // each a -> b or b -> a
};

class Presolve {
 public:
  explicit Presolve(const Request& request);

  const Request& request;
  std::vector<std::vector<char>> allowed;  // per node, per strategy
  std::vector<int64_t> num_allowed;        // per node
  std::vector<NodePair> pairs;             // ordered by (a, b)
  bool infeasible = false;
  std::string why;

  int64_t strategies(int64_t v) const { return request.nodes[v].num_strategies(); }
  bool free(int64_t v) const { return num_allowed[v] > 1; }
  int64_t only(int64_t v) const;  // the strategy of a fixed node

  // The merged entry, or nullopt when forbidden.
  std::optional<TotalCost> Entry(const NodePair& pair, int64_t i, int64_t j) const;

 private:
  // Removes the strategies of pair.a and pair.b that no allowed entry supports; returns the nodes
  // that lost one.
  std::vector<int64_t> Revise(const NodePair& pair);
};

Presolve::Presolve(const Request& request) : request(request) {
  const int64_t n = static_cast<int64_t>(request.nodes.size());
  allowed.resize(n);
  num_allowed.assign(n, 0);
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t cost : request.nodes[v].costs) {
      allowed[v].push_back(cost < kForbiddenCost);
      num_allowed[v] += allowed[v].back();
    }
  }
  std::map<std::pair<int64_t, int64_t>, std::vector<const Edge*>> merged;
  for (const Edge& edge : request.edges) {
    merged[std::minmax(edge.from, edge.to)].push_back(&edge);
  }
  std::vector<std::vector<int64_t>> incident(n);
  for (auto& [ends, parts] : merged) {
    incident[ends.first].push_back(static_cast<int64_t>(pairs.size()));
    incident[ends.second].push_back(static_cast<int64_t>(pairs.size()));
    pairs.push_back(NodePair{ends.first, ends.second, std::move(parts)});
  }
  // Arc consistency (AC-3): a pair is revised again whenever one of its nodes lost a strategy.
  std::deque<int64_t> queue;
  std::vector<char> queued(pairs.size(), 1);
  for (size_t p = 0; p < pairs.size(); ++p) queue.push_back(static_cast<int64_t>(p));
  for (int64_t v = 0; v < n && !infeasible; ++v) {
    if (num_allowed[v] == 0) {
      infeasible = true;
      why = fmt::format("node {}: every strategy is forbidden", v);
    }
  }
  while (!queue.empty() && !infeasible) {
    const int64_t p = queue.front();
    queue.pop_front();
    queued[p] = 0;
    for (int64_t v : Revise(pairs[p])) {
      if (num_allowed[v] == 0) {
        infeasible = true;
        why = fmt::format(
            "node {}: no strategy is allowed together with an allowed strategy of each neighbour "
            "(the forbidden entries of its edges exclude them all)",
            v);
        break;
      }
      for (int64_t q : incident[v]) {
        if (!queued[q]) {
          queued[q] = 1;
          queue.push_back(q);
        }
      }
    }
  }
}

int64_t Presolve::only(int64_t v) const {
  const auto it = std::find(allowed[v].begin(), allowed[v].end(), 1);
  ALPA_CHECK(num_allowed[v] == 1 && it != allowed[v].end(), "node {} is not fixed", v);
  return it - allowed[v].begin();
}

std::optional<TotalCost> Presolve::Entry(const NodePair& pair, int64_t i, int64_t j) const {
  TotalCost sum = 0;
  for (const Edge* edge : pair.parts) {
    const int64_t cost = edge->from == pair.a ? edge->costs[i * strategies(pair.b) + j]
                                              : edge->costs[j * strategies(pair.a) + i];
    if (cost >= kForbiddenCost) return std::nullopt;
    sum += cost;
  }
  return sum;
}

std::vector<int64_t> Presolve::Revise(const NodePair& pair) {
  std::vector<char> support_a(strategies(pair.a), 0);
  std::vector<char> support_b(strategies(pair.b), 0);
  for (int64_t i = 0; i < strategies(pair.a); ++i) {
    if (!allowed[pair.a][i]) continue;
    for (int64_t j = 0; j < strategies(pair.b); ++j) {
      if (allowed[pair.b][j] && Entry(pair, i, j).has_value()) support_a[i] = support_b[j] = 1;
    }
  }
  std::vector<int64_t> changed;
  for (auto [v, support] : {std::pair(pair.a, &support_a), std::pair(pair.b, &support_b)}) {
    bool lost = false;
    for (size_t i = 0; i < support->size(); ++i) {
      if (allowed[v][i] && !(*support)[i]) {
        allowed[v][i] = 0;
        --num_allowed[v];
        lost = true;
      }
    }
    if (lost) changed.push_back(v);
  }
  return changed;
}

// Row and column building on a MilpModel.
void AddRow(MilpModel& model, const std::vector<std::pair<int, double>>& entries, double rhs) {
  for (const auto& [column, value] : entries) {
    model.row_column.push_back(column);
    model.row_value.push_back(value);
  }
  model.row_start.push_back(static_cast<int64_t>(model.row_column.size()));
  model.row_rhs.push_back(rhs);
}

int AddColumn(MilpModel& model, MilpModel::Column column, TotalCost cost, double upper) {
  ALPA_CHECK(model.columns.size() < static_cast<size_t>(std::numeric_limits<int>::max()),
             "the MILP has more columns than CBC can index");
  model.integer.push_back(column.kind == MilpModel::Kind::kStrategy ? 1 : 0);
  model.columns.push_back(column);
  model.objective.push_back(static_cast<double>(cost));
  model.upper.push_back(upper);
  return static_cast<int>(model.columns.size() - 1);
}

// The memory chain at the maximal live sets that may not fit (see the header). `node_column[v][i]`
// is the column of s[v,i] (-1 for removed strategies and fixed nodes).
void AddMemoryRows(const Presolve& presolve, const std::vector<std::vector<int>>& node_column,
                   MilpModel& model) {
  const Request& request = presolve.request;
  if (!request.usage_limit.has_value()) return;
  const TotalCost limit = *request.usage_limit;
  const int64_t n = static_cast<int64_t>(request.nodes.size());
  std::vector<int64_t> min_usage(n, std::numeric_limits<int64_t>::max()), max_usage(n, 0);
  struct Event {
    int64_t time;
    bool arrives;  // ends (false) sort before starts at the same time
    int64_t node;
  };
  std::vector<Event> events;
  for (int64_t v = 0; v < n; ++v) {
    const Node& node = request.nodes[v];
    for (int64_t i = 0; i < node.num_strategies(); ++i) {
      if (!presolve.allowed[v][i]) continue;
      min_usage[v] = std::min(min_usage[v], node.usages[i]);
      max_usage[v] = std::max(max_usage[v], node.usages[i]);
    }
    if (node.interval.empty() || max_usage[v] == 0) continue;
    events.push_back({node.interval.start, true, v});
    events.push_back({node.interval.end, false, v});
  }
  std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
    return std::tuple(x.time, x.arrives, x.node) < std::tuple(y.time, y.arrives, y.node);
  });
  // Since the last chain row: +1 for a node that arrived, -1 for one that left, 0 for both.
  std::vector<int> net(n, 0);
  std::vector<int64_t> touched;
  int previous = -1;  // the column of the last U
  TotalCost sum_min = 0, sum_max = 0;
  bool grown = false;  // something started since the last end
  for (size_t k = 0; k < events.size();) {
    const int64_t time = events[k].time;
    if (!events[k].arrives && grown && sum_max > limit) {
      // L(time - 1) is a maximal live set that may not fit.
      if (sum_min > limit) {
        model.infeasible = true;
        model.why = fmt::format(
            "at time {} the live nodes need at least {} with their smallest strategies, over the "
            "usage limit {}",
            time - 1, TotalCostString(sum_min), TotalCostString(limit));
        return;
      }
      // U[k] - U[k-1] - sum_(arrived) w[v] + sum_(left) w[v] = 0.
      std::sort(touched.begin(), touched.end());
      std::vector<std::pair<int, double>> entries;
      for (int64_t v : touched) {
        if (net[v] == 0 || !presolve.free(v)) continue;
        for (size_t i = 0; i < node_column[v].size(); ++i) {
          const int64_t extra = request.nodes[v].usages[i] - min_usage[v];
          if (node_column[v][i] >= 0 && extra > 0) {
            entries.emplace_back(node_column[v][i], -net[v] * static_cast<double>(extra));
          }
        }
      }
      for (int64_t v : touched) net[v] = 0;
      touched.clear();
      if (previous >= 0) entries.emplace_back(previous, -1.0);
      const int column = AddColumn(model, {MilpModel::Kind::kUsage, -1, model.num_rows()}, 0,
                                   static_cast<double>(limit - sum_min));
      entries.emplace_back(column, 1.0);
      AddRow(model, entries, 0.0);
      ++model.memory_rows;
      previous = column;
    }
    for (; k < events.size() && events[k].time == time; ++k) {
      const int64_t v = events[k].node;
      const int sign = events[k].arrives ? 1 : -1;
      if (net[v] == 0) touched.push_back(v);
      net[v] += sign;
      sum_min += sign * TotalCost{min_usage[v]};
      sum_max += sign * TotalCost{max_usage[v]};
      grown = events[k].arrives;  // ends sort first: true after a group iff anything started
    }
  }
}

// True when the pair's entries over the allowed strategies are all allowed and zero.
bool IsFreeOfCost(const Presolve& presolve, const NodePair& pair) {
  for (int64_t i = 0; i < presolve.strategies(pair.a); ++i) {
    if (!presolve.allowed[pair.a][i]) continue;
    for (int64_t j = 0; j < presolve.strategies(pair.b); ++j) {
      if (!presolve.allowed[pair.b][j]) continue;
      const std::optional<TotalCost> entry = presolve.Entry(pair, i, j);
      if (!entry.has_value() || *entry != 0) return false;
    }
  }
  return true;
}

MilpModel Build(const Presolve& presolve) {
  const Request& request = presolve.request;
  MilpModel model;
  const int64_t n = static_cast<int64_t>(request.nodes.size());
  if (presolve.infeasible) {
    model.infeasible = true;
    model.why = presolve.why;
    return model;
  }
  // Node costs with the edges to fixed nodes folded in.
  std::vector<std::vector<TotalCost>> cost(n);
  for (int64_t v = 0; v < n; ++v) {
    cost[v].assign(request.nodes[v].costs.begin(), request.nodes[v].costs.end());
  }
  std::vector<const NodePair*> kept;
  for (const NodePair& pair : presolve.pairs) {
    const bool free_a = presolve.free(pair.a);
    const bool free_b = presolve.free(pair.b);
    if (!free_a && !free_b) {
      model.offset += *presolve.Entry(pair, presolve.only(pair.a), presolve.only(pair.b));
    } else if (!free_a || !free_b) {
      const int64_t fixed = free_a ? pair.b : pair.a;
      const int64_t other = free_a ? pair.a : pair.b;
      for (int64_t k = 0; k < presolve.strategies(other); ++k) {
        if (!presolve.allowed[other][k]) continue;
        // Arc consistency left only strategies that the fixed end allows.
        cost[other][k] += free_a ? *presolve.Entry(pair, k, presolve.only(fixed))
                                 : *presolve.Entry(pair, presolve.only(fixed), k);
      }
    } else if (!IsFreeOfCost(presolve, pair)) {
      kept.push_back(&pair);
    }
  }
  model.fixed.assign(n, -1);
  std::vector<std::vector<int>> node_column(n);
  for (int64_t v = 0; v < n; ++v) {
    if (!presolve.free(v)) {
      model.fixed[v] = presolve.only(v);
      model.offset += cost[v][model.fixed[v]];
      continue;
    }
    node_column[v].assign(presolve.strategies(v), -1);
    std::vector<std::pair<int, double>> one_hot;
    for (int64_t i = 0; i < presolve.strategies(v); ++i) {
      if (!presolve.allowed[v][i]) continue;
      node_column[v][i] = AddColumn(model, {MilpModel::Kind::kStrategy, v, i}, cost[v][i], 1.0);
      one_hot.emplace_back(node_column[v][i], 1.0);
    }
    AddRow(model, one_hot, 1.0);
  }
  for (const NodePair* pair : kept) {
    const int64_t a = pair->a, b = pair->b;
    // Marginal rows: sum_j e[ij] - s[a,i] = 0 and sum_i e[ij] - s[b,j] = 0.
    std::vector<std::vector<std::pair<int, double>>> by_j(presolve.strategies(b));
    for (int64_t i = 0; i < presolve.strategies(a); ++i) {
      if (!presolve.allowed[a][i]) continue;
      std::vector<std::pair<int, double>> by_i;
      for (int64_t j = 0; j < presolve.strategies(b); ++j) {
        if (!presolve.allowed[b][j]) continue;
        const std::optional<TotalCost> entry = presolve.Entry(*pair, i, j);
        if (!entry.has_value()) continue;
        const int column = AddColumn(model, {MilpModel::Kind::kEdge, a, i, b, j}, *entry, 1.0);
        by_i.emplace_back(column, 1.0);
        by_j[j].emplace_back(column, 1.0);
      }
      by_i.emplace_back(node_column[a][i], -1.0);
      AddRow(model, by_i, 0.0);
    }
    for (int64_t j = 0; j < presolve.strategies(b); ++j) {
      if (!presolve.allowed[b][j]) continue;
      by_j[j].emplace_back(node_column[b][j], -1.0);
      AddRow(model, by_j[j], 0.0);
    }
  }
  AddMemoryRows(presolve, node_column, model);
  return model;
}

}  // namespace

int64_t CountMilpColumns(const Request& request) {
  // The columns Build creates for s and e, counted without building them.
  const Presolve presolve(request);
  if (presolve.infeasible) return 0;
  int64_t columns = 0;
  for (size_t v = 0; v < request.nodes.size(); ++v) {
    if (presolve.free(v)) columns += presolve.num_allowed[v];
  }
  for (const NodePair& pair : presolve.pairs) {
    if (!presolve.free(pair.a) || !presolve.free(pair.b) || IsFreeOfCost(presolve, pair)) continue;
    for (int64_t i = 0; i < presolve.strategies(pair.a); ++i) {
      if (!presolve.allowed[pair.a][i]) continue;
      for (int64_t j = 0; j < presolve.strategies(pair.b); ++j) {
        columns += presolve.allowed[pair.b][j] && presolve.Entry(pair, i, j).has_value();
      }
    }
  }
  return columns;
}

MilpModel BuildMilpModel(const Request& request) {
  const Presolve presolve(request);
  return Build(presolve);
}

std::vector<double> ModelValues(const MilpModel& model, std::span<const int64_t> choice) {
  if (choice.size() != model.fixed.size()) return {};
  for (size_t v = 0; v < choice.size(); ++v) {
    if (model.fixed[v] >= 0 && choice[v] != model.fixed[v]) return {};
  }
  auto row_sum = [&](int64_t r, const std::vector<double>& values) {
    double sum = 0;
    for (int64_t k = model.row_start[r]; k < model.row_start[r + 1]; ++k) {
      sum += model.row_value[k] * values[model.row_column[k]];
    }
    return sum;
  };
  std::vector<double> values(model.columns.size(), 0.0);
  for (size_t c = 0; c < model.columns.size(); ++c) {
    const MilpModel::Column& column = model.columns[c];
    switch (column.kind) {
      case MilpModel::Kind::kStrategy:
        values[c] = choice[column.node] == column.i;
        break;
      case MilpModel::Kind::kEdge:
        values[c] = choice[column.node] == column.i && choice[column.edge_to] == column.j;
        break;
      case MilpModel::Kind::kUsage:
        // Its chain row, U[k] - U[k-1] - ... = 0, has every other column set already.
        values[c] = -row_sum(column.i, values);
        break;
    }
  }
  // A removed strategy or entry leaves a one-hot or marginal row unsatisfied.
  for (int64_t r = 0; r < model.num_rows(); ++r) {
    if (row_sum(r, values) != model.row_rhs[r]) return {};
  }
  return values;
}

std::vector<int64_t> ChoiceFromValues(const MilpModel& model, std::span<const double> values) {
  ALPA_CHECK(values.size() == model.columns.size(), "{} values for {} columns", values.size(),
             model.columns.size());
  std::vector<int64_t> choice = model.fixed;
  std::vector<double> best(choice.size(), -1.0);
  for (size_t c = 0; c < model.columns.size(); ++c) {
    const MilpModel::Column& column = model.columns[c];
    if (column.kind != MilpModel::Kind::kStrategy || values[c] <= best[column.node]) continue;
    best[column.node] = values[c];
    choice[column.node] = column.i;
  }
  for (size_t v = 0; v < choice.size(); ++v) {
    ALPA_CHECK(choice[v] >= 0, "node {} has neither a fixed strategy nor a column", v);
  }
  return choice;
}

}  // namespace alpa::solver
