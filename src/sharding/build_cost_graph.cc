#include "sharding/build_cost_graph.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "ir/dtype.h"
#include "sharding/follow_util.h"
#include "sharding/strategy_util.h"

namespace alpa::sharding {
namespace {

// Edge matrices memoised by everything they depend on: the leaf's shape, the source's output
// layouts (rows), the user's required layouts (columns) and whether only the diagonal is priced.
// Identical transformer layers repeat the same edges layer after layer, so each distinct matrix is
// priced once; single prices are memoised by (shape, from, to) across edges as well, since
// strategy sets repeat specs a lot.
class EdgePricer {
 public:
  explicit EdgePricer(const ReshardCostModel& model) : model_(model) {}

  const std::vector<double>& Matrix(const ir::Shape& leaf, std::vector<ShardingSpec> rows,
                                    std::vector<ShardingSpec> cols, bool diagonal_only) {
    MatrixKey key{{leaf.dims(), ir::DTypeByteSize(leaf.dtype())},
                  diagonal_only,
                  std::move(rows),
                  std::move(cols)};
    auto it = matrices_.find(key);
    if (it != matrices_.end()) return it->second;
    const size_t num_rows = key.rows.size();
    const size_t num_cols = key.cols.size();
    std::vector<double> seconds(num_rows * num_cols, 0.0);
    for (size_t i = 0; i < num_rows; ++i) {
      for (size_t j = diagonal_only ? i : 0; j < (diagonal_only ? i + 1 : num_cols); ++j) {
        seconds[i * num_cols + j] = Price(key.leaf, key.rows[i], key.cols[j]);
      }
    }
    return matrices_.emplace(std::move(key), std::move(seconds)).first->second;
  }

 private:
  using LeafKey = std::pair<std::vector<int64_t>, int64_t>;  // dims, element bytes
  struct MatrixKey {
    LeafKey leaf;
    bool diagonal_only = false;
    std::vector<ShardingSpec> rows;
    std::vector<ShardingSpec> cols;
    friend auto operator<=>(const MatrixKey&, const MatrixKey&) = default;
  };

  double Price(const LeafKey& leaf, const ShardingSpec& from, const ShardingSpec& to) {
    if (from == to) return 0;
    auto [it, inserted] = prices_.try_emplace({leaf, from, to}, 0.0);
    if (inserted) it->second = model_.ReshardSeconds(from, to, leaf.first, leaf.second);
    return it->second;
  }

