// The strategy sets of a whole computation, generated in post order.
//
// Every instruction that decides a layout gets a StrategySet (a node). Tuple instructions decide
// nothing: each of their leaves is a value of some other node, so a tuple of N operands does not
// multiply their choices. A value is (node, leaf); `SourceOf` resolves an instruction's leaf
// through tuples and get-tuple-elements of tuples to the node that produces it. A get-tuple-element
// of a non-tuple instruction (a while, a variadic reduce) is a node that follows its operand,
// keeping the selected leaf.
//
//   StrategyGraph graph;
//   ALPA_RETURN_IF_ERROR(GenerateStrategies(computation, context, DispatchStrategies, graph));
//
// The generator is a parameter so that the walk can be tested with fake generators; the real one
// is DispatchStrategies (strategy_dispatch.h).
#ifndef ALPA_SHARDING_STRATEGY_GRAPH_H_
#define ALPA_SHARDING_STRATEGY_GRAPH_H_

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/computation.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

struct ValueSource {
  int64_t node = -1;
  int64_t leaf = 0;
  friend bool operator==(const ValueSource&, const ValueSource&) = default;
};

struct StrategyNode {
  const ir::Instruction* instruction = nullptr;
  StrategySet set;
};

struct StrategyGraph {
  std::vector<StrategyNode> nodes;  // post order

  // The node of an instruction that is a node, else -1.
  int64_t NodeOf(const ir::Instruction& instruction) const;
  // The producer of leaf `leaf` of `instruction`'s result (instruction must have been walked).
  ValueSource SourceOf(const ir::Instruction& instruction, int64_t leaf) const;
  // The producers of all leaves of `instruction`'s result, in leaf order.
  std::vector<ValueSource> SourcesOf(const ir::Instruction& instruction) const;

  std::unordered_map<const ir::Instruction*, int64_t> node_index;  // lookups only
  // Leaf sources of tuple instructions (which are not nodes).
  std::unordered_map<const ir::Instruction*, std::vector<ValueSource>> tuple_sources;
};

using StrategyGenerator =
    std::function<Result<StrategySet>(const ir::Instruction&, const StrategyContext&)>;

// Walks `computation` in post order, calling `generate` for every instruction that is a node.
// `context.strategies_of` is set by the walk (it answers for operands already generated; for a
// get-tuple-element of a tuple it answers with the selected operand's set), and so is
// `context.user_count` (distinct readers in the computation, the root one more, looking through
// a chain of single transposes, reshapes, bitcasts, copies and converts). Every strategy of a node
// that is a kernel of its own gets the kernel's launch (cost::LaunchSeconds) added to its compute
// seconds, once: the generators divide only the roofline time by the parallelism. Errors from a
// generator come back with the instruction's name and location added.
Status GenerateStrategies(const ir::Computation& computation, StrategyContext context,
                          const StrategyGenerator& generate, StrategyGraph& graph);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_STRATEGY_GRAPH_H_
