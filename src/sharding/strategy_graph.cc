#include "sharding/strategy_graph.h"

#include <fmt/format.h>

#include <deque>
#include <memory>
#include <unordered_set>

#include "cost/compute_cost.h"

namespace alpa::sharding {
namespace {

// Index of the first leaf of tuple element `index` among the leaves of `shape`.
int64_t FirstLeafOfElement(const ir::Shape& shape, int64_t index) {
  int64_t first = 0;
  for (int64_t k = 0; k < index; ++k) first += shape.tuple_shape(k).LeafCount();
  return first;
}

// A get-tuple-element whose operand is a tuple instruction (or another such alias) is a view,
// not a node.
bool IsTupleView(const ir::Instruction& instruction, const StrategyGraph& graph) {
  if (instruction.opcode() == ir::Opcode::kTuple) return true;
  if (instruction.opcode() != ir::Opcode::kGetTupleElement) return false;
  return graph.tuple_sources.count(instruction.operand(0)) > 0;
}

// The node for a get-tuple-element of a node: it follows its operand, keeping one element's
// leaves; its operand requirement is the operand's own layout, so the edge costs nothing.
StrategySet GetTupleElementSet(const ir::Instruction& gte, const StrategySet& operand) {
  const ir::Shape& tuple = gte.operand(0)->shape();
  const int64_t index = gte.attributes().tuple_index;
  const int64_t first = FirstLeafOfElement(tuple, index);
  const int64_t count = tuple.tuple_shape(index).LeafCount();
  StrategySet set;
  set.follows_operand = 0;
  for (const Strategy& source : operand.strategies) {
    Strategy strategy;
    strategy.name = source.name;
    strategy.output.assign(source.output.begin() + first, source.output.begin() + first + count);
    strategy.operands = {source.output};
    set.strategies.push_back(std::move(strategy));
  }
  return set;
}

// The generators' contract: one output spec per result leaf, one spec per operand leaf.
void CheckStrategyArity(const ir::Instruction& instruction, const StrategySet& set) {
  ALPA_CHECK(!set.strategies.empty(), "strategy generator gave {} no strategy", instruction.name());
  for (const Strategy& strategy : set.strategies) {
    ALPA_CHECK(static_cast<int64_t>(strategy.output.size()) == instruction.shape().LeafCount() &&
                   static_cast<int64_t>(strategy.operands.size()) == instruction.operand_count(),
               "strategy '{}' of {} has {} outputs and {} operands", strategy.name,
               instruction.name(), strategy.output.size(), strategy.operands.size());
    for (int64_t o = 0; o < instruction.operand_count(); ++o) {
      ALPA_CHECK(static_cast<int64_t>(strategy.operands[static_cast<size_t>(o)].size()) ==
                     instruction.operand(o)->shape().LeafCount(),
                 "strategy '{}' of {}: operand {} has the wrong number of leaf specs",
                 strategy.name, instruction.name(), o);
    }
  }
}

using Readers = std::unordered_map<const ir::Instruction*, std::vector<const ir::Instruction*>>;

// Readers of `instruction`, looking through a chain of single readers that pass a partial sum on
// unchanged (a weight gradient's dot is read by its transpose only, which both optimizer moments
// read).
int64_t UserCount(const Readers& readers, const ir::Instruction& instruction) {
  const ir::Instruction* value = &instruction;
  for (;;) {
    auto it = readers.find(value);
    if (it == readers.end()) return 0;
    const std::vector<const ir::Instruction*>& users = it->second;
    if (users.size() != 1 || users[0] == nullptr) return static_cast<int64_t>(users.size());
    switch (users[0]->opcode()) {
      case ir::Opcode::kTranspose:
      case ir::Opcode::kReshape:
      case ir::Opcode::kBitcast:
      case ir::Opcode::kCopy:
      case ir::Opcode::kConvert:
        value = users[0];
        break;
      default:
        return 1;
    }
  }
}

}  // namespace

int64_t StrategyGraph::NodeOf(const ir::Instruction& instruction) const {
  auto it = node_index.find(&instruction);
  return it == node_index.end() ? -1 : it->second;
}

ValueSource StrategyGraph::SourceOf(const ir::Instruction& instruction, int64_t leaf) const {
  if (auto it = tuple_sources.find(&instruction); it != tuple_sources.end()) {
    return it->second[static_cast<size_t>(leaf)];
  }
  const int64_t node = NodeOf(instruction);
  ALPA_CHECK(node >= 0, "strategy graph: {} has not been walked", instruction.name());
  return ValueSource{node, leaf};
}

std::vector<ValueSource> StrategyGraph::SourcesOf(const ir::Instruction& instruction) const {
  std::vector<ValueSource> sources;
  const int64_t leaves = instruction.shape().LeafCount();
  for (int64_t leaf = 0; leaf < leaves; ++leaf) sources.push_back(SourceOf(instruction, leaf));
  return sources;
}

Status GenerateStrategies(const ir::Computation& computation, StrategyContext context,
                          const StrategyGenerator& generate, StrategyGraph& graph) {
  // Sets of values that are one leaf of a multi-leaf node, projected to that leaf, so that a
  // generator always sees the operand's own layout as output[0]. A deque keeps references valid.
  std::deque<StrategySet> projections;
  context.strategies_of = [&graph,
                           &projections](const ir::Instruction& operand) -> const StrategySet& {
    const ValueSource source = graph.SourceOf(operand, 0);
    const StrategySet& set = graph.nodes[static_cast<size_t>(source.node)].set;
    const bool whole = operand.shape().LeafCount() == 1 && source.leaf == 0 &&
                       !set.strategies.empty() && set.strategies.front().output.size() == 1;
    if (whole || operand.shape().IsTuple()) return set;
    StrategySet& projected = projections.emplace_back();
    for (const Strategy& strategy : set.strategies) {
      Strategy leaf = strategy;
      leaf.output = {strategy.output[static_cast<size_t>(source.leaf)]};
      projected.strategies.push_back(std::move(leaf));
    }
    return projected;
  };

  const std::vector<ir::Instruction*> order = computation.MakePostOrder();
  auto readers = std::make_shared<Readers>();
  for (const ir::Instruction* instruction : order) {
    std::unordered_set<const ir::Instruction*> operands(instruction->operands().begin(),
                                                        instruction->operands().end());
    for (const ir::Instruction* operand : operands) (*readers)[operand].push_back(instruction);
  }
  (*readers)[computation.root()].push_back(nullptr);  // the computation's result is read too
  context.user_count = [readers](const ir::Instruction& instruction) {
    return UserCount(*readers, instruction);
  };

  for (const ir::Instruction* instruction : order) {
    if (IsTupleView(*instruction, graph)) {
      std::vector<ValueSource>& sources = graph.tuple_sources[instruction];
      if (instruction->opcode() == ir::Opcode::kTuple) {
        for (const ir::Instruction* operand : instruction->operands()) {
          for (const ValueSource& source : graph.SourcesOf(*operand)) sources.push_back(source);
        }
      } else {
        const ir::Instruction& tuple = *instruction->operand(0);
        const int64_t index = instruction->attributes().tuple_index;
        const int64_t first = FirstLeafOfElement(tuple.shape(), index);
        for (int64_t k = 0; k < instruction->shape().LeafCount(); ++k) {
          sources.push_back(graph.SourceOf(tuple, first + k));
        }
      }
      continue;
    }
    Result<StrategySet> set =
        instruction->opcode() == ir::Opcode::kGetTupleElement
            ? Result<StrategySet>(GetTupleElementSet(
                  *instruction,
                  graph.nodes[static_cast<size_t>(graph.SourceOf(*instruction->operand(0), 0).node)]
                      .set))
            : generate(*instruction, context);
    if (!set.ok()) {
      const ir::SourceLocation& at = instruction->location();
      return set.status().WithContext(
          at.known()
              ? fmt::format("{} (line {}, column {})", instruction->name(), at.line, at.column)
              : instruction->name());
    }
    CheckStrategyArity(*instruction, *set);
    const double launch = cost::LaunchSeconds(
        *instruction, context.device, context.fused != nullptr ? *context.fused : cost::NoFusion());
    for (Strategy& strategy : set->strategies) strategy.compute_seconds += launch;
    graph.node_index[instruction] = static_cast<int64_t>(graph.nodes.size());
    graph.nodes.push_back(StrategyNode{instruction, std::move(*set)});
  }
  return Status::Ok();
}

}  // namespace alpa::sharding