  const ReshardCostModel& model_;
  std::map<MatrixKey, std::vector<double>> matrices_;
  std::map<std::tuple<LeafKey, ShardingSpec, ShardingSpec>, double> prices_;
};

}  // namespace

std::vector<OperandLeaf> OperandLeaves(const ir::Instruction& instruction) {
  std::vector<OperandLeaf> leaves;
  for (int64_t o = 0; o < instruction.operand_count(); ++o) {
    const std::vector<const ir::Shape*> shapes = ShapeLeaves(instruction.operand(o)->shape());
    for (size_t l = 0; l < shapes.size(); ++l) {
      leaves.push_back(OperandLeaf{o, static_cast<int64_t>(l), shapes[l]});
    }
  }
  return leaves;
}

CostGraph BuildCostGraph(const StrategyGraph& graph, const cost::Liveness& liveness,
                         const ReshardCostModel& reshard_cost,
                         const std::vector<CarriedValue>& carried,
                         const std::vector<ValueSource>& whole) {
  CostGraph cost_graph;
  cost_graph.nodes.reserve(graph.nodes.size());
  for (const StrategyNode& node : graph.nodes) {
    CostGraphNode& out = cost_graph.nodes.emplace_back();
    const cost::BufferInterval& buffer = liveness.BufferOf(node.instruction);
    for (const Strategy& strategy : node.set.strategies) {
      out.seconds.push_back(strategy.compute_seconds + strategy.communication_seconds);
      // An alias or a fused value allocates nothing (its operands' intervals cover it), as in the
      // liveness the chosen plan's peak is computed from.
      out.memory_bytes.push_back(buffer.alias ? 0 : strategy.memory_bytes);
    }
    out.live = solver::Interval{buffer.start, buffer.end};
    if (node.set.follows_operand >= 0) {
      out.follows = graph.SourceOf(*node.instruction->operand(node.set.follows_operand), 0).node;
    }
  }

  EdgePricer pricer(reshard_cost);
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    const StrategyNode& user = graph.nodes[v];
    for (const OperandLeaf& operand : OperandLeaves(*user.instruction)) {
      const ValueSource source =
          graph.SourceOf(*user.instruction->operand(operand.operand), operand.leaf);
      const bool followed =
          cost_graph.nodes[v].follows == source.node && user.set.follows_operand == operand.operand;
      std::vector<ShardingSpec> rows;
      for (const Strategy& strategy :
           graph.nodes[static_cast<size_t>(source.node)].set.strategies) {
        rows.push_back(strategy.output[static_cast<size_t>(source.leaf)]);
      }
      std::vector<ShardingSpec> cols;
      for (const Strategy& strategy : user.set.strategies) {
        cols.push_back(strategy.operands[static_cast<size_t>(operand.operand)]
                                        [static_cast<size_t>(operand.leaf)]);
      }
      CostGraphEdge& edge = cost_graph.edges.emplace_back();
      edge.from = source.node;
      edge.to = static_cast<int64_t>(v);
      edge.seconds = pricer.Matrix(*operand.shape, std::move(rows), std::move(cols), followed);
    }
  }
  auto output_specs = [&graph](int64_t node) {
    std::vector<ShardingSpec> specs;
    for (const Strategy& strategy : graph.nodes[static_cast<size_t>(node)].set.strategies) {
      specs.push_back(strategy.output[0]);
    }
    return specs;
  };
  for (const CarriedValue& value : carried) {
    if (value.next == value.parameter) continue;
    CostGraphEdge& edge = cost_graph.edges.emplace_back();
    edge.from = value.next;
    edge.to = value.parameter;
    edge.seconds =
        pricer.Matrix(graph.nodes[static_cast<size_t>(value.parameter)].instruction->shape(),
                      output_specs(value.next), output_specs(value.parameter), false);
  }
  for (const ValueSource& value : whole) {
    const StrategyNode& node = graph.nodes[static_cast<size_t>(value.node)];
    const ir::Shape& shape = node.instruction->shape();
    const ir::Shape& leaf = shape.IsTuple() ? shape.tuple_shape(value.leaf) : shape;
    std::vector<double>& seconds = cost_graph.nodes[static_cast<size_t>(value.node)].seconds;
    for (size_t j = 0; j < seconds.size(); ++j) {
      const ShardingSpec& produced = node.set.strategies[j].output[static_cast<size_t>(value.leaf)];
      seconds[j] += reshard_cost.ReshardSeconds(produced, WithoutPartial(produced), leaf.dims(),
                                                ir::DTypeByteSize(leaf.dtype()));
    }
  }
  return cost_graph;
}

Result<std::vector<CarriedValue>> CarriedValues(
    const std::map<std::string, std::string>& next_values, const ir::Computation& computation,
    const StrategyGraph& graph) {
  std::vector<CarriedValue> carried;
  const ir::InstructionIndex by_name(computation);
  for (const auto& [parameter_name, next_name] : next_values) {
    const ir::Instruction* parameter = by_name.Find(parameter_name);
    const ir::Instruction* next = by_name.Find(next_name);
    if (parameter == nullptr || parameter->opcode() != ir::Opcode::kParameter) {
      return NotFound("next values: '{}' is not a parameter of '{}'", parameter_name,
                      computation.name());
    }
    if (next == nullptr) {
      return NotFound("next value of %{}: '{}' is not an instruction of '{}'", parameter_name,
                      next_name, computation.name());
    }
    if (!parameter->shape().IsArray() || !parameter->shape().Compatible(next->shape())) {
      return InvalidArgument("next value of %{}: %{} has another shape", parameter_name, next_name);
    }
    const ValueSource source = graph.SourceOf(*next, 0);
    if (source.leaf != 0) {
      return InvalidArgument("next value of %{}: %{} is one element of a tuple-shaped result",
                             parameter_name, next_name);
    }
    carried.push_back(CarriedValue{source.node, graph.NodeOf(*parameter)});
  }
  return carried;
}

Result<std::vector<ValueSource>> WholeValues(const std::vector<std::string>& names,
                                             const ir::Computation& computation,
                                             const StrategyGraph& graph) {
  std::vector<ValueSource> whole;
  const ir::InstructionIndex by_name(computation);
  for (const std::string& name : names) {
    const ir::Instruction* value = by_name.Find(name);
    if (value == nullptr) {
      return NotFound("whole values: '{}' is not an instruction of '{}'", name, computation.name());
    }
    const ValueSource source = graph.SourceOf(*value, 0);
    if (source.node >= 0 && std::ranges::find(whole, source) == whole.end()) {
      whole.push_back(source);
    }
  }
  return whole;
}

}  // namespace alpa::sharding
