#include "pipeline/layer_clustering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <vector>

#include "ir/builder.h"
#include "pipeline/layer_construction.h"

namespace alpa::pipeline {
namespace {

std::vector<ClusteringUnit> HeavyUnits(const std::vector<double>& costs) {
  std::vector<ClusteringUnit> units;
  for (double cost : costs) units.push_back({.cost = cost, .heavy = true});
  return units;
}

// A chain: unit i + 1 reads the value of unit i, bytes[i] bytes.
std::vector<ValueEdge> Chain(const std::vector<int64_t>& bytes) {
  std::vector<ValueEdge> edges;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int64_t unit = static_cast<int64_t>(i);
    edges.push_back({.producer = unit, .consumer = unit + 1, .bytes = bytes[i], .value_id = unit});
  }
  return edges;
}

std::vector<int64_t> LayerLengths(const LayerClustering& clustering) {
  std::vector<int64_t> lengths(clustering.layer_costs.size(), 0);
  for (int64_t layer : clustering.layer_of_unit) ++lengths[static_cast<size_t>(layer)];
  return lengths;
}

LayerClustering Cluster(const std::vector<ClusteringUnit>& units,
                        const std::vector<ValueEdge>& edges, int64_t num_layers, double eps = 0.5) {
  Result<LayerClustering> clustering =
      ClusterUnitsIntoLayers(units, edges, {.num_layers = num_layers, .eps = eps});
  EXPECT_TRUE(clustering.ok()) << clustering.status().message();
  return clustering.ok() ? *clustering : LayerClustering{};
}

TEST(LayerClusteringTest, SixEqualHeavyUnitsSplitThreeAndThree) {
  // h = min(3, 6 / 2) = 3: a layer of fewer than 3 heavy units is too cheap (cost < bound), one
  // of more is too expensive once the other has fewer.
  const LayerClustering clustering =
      Cluster(HeavyUnits({1, 1, 1, 1, 1, 1}), Chain({10, 10, 10, 10, 10}), 2);
  EXPECT_EQ(clustering.layer_of_unit, (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(clustering.heavy_lower_bound, 3);
  EXPECT_EQ(clustering.layer_input_bytes, (std::vector<int64_t>{0, 10}));
  EXPECT_EQ(clustering.objective, 10);
  EXPECT_EQ(clustering.layer_costs, (std::vector<double>{3, 3}));
  EXPECT_DOUBLE_EQ(clustering.cost_bound, 1.5 * 6 / 2);
  EXPECT_FALSE(clustering.relaxed);
}

TEST(LayerClusteringTest, TheBoundBalancesUnequalCosts) {
  // 8 units of cost 1 then 4 of cost 4 (total 24), equal bytes everywhere, h = 3. With eps = 0.1
  // (bound 13.2) a layer of more than 3 heavy units must cost < 13.2: only the cut after unit 9
  // works, 12 + 12 FLOPs although the lengths are 9 and 3.
  const std::vector<double> costs = {1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4};
  const std::vector<int64_t> bytes(11, 100);
  LayerClustering clustering = Cluster(HeavyUnits(costs), Chain(bytes), 2, 0.1);
  EXPECT_EQ(LayerLengths(clustering), (std::vector<int64_t>{9, 3}));
  EXPECT_EQ(clustering.layer_costs, (std::vector<double>{12, 12}));
  // With eps = 0.5 (bound 18) cuts after 7, 8 and 9 are allowed and tie on bytes; the most even
  // lengths (7 + 5: squares 74 < 80 < 90) win.
  clustering = Cluster(HeavyUnits(costs), Chain(bytes), 2, 0.5);
  EXPECT_EQ(LayerLengths(clustering), (std::vector<int64_t>{7, 5}));
}

TEST(LayerClusteringTest, PrefersTheCutWithFewerCrossingBytes) {
  // 8 equal heavy units: cuts after 3, 4 and 5 are allowed; the one after 5 crosses 10 bytes.
  const LayerClustering clustering =
      Cluster(HeavyUnits(std::vector<double>(8, 1)), Chain({100, 100, 100, 100, 10, 100, 100}), 2);
  EXPECT_EQ(LayerLengths(clustering), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(clustering.objective, 10);
}

TEST(LayerClusteringTest, TheEpsBoundExcludesATooHeavyLayer) {
  // Costs 10 x 7 then 40 (total 110); the cut after unit 3 crosses 1 byte, every other 100.
  const std::vector<double> costs = {10, 10, 10, 10, 10, 10, 10, 40};
  const std::vector<int64_t> bytes = {100, 100, 1, 100, 100, 100, 100};
  // eps = 0.5: bound 82.5, the second layer costs 80 and is allowed.
  LayerClustering clustering = Cluster(HeavyUnits(costs), Chain(bytes), 2, 0.5);
  EXPECT_EQ(LayerLengths(clustering), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(clustering.objective, 1);
  // eps = 0.1: bound 60.5 excludes it (5 heavy units, cost 80); only 50 + 60 remains.
  clustering = Cluster(HeavyUnits(costs), Chain(bytes), 2, 0.1);
  EXPECT_EQ(LayerLengths(clustering), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(clustering.layer_costs, (std::vector<double>{50, 60}));
  EXPECT_EQ(clustering.objective, 100);
}

TEST(LayerClusteringTest, AnExpensiveOpMayFormALayerAlone) {
  // h = 3, bound 49.5: one heavy unit of cost 60 reaches the bound by itself.
  const LayerClustering clustering =
      Cluster(HeavyUnits({60, 1, 1, 1, 1, 1, 1}), Chain({1, 100, 100, 100, 100, 100}), 2);
  EXPECT_EQ(LayerLengths(clustering), (std::vector<int64_t>{1, 6}));
}

TEST(LayerClusteringTest, AValueCountsOnceInEachLayerThatReadsIt) {
  // 6 heavy units into 3 layers of 2 (the only allowed partition: h = 2, bound 3). Value 0
  // (7 bytes) is read by units 3 and 5, value 1 (5 bytes) by units 2 and 3.
  const std::vector<ValueEdge> edges = {{0, 3, 7, 0}, {0, 5, 7, 0}, {1, 2, 5, 1}, {1, 3, 5, 1}};
  const LayerClustering clustering = Cluster(HeavyUnits(std::vector<double>(6, 1)), edges, 3);
  EXPECT_EQ(clustering.layer_of_unit, (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(clustering.layer_input_bytes, (std::vector<int64_t>{0, 12, 7}));
  EXPECT_EQ(clustering.objective, 12);
}

TEST(LayerClusteringTest, OneLayerAndOneUnitPerLayer) {
  const std::vector<ClusteringUnit> units = HeavyUnits({1, 2, 3});
  const std::vector<ValueEdge> edges = Chain({4, 5});
  EXPECT_EQ(Cluster(units, edges, 1).layer_of_unit, (std::vector<int64_t>{0, 0, 0}));
  const LayerClustering each = Cluster(units, edges, 3);
  EXPECT_EQ(each.layer_of_unit, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(each.layer_input_bytes, (std::vector<int64_t>{0, 4, 5}));
}

TEST(LayerClusteringTest, RelaxesTheBoundWhenNoPartitionIsAllowed) {
  // h = 1, eps = 0 (bound 100.5): either cut leaves a layer of 2 heavy units costing 101.
  const LayerClustering clustering = Cluster(HeavyUnits({100, 1, 100}), Chain({1, 1}), 2, 0);
  EXPECT_TRUE(clustering.relaxed);
  EXPECT_GT(clustering.cost_bound, 100.5);
  EXPECT_EQ(LayerLengths(clustering).size(), 2u);
  for (double cost : clustering.layer_costs) EXPECT_LT(cost, clustering.cost_bound);
}

TEST(LayerClusteringTest, ZeroCostsRelaxToHeavyCountsOnly) {
  // Bound 0 allows at most h = 3 heavy units a layer: 7 do not fit in 2 layers. Relaxed, a layer
  // needs >= 3; on equal bytes 3 + 4 and 4 + 3 tie and the earlier cut wins.
  const LayerClustering clustering =
      Cluster(HeavyUnits(std::vector<double>(7, 0)), Chain(std::vector<int64_t>(6, 8)), 2);
  EXPECT_TRUE(clustering.relaxed);
  EXPECT_TRUE(std::isinf(clustering.cost_bound));
  EXPECT_EQ(LayerLengths(clustering), (std::vector<int64_t>{3, 4}));
}

TEST(LayerClusteringTest, BadInputNamesTheField) {
  const std::vector<ClusteringUnit> units = HeavyUnits({1, 1, 1});
  const std::vector<ValueEdge> edges = Chain({1, 1});
  auto expect_error = [](const Result<LayerClustering>& result, const std::string& field) {
    ASSERT_FALSE(result.ok()) << field;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(field), std::string::npos)
        << result.status().message();
  };
  expect_error(ClusterUnitsIntoLayers(units, edges, {.num_layers = 0}), "num_layers");
  expect_error(ClusterUnitsIntoLayers(units, edges, {.num_layers = 4}), "num_layers");
  expect_error(ClusterUnitsIntoLayers(units, edges, {.num_layers = 2, .eps = -1}), "eps");
  expect_error(ClusterUnitsIntoLayers(HeavyUnits({1, -1, 1}), edges, {.num_layers = 2}),
               "units[1].cost");
  expect_error(ClusterUnitsIntoLayers(HeavyUnits({1, NAN, 1}), edges, {.num_layers = 2}),
               "units[1].cost");
  const auto with_edge = [&](ValueEdge edge) {
    std::vector<ValueEdge> bad = edges;
    bad.push_back(edge);
    return ClusterUnitsIntoLayers(units, bad, {.num_layers = 2});
  };
  expect_error(with_edge({.producer = -1, .consumer = 1, .bytes = 1, .value_id = 9}),
               "edges[2].producer");
  expect_error(with_edge({.producer = 2, .consumer = 1, .bytes = 1, .value_id = 9}),
               "edges[2].consumer");
  expect_error(with_edge({.producer = 1, .consumer = 3, .bytes = 1, .value_id = 9}),
               "edges[2].consumer");
  expect_error(with_edge({.producer = 0, .consumer = 1, .bytes = -1, .value_id = 9}),
               "edges[2].bytes");
  expect_error(with_edge({.producer = 0, .consumer = 2, .bytes = 2, .value_id = 0}),
               "edges[2].value_id");
  expect_error(ClusterUnitsAutoLayers(units, edges, 0.5, -1), "layer_eps");
}

// Alpa's blocked[l][r] scan, literally: the layer [k, r) is allowed when reached.
bool AlpaAllows(const std::vector<ClusteringUnit>& units, int64_t k, int64_t r, int64_t h,
                double bound) {
  int64_t count = 0;
  double cost = 0;
  for (int64_t end = k + 1; end <= r; ++end) {
    const ClusteringUnit& unit = units[static_cast<size_t>(end - 1)];
    if (unit.heavy) {
      ++count;
      cost += unit.cost;
    }
    if (count < h) {
      if (end == r) return cost >= bound;
      continue;
    }
    if (cost >= bound && unit.heavy && count > h) return false;
  }
  return true;
}

// Bytes of the distinct values produced before k and read in [k, r).
int64_t NaiveInputBytes(const std::vector<ValueEdge>& edges, int64_t k, int64_t r) {
  std::set<int64_t> seen;
  int64_t bytes = 0;
  for (const ValueEdge& edge : edges) {
    if (edge.producer < k && edge.consumer >= k && edge.consumer < r &&
        seen.insert(edge.value_id).second) {
      bytes += edge.bytes;
    }
  }
  return bytes;
}

// Every way to cut K units into L non-empty contiguous layers, as layer starts (starts = {0}).
void ForEachPartition(int64_t num_units, int64_t num_layers, std::vector<int64_t>& starts,
                      const std::function<void(const std::vector<int64_t>&)>& visit) {
  const int64_t layers_left = num_layers - static_cast<int64_t>(starts.size());
  if (layers_left == 0) {
    visit(starts);
    return;
  }
  for (int64_t start = starts.back() + 1; start <= num_units - layers_left; ++start) {
    starts.push_back(start);
    ForEachPartition(num_units, num_layers, starts, visit);
    starts.pop_back();
  }
}

TEST(LayerClusteringTest, MatchesBruteForceOnRandomInstances) {
  // Light units cost 0, as in Alpa, so that its scan is the oracle. Bytes stay below 10^4 / #values
  // so that the 1e-4 tie tolerance never merges two different objectives.
  std::mt19937 rng(20240611);
  int feasible = 0;
  int infeasible = 0;
  for (int instance = 0; instance < 400; ++instance) {
    const int64_t num_units = std::uniform_int_distribution<int64_t>(1, 10)(rng);
    const int64_t num_layers =
        std::uniform_int_distribution<int64_t>(1, std::min<int64_t>(num_units, 4))(rng);
    const double eps = std::vector<double>{0, 0.2, 0.5, 1}[rng() % 4];
    std::vector<ClusteringUnit> units;
    std::vector<ValueEdge> edges;
    for (int64_t i = 0; i < num_units; ++i) {
      const bool heavy = rng() % 10 < 6;
      units.push_back({.cost = heavy ? static_cast<double>(1 + rng() % 20) : 0, .heavy = heavy});
      const int64_t bytes = 1 + static_cast<int64_t>(rng() % 900);
      for (int64_t reader = i + 1; reader < num_units; ++reader) {
        if (rng() % 3 == 0) edges.push_back({i, reader, bytes, i});
      }
    }
    double total = 0;
    int64_t heavy_count = 0;
    for (const ClusteringUnit& unit : units) {
      total += unit.cost;
      heavy_count += unit.heavy ? 1 : 0;
    }
    const int64_t h = std::min<int64_t>(3, heavy_count / num_layers);
    const double bound = (1 + eps) * total / static_cast<double>(num_layers);
    auto allowed = [&](const std::vector<int64_t>& starts) {
      for (size_t q = 0; q < starts.size(); ++q) {
        const int64_t end = q + 1 < starts.size() ? starts[q + 1] : num_units;
        if (!AlpaAllows(units, starts[q], end, h, bound)) return false;
      }
      return true;
    };
    auto objective = [&](const std::vector<int64_t>& starts) {
      int64_t worst = 0;
      for (size_t q = 0; q < starts.size(); ++q) {
        const int64_t end = q + 1 < starts.size() ? starts[q + 1] : num_units;
        worst = std::max(worst, NaiveInputBytes(edges, starts[q], end));
      }
      return worst;
    };
    int64_t best = -1;
    std::vector<int64_t> starts = {0};
    ForEachPartition(num_units, num_layers, starts, [&](const std::vector<int64_t>& partition) {
      if (allowed(partition) && (best < 0 || objective(partition) < best)) {
        best = objective(partition);
      }
    });

    const LayerClustering clustering = Cluster(units, edges, num_layers, eps);
    ASSERT_EQ(clustering.layer_of_unit.size(), units.size()) << "instance " << instance;
    std::vector<int64_t> answer;
    for (int64_t i = 0; i < num_units; ++i) {
      const int64_t layer = clustering.layer_of_unit[static_cast<size_t>(i)];
      if (i == 0 || layer != clustering.layer_of_unit[static_cast<size_t>(i - 1)]) {
        ASSERT_EQ(layer, static_cast<int64_t>(answer.size())) << "instance " << instance;
        answer.push_back(i);
      }
    }
    ASSERT_EQ(static_cast<int64_t>(answer.size()), num_layers) << "instance " << instance;
    for (size_t q = 0; q < answer.size(); ++q) {
      const int64_t end = q + 1 < answer.size() ? answer[q + 1] : num_units;
      EXPECT_EQ(clustering.layer_input_bytes[q], NaiveInputBytes(edges, answer[q], end))
          << "instance " << instance << " layer " << q;
    }
    EXPECT_EQ(clustering.objective, objective(answer)) << "instance " << instance;
    if (best < 0) {
      ++infeasible;
      EXPECT_TRUE(clustering.relaxed) << "instance " << instance;
    } else {
      ++feasible;
      EXPECT_FALSE(clustering.relaxed) << "instance " << instance;
      EXPECT_TRUE(allowed(answer)) << "instance " << instance;
      EXPECT_EQ(clustering.objective, best) << "instance " << instance;
    }
  }
  EXPECT_GT(feasible, 200);
  EXPECT_GT(infeasible, 0);
}

TEST(LayerClusteringTest, AutoLayersKeepsTheLargestCountAsCheapAsTwo) {
  // 6 blocks of 3 heavy units; 1000 bytes inside a block, 10 between blocks. Cuts between blocks
  // work up to 4 layers (bound 6.75 admits 2 blocks, 6 FLOPs); 5 layers (bound 5.4) must cut a
  // block.
  std::vector<int64_t> bytes;
  for (int i = 1; i < 18; ++i) bytes.push_back(i % 3 == 0 ? 10 : 1000);
  Result<LayerClustering> clustering =
      ClusterUnitsAutoLayers(HeavyUnits(std::vector<double>(18, 1)), Chain(bytes), 0.5, 0);
  ASSERT_TRUE(clustering.ok()) << clustering.status().message();
  EXPECT_EQ(clustering->layer_costs.size(), 4u);
  EXPECT_EQ(clustering->objective, 10);
}

TEST(LayerClusteringTest, DeterministicOnTwoThousandUnits) {
  // A transformer-like list: every 5th unit heavy; each unit reads the one before and a residual
  // from 7 units back. Timed here to catch a complexity regression; the bound is loose on purpose.
  std::mt19937 rng(7);
  std::vector<ClusteringUnit> units;
  std::vector<int64_t> value_bytes;
  std::vector<ValueEdge> edges;
  for (int64_t i = 0; i < 2000; ++i) {
    const bool heavy = i % 5 == 0;
    units.push_back(
        {.cost = heavy ? 1e9 * static_cast<double>(1 + rng() % 4) : 1e6, .heavy = heavy});
    value_bytes.push_back(1024 * (1 + static_cast<int64_t>(rng() % 64)));
    for (int64_t back : {1, 7}) {
      if (i >= back)
        edges.push_back({i - back, i, value_bytes[static_cast<size_t>(i - back)], i - back});
    }
  }
  const LayerClustering first = Cluster(units, edges, 16);
  EXPECT_FALSE(first.relaxed);
  EXPECT_EQ(first.layer_costs.size(), 16u);
  EXPECT_TRUE(std::is_sorted(first.layer_of_unit.begin(), first.layer_of_unit.end()));
  const LayerClustering second = Cluster(units, edges, 16);
  EXPECT_EQ(first.layer_of_unit, second.layer_of_unit);
  EXPECT_EQ(first.objective, second.objective);
}

// x -> 4 x (dot with W_i, add the broadcast bias, relu), every width 32.
TEST(LayerConstructionTest, FourDenseLayersSplitTwoDotsEach) {
  ir::ModuleBuilder mb("mlp");
  ir::ComputationBuilder b = mb.NewComputation("main");
  ir::Instruction* h = b.Parameter(0, ir::Shape::Array(ir::DType::kF32, {8, 32}), "x");
  for (int64_t i = 0; i < 4; ++i) {
    ir::Instruction* w = b.Parameter(1 + 2 * i, ir::Shape::Array(ir::DType::kF32, {32, 32}));
    ir::Instruction* bias = b.Parameter(2 + 2 * i, ir::Shape::Array(ir::DType::kF32, {32}));
    ir::Instruction* zero = b.Broadcast(b.ConstantScalar(ir::DType::kF32, 0), {8, 32}, {});
    h = b.Maximum(b.Add(b.MatMul(h, w), b.Broadcast(bias, {8, 32}, {1})), zero);
  }
  Result<ir::Computation*> main = b.Build(h);
  ASSERT_TRUE(main.ok()) << main.status().message();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*main);
  ASSERT_TRUE(module.ok()) << module.status().message();

  Result<ComputationUnits> units = ComputationToUnits(**main);
  ASSERT_TRUE(units.ok()) << units.status().message();
  int64_t heavy = 0;
  for (size_t i = 0; i < units->units.size(); ++i) {
    const ir::Instruction* instruction = units->post_order[i];
    heavy += units->units[i].heavy ? 1 : 0;
    if (instruction->opcode() == ir::Opcode::kDot) {
      EXPECT_EQ(units->units[i].cost, 2.0 * 8 * 32 * 32);
    }
    if (instruction->opcode() == ir::Opcode::kParameter) {
      EXPECT_EQ(units->units[i].cost, 0);
    }
  }
  EXPECT_EQ(heavy, 4);
  for (const ValueEdge& edge : units->edges) {
    EXPECT_NE(units->post_order[static_cast<size_t>(edge.producer)]->opcode(),
              ir::Opcode::kParameter);
  }

  Result<std::vector<int64_t>> layers = ClusterComputationIntoLayers(**main, 2);
  ASSERT_TRUE(layers.ok()) << layers.status().message();
  const std::vector<ir::Instruction*> post_order = (*main)->MakePostOrder();
  ASSERT_EQ(layers->size(), post_order.size());
  EXPECT_TRUE(std::is_sorted(layers->begin(), layers->end()));  // contiguous in post order
  std::vector<int64_t> dots(2, 0);
  for (size_t i = 0; i < post_order.size(); ++i) {
    if (post_order[i]->opcode() == ir::Opcode::kDot) ++dots[static_cast<size_t>((*layers)[i])];
  }
  EXPECT_EQ(dots, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(*ClusterComputationIntoLayers(**main, 2), *layers);  // deterministic

  Result<std::vector<int64_t>> too_many = ClusterComputationIntoLayers(**main, 1000);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("num_layers"), std::string::npos);
}

TEST(LayerConstructionTest, ACallThatDoesADotIsHeavy) {
  ir::ModuleBuilder mb("called");
  ir::ComputationBuilder callee = mb.NewComputation("dense");
  ir::Instruction* dot =
      callee.MatMul(callee.Parameter(0, ir::Shape::Array(ir::DType::kF32, {8, 32})),
                    callee.Parameter(1, ir::Shape::Array(ir::DType::kF32, {32, 32})));
  Result<ir::Computation*> dense = callee.Build(dot);
  ASSERT_TRUE(dense.ok()) << dense.status().message();
  ir::ComputationBuilder b = mb.NewComputation("main");
  ir::Instruction* call =
      b.Call(*dense, {b.Parameter(0, ir::Shape::Array(ir::DType::kF32, {8, 32})),
                      b.Parameter(1, ir::Shape::Array(ir::DType::kF32, {32, 32}))});
  Result<ir::Computation*> main = b.Build(b.Tanh(call));
  ASSERT_TRUE(main.ok()) << main.status().message();

  Result<ComputationUnits> units = ComputationToUnits(**main);
  ASSERT_TRUE(units.ok()) << units.status().message();
  ASSERT_EQ(units->units.size(), 4u);  // x, w, call, tanh
  EXPECT_EQ(units->post_order[2]->opcode(), ir::Opcode::kCall);
  EXPECT_TRUE(units->units[2].heavy);
  EXPECT_EQ(units->units[2].cost, 2.0 * 8 * 32 * 32);
  EXPECT_FALSE(units->units[3].heavy);
  ASSERT_EQ(units->edges.size(), 1u);  // call -> tanh; the parameters send nothing
  EXPECT_EQ(units->edges[0].bytes, 8 * 32 * 4);
}

}  // namespace
}  // namespace alpa::pipeline
