#include "tests/solver/test_problems.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "solver/checker.h"

namespace alpa::solver::testing {

Request RandomRequest(uint64_t seed, int num_nodes, int max_strategies, double forbidden) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  Request request;
  request.name = "random";
  for (int v = 0; v < num_nodes; ++v) {
    Node node;
    const int64_t strategies = uniform(2, max_strategies);
    const int64_t start = uniform(0, 11);
    node.interval = Interval{start, chance(0.1) ? start : uniform(start + 1, 12)};
    for (int64_t i = 0; i < strategies; ++i) {
      node.costs.push_back(chance(forbidden) ? kForbiddenCost : uniform(0, 100));
      node.usages.push_back(uniform(0, 10));
    }
    request.nodes.push_back(node);
  }
  const int num_edges = num_nodes * 3 / 2;
  for (int e = 0; e < num_edges; ++e) {
    Edge edge;
    edge.from = uniform(0, num_nodes - 1);
    do {
      edge.to = uniform(0, num_nodes - 1);
    } while (edge.to == edge.from);
    const int64_t entries =
        request.nodes[edge.from].num_strategies() * request.nodes[edge.to].num_strategies();
    for (int64_t k = 0; k < entries; ++k) {
      edge.costs.push_back(chance(forbidden) ? kForbiddenCost : uniform(0, 100));
    }
    request.edges.push_back(edge);
  }
  // The peak usage lies between the sum of the smallest and of the largest usages of the nodes
  // live together; pick a limit around that range.
  if (!chance(0.2)) {
    int64_t low = 0, high = 0;
    for (const Node& node : request.nodes) {
      if (node.interval.empty()) continue;
      low += *std::min_element(node.usages.begin(), node.usages.end());
      high += *std::max_element(node.usages.begin(), node.usages.end());
    }
    request.usage_limit = uniform(low / 3, high / 2);
  }
  return request;
}

BruteForce SolveByEnumeration(const Request& request) {
  BruteForce result;
  std::vector<int64_t> choice(request.nodes.size(), 0);
  while (true) {
    Result<Evaluation> evaluation = EvaluateChoice(request, choice);
    EXPECT_TRUE(evaluation.ok()) << evaluation.status().message();
    if (evaluation.ok() && evaluation->feasible() &&
        (!result.optimum.has_value() || evaluation->cost < *result.optimum)) {
      result.optimum = evaluation->cost;
      result.choice = choice;
    }
    // The next choice, as an odometer.
    size_t v = 0;
    while (v < choice.size() && ++choice[v] == request.nodes[v].num_strategies()) choice[v++] = 0;
    if (v == choice.size()) return result;
  }
}

}  // namespace alpa::solver::testing
