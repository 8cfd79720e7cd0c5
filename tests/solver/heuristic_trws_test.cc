// The TRW-S message kernels (the AVX2 one gives the plain one's bits, ties and every tail length
// included), TRW-S's lower bound (never above the optimum, whatever the messages; the optimum
// itself on a path) and the reduced problem's shared edge matrices.
#include "solver/heuristic_trws.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "solver/heuristic_problem.h"
#include "support/cpu_features.h"
#include "tests/solver/test_problems.h"

namespace alpa::solver {
namespace {

TEST(TrwsMessage, IsTheMinPlusProductShiftedToZero) {
  // h = (1, 10), matrix rows (0, 5, 2) and (0, 0, 0): min over s = (1, 6, 3) -> (1, 6, 3) - 1.
  const std::vector<double> h = {1, 10};
  const std::vector<double> matrix = {0, 5, 2, 0, 0, 0};
  std::vector<double> to(3);
  TrwsMessage(h.data(), 2, matrix.data(), 3, to.data());
  EXPECT_EQ(to, (std::vector<double>{0, 5, 2}));
}

#if defined(__x86_64__)
TEST(TrwsMessage, TheAvx2KernelGivesThePlainKernelsBits) {
  if (!CpuHasAvx2()) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937_64 random(7);
  // Integers in a small range make ties (and exact zeros after the shift) common; the halves
  // and huge values exercise rounding.
  std::uniform_int_distribution<int> small(-3, 3);
  std::uniform_real_distribution<double> wide(-1e15, 1e15);
  for (int32_t ki = 1; ki <= 9; ++ki) {
    for (int32_t kj = 1; kj <= 19; ++kj) {
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<double> h(static_cast<size_t>(ki)), matrix(static_cast<size_t>(ki * kj));
        for (double& x : h) x = trial % 2 == 0 ? small(random) : wide(random) + 0.5;
        for (double& x : matrix) x = trial % 2 == 0 ? small(random) : wide(random);
        std::vector<double> plain(static_cast<size_t>(kj)), vector(static_cast<size_t>(kj));
        TrwsMessage(h.data(), ki, matrix.data(), kj, plain.data());
        TrwsMessageAvx2(h.data(), ki, matrix.data(), kj, vector.data());
        EXPECT_EQ(std::memcmp(plain.data(), vector.data(), plain.size() * sizeof(double)), 0)
            << "ki " << ki << ", kj " << kj << ", trial " << trial;
      }
    }
  }
}
#endif

// The least energy of `request` with no memory limit: the reductions are exact, so it is also
// the reduced problem's (a forbidden entry, clamped to `big` there, costs more than any other).
TotalCost UnlimitedOptimum(Request request) {
  request.usage_limit.reset();
  return *testing::SolveByEnumeration(request).optimum;
}

TEST(Trws, TheBoundNeverPassesTheOptimumWhateverTheMessages) {
  // Cycles, parallel edges and forbidden entries; the messages after 0 to 4 passes (none,
  // far from converged, nearly converged) and after a run with other costs.
  const auto never = [] { return false; };
  int met = 0, problems = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Request request = testing::RandomRequest(seed, 7, 3, 0.05);
    request.usage_limit.reset();
    const TotalCost optimum = UnlimitedOptimum(request);
    const HeuristicProblem problem = BuildHeuristicProblem(request);
    if (problem.infeasible || optimum >= problem.big) continue;
    ++problems;
    Trws trws(problem);
    const std::vector<int64_t> zero(problem.unary.size(), 0);
    EXPECT_LE(trws.LowerBound(zero), static_cast<double>(optimum)) << "seed " << seed;
    std::vector<int64_t> other(problem.unary.size());
    for (size_t x = 0; x < other.size(); ++x) other[x] = static_cast<int64_t>((x * 37 + seed) % 50);
    trws.Run(other, 2, never);
    EXPECT_LE(trws.LowerBound(zero), static_cast<double>(optimum)) << "seed " << seed;
    for (int passes = 1; passes <= 4; ++passes) {
      trws.Run(zero, 1, never);
      EXPECT_LE(trws.LowerBound(zero), static_cast<double>(optimum))
          << "seed " << seed << ", " << passes << " passes";
    }
    met += std::ceil(trws.LowerBound(zero)) == static_cast<double>(optimum);
  }
  // Converged messages prove most of these optima (55 of 59 when written; the rest are LP gaps
  // of odd cycles).
  EXPECT_GT(problems, 40);
  EXPECT_GE(met, problems / 2) << met << " of " << problems;
}

TEST(Trws, OnAPathTheBoundIsTheOptimum) {
  // A path of six nodes with four strategies, each with memory so that no reduction folds the
  // path away; one forward and backward pass solves a path exactly.
  std::mt19937_64 random(11);
  std::uniform_int_distribution<int64_t> cost(0, 1000);
  for (int trial = 0; trial < 20; ++trial) {
    Request request;
    for (int v = 0; v < 6; ++v) {
      Node node{{0, 2}, {}, {}};
      for (int s = 0; s < 4; ++s) {
        node.costs.push_back(cost(random));
        node.usages.push_back(s + 1);
      }
      request.nodes.push_back(node);
    }
    for (int v = 0; v + 1 < 6; ++v) {
      Edge edge{v, v + 1, {}};
      for (int x = 0; x < 16; ++x) edge.costs.push_back(cost(random));
      request.edges.push_back(edge);
    }
    request.usage_limit = 1000;
    const TotalCost optimum = UnlimitedOptimum(request);
    const HeuristicProblem problem = BuildHeuristicProblem(request);
    ASSERT_EQ(problem.num_nodes, 6) << "trial " << trial;
    Trws trws(problem);
    const std::vector<int64_t> zero(problem.unary.size(), 0);
    trws.Run(zero, 1, [] { return false; });
    EXPECT_EQ(std::ceil(trws.LowerBound(zero)), static_cast<double>(optimum)) << "trial " << trial;
  }
}

TEST(BuildHeuristicProblem, StoresEqualEdgeMatricesOnce) {
  // A ring of six nodes, three strategies each, every edge with the same matrix (no strategy of
  // a node decides its neighbour's, so nothing is contracted): one copy per orientation.
  Request request;
  for (int v = 0; v < 6; ++v) request.nodes.push_back({{0, 1}, {3, 1, 2}, {1, 1, 1}});
  for (int v = 0; v < 6; ++v)
    request.edges.push_back({v, (v + 1) % 6, {0, 4, 1, 2, 0, 3, 5, 1, 0}});
  const HeuristicProblem problem = BuildHeuristicProblem(request);
  ASSERT_EQ(problem.num_nodes, 6);
  EXPECT_EQ(problem.matrices.size(), 2u * 9u);
  // Each entry still reads its own orientation: entry a of v holds cost(v takes s, w takes t)
  // at t * 3 + s.
  for (int32_t v = 0; v < problem.num_nodes; ++v) {
    for (int64_t a = problem.adj_begin[v]; a < problem.adj_begin[v + 1]; ++a) {
      const int32_t w = problem.adj_node[a];
      const bool v_first = (v + 1) % 6 == w;  // the edge is (v, w) as given, else (w, v)
      for (int s = 0; s < 3; ++s) {
        for (int t = 0; t < 3; ++t) {
          const std::vector<int64_t>& cost = request.edges[0].costs;
          const int64_t expected = v_first ? cost[s * 3 + t] : cost[t * 3 + s];
          EXPECT_EQ(problem.matrices[problem.adj_matrix[a] + t * 3 + s], expected);
        }
      }
    }
  }
}

}  // namespace
}  // namespace alpa::solver
