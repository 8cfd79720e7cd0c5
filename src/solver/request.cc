#include "solver/request.h"

#include <algorithm>
#include <cmath>

namespace alpa::solver {

std::string TotalCostString(TotalCost cost) {
  // Digits from the least significant, on the magnitude as unsigned (so that the most negative
  // value does not overflow on negation).
  const bool negative = cost < 0;
  unsigned __int128 magnitude =
      negative ? ~static_cast<unsigned __int128>(cost) + 1 : static_cast<unsigned __int128>(cost);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::string_view SolveStatusName(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal:
      return "optimal";
    case SolveStatus::kFeasible:
      return "feasible";
    case SolveStatus::kInfeasible:
      return "infeasible";
    case SolveStatus::kNoSolution:
      return "no_solution";
  }
  return "unknown";
}

bool WithinGap(TotalCost cost, std::optional<TotalCost> bound, double relative_gap) {
  if (!bound.has_value()) return false;
  if (cost <= *bound) return true;
  // In doubles: the gap of a cost near 2^63 would overflow in integers; a gap this coarse
  // needs no more than double precision.
  return static_cast<double>(cost) - static_cast<double>(*bound) <=
         relative_gap * std::abs(static_cast<double>(cost));
}

bool Answer::ProvenWithin(double relative_gap) const {
  return has_solution() && WithinGap(cost, lower_bound, relative_gap);
}

namespace {

Status ValidateNode(const Node& node, size_t v) {
  if (node.costs.empty()) {
    return InvalidArgument("node {}: no strategies; every node needs at least one", v);
  }
  if (node.usages.size() != node.costs.size()) {
    return InvalidArgument("node {}: {} costs but {} usages; give one of each per strategy", v,
                           node.costs.size(), node.usages.size());
  }
  for (size_t i = 0; i < node.costs.size(); ++i) {
    if (node.costs[i] < 0) {
      return InvalidArgument("node {}: cost of strategy {} is {}; costs must be >= 0", v, i,
                             node.costs[i]);
    }
    if (node.usages[i] < 0) {
      return InvalidArgument("node {}: usage of strategy {} is {}; usages must be >= 0", v, i,
                             node.usages[i]);
    }
  }
  return Status::Ok();
}

Status ValidateEdge(const Request& request, const Edge& edge, size_t e) {
  const int64_t num_nodes = static_cast<int64_t>(request.nodes.size());
  for (int64_t node : {edge.from, edge.to}) {
    if (node < 0 || node >= num_nodes) {
      return InvalidArgument("edge {}: node {} does not exist (the problem has {} nodes)", e, node,
                             num_nodes);
    }
  }
  if (edge.from == edge.to) {
    return InvalidArgument("edge {}: connects node {} to itself; an edge joins two nodes", e,
                           edge.from);
  }
  const int64_t rows = request.nodes[edge.from].num_strategies();
  const int64_t columns = request.nodes[edge.to].num_strategies();
  if (static_cast<int64_t>(edge.costs.size()) != rows * columns) {
    return InvalidArgument("edge {} ({} -> {}): {} costs, expected {} x {} = {}", e, edge.from,
                           edge.to, edge.costs.size(), rows, columns, rows * columns);
  }
  for (size_t k = 0; k < edge.costs.size(); ++k) {
    if (edge.costs[k] < 0) {
      return InvalidArgument("edge {} ({} -> {}): cost [{}][{}] is {}; costs must be >= 0", e,
                             edge.from, edge.to, static_cast<int64_t>(k) / columns,
                             static_cast<int64_t>(k) % columns, edge.costs[k]);
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateRequest(const Request& request) {
  for (size_t v = 0; v < request.nodes.size(); ++v) {
    ALPA_RETURN_IF_ERROR(ValidateNode(request.nodes[v], v));
  }
  // Node checks first: an edge's expected size needs valid nodes.
  for (size_t e = 0; e < request.edges.size(); ++e) {
    ALPA_RETURN_IF_ERROR(ValidateEdge(request, request.edges[e], e));
  }
  if (request.usage_limit.has_value() && *request.usage_limit < 0) {
    return InvalidArgument("usage_limit is {}; must be >= 0 (leave it out for no limit)",
                           *request.usage_limit);
  }
  return Status::Ok();
}

}  // namespace alpa::solver
