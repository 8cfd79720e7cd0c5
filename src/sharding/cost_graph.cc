#include "sharding/cost_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "support/status.h"

namespace alpa::sharding {
namespace {

// Root leader of every node, following `follows` links (chains allowed, cycles not).
std::vector<int64_t> RootLeaders(const CostGraph& graph) {
  const int64_t n = static_cast<int64_t>(graph.nodes.size());
  std::vector<int64_t> root(static_cast<size_t>(n), -1);
  for (int64_t v = 0; v < n; ++v) {
    int64_t r = v;
    int64_t steps = 0;
    while (graph.nodes[static_cast<size_t>(r)].follows >= 0) {
      r = graph.nodes[static_cast<size_t>(r)].follows;
      ALPA_CHECK(r >= 0 && r < n, "cost graph: node {} follows node {} out of range", v, r);
      ALPA_CHECK(++steps <= n, "cost graph: follow cycle through node {}", v);
    }
    root[static_cast<size_t>(v)] = r;
  }
  for (int64_t v = 0; v < n; ++v) {
    const auto& node = graph.nodes[static_cast<size_t>(v)];
    const auto& leader = graph.nodes[static_cast<size_t>(root[static_cast<size_t>(v)])];
    ALPA_CHECK(node.seconds.size() == leader.seconds.size(),
               "cost graph: node {} has {} strategies but follows a node with {}", v,
               node.seconds.size(), leader.seconds.size());
    ALPA_CHECK(node.memory_bytes.size() == node.seconds.size(),
               "cost graph: node {} has {} strategies but {} memory entries", v,
               node.seconds.size(), node.memory_bytes.size());
  }
  return root;
}

// The memory a group holds, exactly: one term per distinct live interval of its members, the
// usages of the members sharing it summed; members that hold nothing are left out. In the order of
// (start, end).
struct MemoryTerm {
  solver::Interval live;
  std::vector<int64_t> usages;  // per strategy of the group
};
std::vector<MemoryTerm> GroupMemoryTerms(const CostGraph& graph,
                                         const std::vector<int64_t>& members) {
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> by_interval;
  for (int64_t m : members) {
    const CostGraphNode& member = graph.nodes[static_cast<size_t>(m)];
    if (member.live.empty() || std::all_of(member.memory_bytes.begin(), member.memory_bytes.end(),
                                           [](int64_t bytes) { return bytes == 0; })) {
      continue;
    }
    std::vector<int64_t>& usages = by_interval[{member.live.start, member.live.end}];
    if (usages.empty()) usages.assign(member.memory_bytes.size(), 0);
    for (size_t j = 0; j < usages.size(); ++j) usages[j] += member.memory_bytes[j];
  }
  std::vector<MemoryTerm> terms;
  for (auto& [interval, usages] : by_interval) {
    terms.push_back({{interval.first, interval.second}, std::move(usages)});
  }
  return terms;
}

}  // namespace

int64_t ToSolverCost(double seconds) {
  const double units = std::round(seconds * kPicosecondsPerSecond);
  if (!(units < static_cast<double>(solver::kForbiddenCost))) return solver::kForbiddenCost;
  return std::max<int64_t>(0, static_cast<int64_t>(units));
}

ReducedProblem ReduceCostGraph(const CostGraph& graph, const std::string& name,
                               std::optional<int64_t> usage_limit) {
  const std::vector<int64_t> root = RootLeaders(graph);
  ReducedProblem problem;
  problem.request.name = name;
  problem.request.usage_limit = usage_limit;

  // Solver nodes in the order of their root leaders; members of each group.
  std::vector<int64_t> solver_node_of_root(graph.nodes.size(), -1);
  std::vector<std::vector<int64_t>> members;
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    if (root[v] != static_cast<int64_t>(v)) continue;
    solver_node_of_root[v] = static_cast<int64_t>(members.size());
    members.push_back({});
  }
  problem.solver_node_of.resize(graph.nodes.size());
  std::vector<std::vector<double>> seconds(members.size());
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    const int64_t s = solver_node_of_root[static_cast<size_t>(root[v])];
    problem.solver_node_of[v] = s;
    members[static_cast<size_t>(s)].push_back(static_cast<int64_t>(v));
    auto& total = seconds[static_cast<size_t>(s)];
    const auto& own = graph.nodes[v].seconds;
    if (total.empty()) total.assign(own.size(), 0.0);
    for (size_t j = 0; j < own.size(); ++j) total[j] += own[j];
  }

  // Edges: inside a group only the diagonal is ever paid; between groups, summed per ordered
  // pair (canonical orientation: the first seen).
  std::map<std::pair<int64_t, int64_t>, size_t> edge_index;
  std::vector<std::vector<double>> edge_seconds;
  std::vector<std::pair<int64_t, int64_t>> edge_ends;
  for (const CostGraphEdge& edge : graph.edges) {
    const size_t rows = graph.nodes[static_cast<size_t>(edge.from)].seconds.size();
    const size_t cols = graph.nodes[static_cast<size_t>(edge.to)].seconds.size();
    ALPA_CHECK(edge.seconds.size() == rows * cols,
               "cost graph: edge {} -> {} has {} costs, expected {} x {}", edge.from, edge.to,
               edge.seconds.size(), rows, cols);
    const int64_t u = problem.solver_node_of[static_cast<size_t>(edge.from)];
    const int64_t v = problem.solver_node_of[static_cast<size_t>(edge.to)];
    if (u == v) {
      auto& total = seconds[static_cast<size_t>(u)];
      for (size_t j = 0; j < rows; ++j) total[j] += edge.seconds[j * cols + j];
      continue;
    }
    const bool flipped = edge_index.count({v, u}) > 0;
    const std::pair<int64_t, int64_t> key = flipped ? std::pair{v, u} : std::pair{u, v};
    auto [it, inserted] = edge_index.try_emplace(key, edge_seconds.size());
    if (inserted) {
      edge_seconds.emplace_back(rows * cols, 0.0);
      edge_ends.push_back(key);
    }
    auto& total = edge_seconds[it->second];
    for (size_t i = 0; i < rows; ++i) {
      for (size_t j = 0; j < cols; ++j) {
        total[flipped ? j * rows + i : i * cols + j] += edge.seconds[i * cols + j];
      }
    }
  }

  // A group's first memory term rides on its node; each further term on a node of its own that
  // must take the group's strategy (forbidden off the diagonal of the edge tying them), appended
  // after the groups.
  std::vector<solver::Node> ties;
  std::vector<solver::Edge> tie_edges;
  for (size_t s = 0; s < members.size(); ++s) {
    const size_t strategies = seconds[s].size();
    solver::Node node;
    node.costs.reserve(strategies);
    for (double t : seconds[s]) node.costs.push_back(ToSolverCost(t));
    std::vector<MemoryTerm> terms = GroupMemoryTerms(graph, members[s]);
    if (terms.empty()) {
      node.usages.assign(strategies, 0);
    } else {
      node.interval = terms.front().live;
      node.usages = std::move(terms.front().usages);
    }
    for (size_t k = 1; k < terms.size(); ++k) {
      const int64_t tie = static_cast<int64_t>(members.size() + ties.size());
      ties.push_back(
          {terms[k].live, std::vector<int64_t>(strategies, 0), std::move(terms[k].usages)});
      solver::Edge& edge = tie_edges.emplace_back(
          solver::Edge{static_cast<int64_t>(s), tie,
                       std::vector<int64_t>(strategies * strategies, solver::kForbiddenCost)});
      for (size_t j = 0; j < strategies; ++j) edge.costs[j * strategies + j] = 0;
    }
    problem.request.nodes.push_back(std::move(node));
  }
  for (size_t e = 0; e < edge_seconds.size(); ++e) {
    solver::Edge edge{edge_ends[e].first, edge_ends[e].second, {}};
    edge.costs.reserve(edge_seconds[e].size());
    bool any = false;
    for (double t : edge_seconds[e]) {
      edge.costs.push_back(ToSolverCost(t));
      any = any || edge.costs.back() != 0;
    }
    if (any) problem.request.edges.push_back(std::move(edge));
  }
  for (solver::Node& tie : ties) problem.request.nodes.push_back(std::move(tie));
  for (solver::Edge& edge : tie_edges) problem.request.edges.push_back(std::move(edge));
  return problem;
}

std::vector<int64_t> ExpandChoice(const ReducedProblem& problem,
                                  const std::vector<int64_t>& solver_choice) {
  std::vector<int64_t> choice;
  choice.reserve(problem.solver_node_of.size());
  for (int64_t s : problem.solver_node_of) {
    choice.push_back(solver_choice[static_cast<size_t>(s)]);
  }
  return choice;
}

}  // namespace alpa::sharding
