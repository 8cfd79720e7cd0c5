#include "spmd/partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "ir/builder.h"
#include "sharding/build_cost_graph.h"
#include "sharding/resharding.h"
#include "sharding/strategy_util.h"
#include "spmd/handlers.h"
#include "spmd/literal_split.h"
#include "spmd/mesh_groups.h"
#include "spmd/reshard.h"
#include "spmd/spmd_builder.h"

namespace alpa::spmd {
namespace {

using sharding::LeafSpecs;
using sharding::ShardingSpec;
using sharding::Strategy;

std::string Name(const ir::Instruction& instruction) { return "%" + instruction.name(); }

// The local shape of a (possibly tuple) shape whose leaves are laid out by `specs` from `next`.
Result<ir::Shape> LocalShapeOf(const ir::Shape& shape, const LeafSpecs& specs, size_t& next,
                               const std::vector<int64_t>& mesh_shape, const std::string& what) {
  if (!shape.IsTuple()) {
    if (!shape.IsArray()) return shape;  // a token: nothing to split
    if (next >= specs.size()) return Internal("{}: fewer layouts than result leaves", what);
    return LocalShape(shape, specs[next++], mesh_shape, what);
  }
  std::vector<ir::Shape> elements;
  for (const ir::Shape& element : shape.tuple_shapes()) {
    ALPA_ASSIGN_OR_RETURN(ir::Shape local, LocalShapeOf(element, specs, next, mesh_shape, what));
    elements.push_back(std::move(local));
  }
  return ir::Shape::Tuple(std::move(elements));
}

// The strategy's own collectives after the local op. A reduce combines the tiles' partial
// reductions with its own reducer; every other op's pending values are sums.
Result<ir::Instruction*> EmitStrategyCollectives(SpmdBuilder& s, const ir::Instruction& instruction,
                                                 const Strategy& strategy,
                                                 const std::vector<int64_t>& scatter_dims,
                                                 ir::Instruction* x) {
  ir::Computation* reducer = nullptr;
  if (instruction.opcode() == ir::Opcode::kReduce && !strategy.collectives.empty()) {
    ALPA_ASSIGN_OR_RETURN(reducer, s.CopyComputation(*instruction.to_apply()));
  }
  for (size_t c = 0; c < strategy.collectives.size(); ++c) {
    const sharding::StrategyCollective& collective = strategy.collectives[c];
    const int64_t input_bytes = x->shape().ByteSize();
    if (collective.kind == cost::CollectiveKind::kAllReduce) {
      x = s.AllReduce(x, collective.axes, reducer);
    } else {
      // The axes in the order they split the dimension (tile k to member k).
      const std::vector<int64_t>& dim_axes =
          strategy.output[0].dim_axes[static_cast<size_t>(scatter_dims[c])];
      const std::vector<int64_t> ordered(
          dim_axes.end() - static_cast<std::ptrdiff_t>(collective.axes.size()), dim_axes.end());
      x = s.ReduceScatter(x, scatter_dims[c], ordered, reducer);
    }
    if (!s.b().status().ok()) return s.b().status().WithContext(Name(instruction));
    if (input_bytes != collective.bytes) {
      return Internal("{}: strategy '{}' prices its {} at {} B but the tile is {} B",
                      Name(instruction), strategy.name, cost::CollectiveKindName(collective.kind),
                      collective.bytes, input_bytes);
    }
  }
  return x;
}

struct LocalValue {
  ir::Instruction* local = nullptr;
  LeafSpecs specs;  // per result leaf
};

class Partitioner {
 public:
  Partitioner(const ir::Computation& computation, const sharding::ShardingSolution& solution,
              const std::vector<int64_t>& mesh_shape, const PartitionOptions& options)
      : computation_(computation),
        solution_(solution),
        options_(options),
        module_(computation.parent() != nullptr ? computation.parent()->name() + "_spmd"
                                                : computation.name() + "_spmd"),
        builder_(module_.NewComputation(computation.name())),
        s_(module_, builder_, mesh_shape) {}

  Result<std::unique_ptr<ir::Module>> Run() {
    for (const auto& instruction : computation_.instructions())
      module_.ClaimName(instruction->name());
    for (const ir::Instruction* instruction : computation_.MakePostOrder()) {
      if (solution_.graph.NodeOf(*instruction) >= 0) {
        ALPA_RETURN_IF_ERROR(PartitionNode(*instruction));
      } else {
        ALPA_RETURN_IF_ERROR(PartitionView(*instruction));
      }
    }
    const ir::Instruction* root = computation_.root();
    ir::Instruction* local_root = values_.at(root).local;
    if (root->shape().IsArray() && options_.result_specs.contains(0)) {
      ALPA_ASSIGN_OR_RETURN(local_root, EmitReshard(s_, local_root, values_.at(root).specs[0],
                                                    options_.result_specs.at(0), root->shape(),
                                                    "the result " + Name(*root)));
    }
    ALPA_ASSIGN_OR_RETURN(ir::Computation * entry, builder_.Build(local_root));
    // A broadcast every reader took broadcast again (ReadArray) is read by none: never run it.
    if (broadcast_again_) entry->RemoveDeadInstructions();
    module_.module()->mutable_config().num_partitions = DeviceCount(s_.mesh_shape());
    return module_.Build(entry);
  }

 private:
  Status PartitionNode(const ir::Instruction& instruction) {
    const int64_t node = solution_.graph.NodeOf(instruction);
    const Strategy& strategy = solution_.Chosen(node);
    OpInput input{instruction, strategy, {}, {}, ir::Shape()};
    for (int64_t o = 0; o < instruction.operand_count(); ++o) {
      const ir::Instruction& operand = *instruction.operand(o);
      const LocalValue& value = values_.at(&operand);
      const LeafSpecs& required = strategy.operands[static_cast<size_t>(o)];
      const std::string what =
          fmt::format("operand {} ({}) of {}", o, Name(operand), Name(instruction));
      if (operand.shape().IsArray()) {
        ALPA_ASSIGN_OR_RETURN(ir::Instruction * local,
                              ReadArray(operand, value, required[0], what));
        input.operands.push_back(local);
      } else if (value.specs == required) {
        input.operands.push_back(value.local);
      } else {
        return Unimplemented("{}: a tuple-shaped operand read in another layout", what);
      }
    }
    std::vector<int64_t> scatter_dims;
    ALPA_ASSIGN_OR_RETURN(input.output,
                          sharding::LayoutBeforeCollectives(instruction, strategy, &scatter_dims));
    size_t next = 0;
    ALPA_ASSIGN_OR_RETURN(input.local_shape, LocalShapeOf(instruction.shape(), input.output, next,
                                                          s_.mesh_shape(), Name(instruction)));
    const Handler handler = FindHandler(instruction.opcode());
    if (handler == nullptr) {
      return Unimplemented("{} ({}): the SPMD partitioner has no handler for this op yet",
                           Name(instruction), ir::OpcodeName(instruction.opcode()));
    }
    ALPA_ASSIGN_OR_RETURN(ir::Instruction * local, handler(s_, input));
    local->set_name(instruction.name());
    ALPA_ASSIGN_OR_RETURN(local,
                          EmitStrategyCollectives(s_, instruction, strategy, scatter_dims, local));
    values_[&instruction] = LocalValue{local, strategy.output};
    return Status::Ok();
  }

  // The tile of the array `operand` laid out by `to`. A broadcast that reaches `to` by slicing
  // is broadcast again from its operand's tile (sliced as `to` implies), rather than written out
  // whole and sliced: a loop then reads the new broadcast in place, and the memory model counts
  // no copy of it (sharding::LoweringOf).
  Result<ir::Instruction*> ReadArray(const ir::Instruction& operand, const LocalValue& value,
                                     const ShardingSpec& to, const std::string& what) {
    const ShardingSpec& from = value.specs[0];
    if (operand.opcode() != ir::Opcode::kBroadcast ||
        value.local->opcode() != ir::Opcode::kBroadcast || from == to ||
        !sharding::ReachedBySlicing(from, to)) {
      return EmitReshard(s_, value.local, from, to, operand.shape(), what);
    }
    const std::vector<int64_t>& dimensions = operand.attributes().dimensions;
    ALPA_ASSIGN_OR_RETURN(
        ir::Instruction * source,
        EmitReshard(s_, value.local->operand(0), sharding::BroadcastOperandSpec(from, dimensions),
                    sharding::BroadcastOperandSpec(to, dimensions), operand.operand(0)->shape(),
                    what));
    ALPA_ASSIGN_OR_RETURN(const ir::Shape local,
                          LocalShape(operand.shape(), to, s_.mesh_shape(), what));
    broadcast_again_ = true;
    return s_.b().Broadcast(source, local.dims(), dimensions);
  }

  // Tuples and get-tuple-elements of tuples: views of other nodes' values.
  Status PartitionView(const ir::Instruction& instruction) {
    LocalValue value;
    if (instruction.opcode() == ir::Opcode::kTuple) {
      std::vector<ir::Instruction*> elements;
      for (int64_t o = 0; o < instruction.operand_count(); ++o) {
        const ir::Instruction& operand = *instruction.operand(o);
        const LocalValue& element = values_.at(&operand);
        ir::Instruction* local = element.local;
        LeafSpecs specs = element.specs;
        // The result leaves asked for in another layout (flat result tuples).
        const auto wanted = options_.result_specs.find(o);
        if (&instruction == computation_.root() && wanted != options_.result_specs.end() &&
            operand.shape().IsArray()) {
          ALPA_ASSIGN_OR_RETURN(
              local, EmitReshard(s_, local, specs[0], wanted->second, operand.shape(),
                                 fmt::format("result element {} ({})", o, Name(operand))));
          specs = {wanted->second};
        }
        elements.push_back(local);
        value.specs.insert(value.specs.end(), specs.begin(), specs.end());
      }
      value.local = builder_.Tuple(std::move(elements));
    } else if (instruction.opcode() == ir::Opcode::kGetTupleElement) {
      const ir::Instruction& tuple = *instruction.operand(0);
      const LocalValue& whole = values_.at(&tuple);
      const int64_t index = instruction.attributes().tuple_index;
      int64_t first = 0;
      for (int64_t k = 0; k < index; ++k) first += tuple.shape().tuple_shape(k).LeafCount();
      const int64_t count = instruction.shape().LeafCount();
      value.specs.assign(whole.specs.begin() + first, whole.specs.begin() + first + count);
      value.local = builder_.GetTupleElement(whole.local, index);
    } else {
      return Internal("{} ({}) has no chosen strategy: the solution is not for computation %{}",
                      Name(instruction), ir::OpcodeName(instruction.opcode()), computation_.name());
    }
    if (value.local == nullptr) return builder_.status().WithContext(Name(instruction));
    value.local->set_name(instruction.name());
    values_[&instruction] = std::move(value);
    return Status::Ok();
  }

  const ir::Computation& computation_;
  const sharding::ShardingSolution& solution_;
  const PartitionOptions& options_;
  ir::ModuleBuilder module_;
  ir::ComputationBuilder builder_;
  SpmdBuilder s_;
  std::unordered_map<const ir::Instruction*, LocalValue> values_;
  bool broadcast_again_ = false;  // some reader took a broadcast broadcast again (ReadArray)
};

}  // namespace

Handler FindHandler(ir::Opcode opcode) {
  switch (opcode) {
    case ir::Opcode::kParameter:
    case ir::Opcode::kConstant:
    case ir::Opcode::kIota:
      return HandleSource;
    case ir::Opcode::kCompare:
    case ir::Opcode::kSelect:
    case ir::Opcode::kClamp:
    case ir::Opcode::kConvert:
      return HandleElementwise;
    case ir::Opcode::kDot:
      return HandleDot;
    case ir::Opcode::kReduce:
      return HandleReduce;
    case ir::Opcode::kBroadcast:
    case ir::Opcode::kTranspose:
    case ir::Opcode::kReverse:
    case ir::Opcode::kReshape:
      return HandleShape;
    case ir::Opcode::kConvolution:
    case ir::Opcode::kReduceWindow:
    case ir::Opcode::kSelectAndScatter:
      return HandleWindow;
    case ir::Opcode::kSlice:
    case ir::Opcode::kPad:
    case ir::Opcode::kConcatenate:
    case ir::Opcode::kDynamicSlice:
    case ir::Opcode::kDynamicUpdateSlice:
      return HandleSlice;
    case ir::Opcode::kGather:
    case ir::Opcode::kScatter:
      return HandleGatherScatter;
    case ir::Opcode::kGetTupleElement:
    case ir::Opcode::kCustomCall:
      return HandleTupleAndMarkers;
    case ir::Opcode::kSort:
    case ir::Opcode::kTopK:
      return HandleSort;
    case ir::Opcode::kBatchNormTraining:
    case ir::Opcode::kBatchNormInference:
    case ir::Opcode::kBatchNormGrad:
      return HandleBatchNorm;
    case ir::Opcode::kWhile:
    case ir::Opcode::kConditional:
    case ir::Opcode::kCall:
    case ir::Opcode::kAfterAll:
    case ir::Opcode::kAddDependency:
    case ir::Opcode::kRng:
    case ir::Opcode::kRngBitGenerator:
    case ir::Opcode::kRngGetAndUpdateState:
      return HandleReplicated;
    default:
      break;
  }
  if (ir::IsElementwiseUnary(opcode) || ir::IsElementwiseBinary(opcode)) return HandleElementwise;
  return nullptr;
}

Result<ir::Instruction*> EmitLocal(SpmdBuilder& s, const OpInput& input) {
  return EmitLocalWith(s, input, input.operands, input.original.attributes());
}

Result<ir::Instruction*> EmitLocalWith(SpmdBuilder& s, const OpInput& input,
                                       std::vector<ir::Instruction*> operands,
                                       ir::Attributes attributes) {
  const ir::Instruction& original = input.original;
  std::vector<ir::Computation*> called;
  for (const ir::Computation* callee : original.called_computations()) {
    ALPA_ASSIGN_OR_RETURN(ir::Computation * copy, s.CopyComputation(*callee));
    called.push_back(copy);
  }
  attributes.sharding.clear();  // a global layout annotation; the program is per device
  ir::Instruction* local =
      s.b().AddInstruction(original.opcode(), std::move(operands), std::move(attributes),
                           std::move(called), input.local_shape);
  if (local == nullptr) return s.b().status().WithContext(Name(original));
  if (!local->shape().Compatible(input.local_shape)) {
    return Internal("{}: the local op has shape {} where its layout {} gives {}", Name(original),
                    local->shape().ToString(false),
                    input.output.empty() ? "" : sharding::ToString(input.output[0]),
                    input.local_shape.ToString(false));
  }
  return local;
}

std::vector<ShardingSpec> ResultSpecs(const ir::Computation& computation,
                                      const sharding::ShardingSolution& solution,
                                      const PartitionOptions& options) {
  std::vector<ShardingSpec> specs;
  const std::vector<sharding::ValueSource> sources = solution.graph.SourcesOf(*computation.root());
  for (size_t leaf = 0; leaf < sources.size(); ++leaf) {
    auto wanted = options.result_specs.find(static_cast<int64_t>(leaf));
    specs.push_back(
        wanted != options.result_specs.end()
            ? wanted->second
            : solution.Chosen(sources[leaf].node).output[static_cast<size_t>(sources[leaf].leaf)]);
  }
  return specs;
}

Result<std::map<std::string, int64_t>> NextValueLeaves(
    const ir::Computation& computation, const sharding::ShardingSolution& solution,
    const std::map<std::string, std::string>& next_values) {
  const std::vector<sharding::ValueSource> sources = solution.graph.SourcesOf(*computation.root());
  std::map<std::string, int64_t> leaves;
  const ir::InstructionIndex by_name(computation);
  for (const auto& [parameter_name, next_name] : next_values) {
    const ir::Instruction* parameter = by_name.Find(parameter_name);
    const ir::Instruction* next = by_name.Find(next_name);
    if (parameter == nullptr || parameter->opcode() != ir::Opcode::kParameter) {
      return NotFound("next values: '{}' is not a parameter of %{}", parameter_name,
                      computation.name());
    }
    if (next == nullptr) {
      return NotFound("next value of %{}: no instruction %{} in %{}", parameter_name, next_name,
                      computation.name());
    }
    const sharding::ValueSource source = solution.graph.SourceOf(*next, 0);
    auto it = std::find(sources.begin(), sources.end(), source);
    if (it == sources.end()) {
      return InvalidArgument("next value of %{}: %{} is not in the result of %{}", parameter_name,
                             next_name, computation.name());
    }
    leaves[parameter_name] = it - sources.begin();
  }
  return leaves;
}

Result<std::map<int64_t, ShardingSpec>> NextValueResultSpecs(
    const ir::Computation& computation, const sharding::ShardingSolution& solution,
    const std::map<std::string, std::string>& next_values) {
  Result<std::map<std::string, int64_t>> leaves =
      NextValueLeaves(computation, solution, next_values);
  if (!leaves.ok()) return leaves.status();
  std::map<int64_t, ShardingSpec> specs;
  const ir::InstructionIndex by_name(computation);
  for (const auto& [parameter_name, leaf] : *leaves) {
    const ir::Instruction& parameter = *by_name.Find(parameter_name);
    specs[leaf] = solution.Chosen(solution.graph.NodeOf(parameter)).output[0];
  }
  return specs;
}

Result<std::unique_ptr<ir::Module>> PartitionComputation(const ir::Computation& computation,
                                                         const sharding::ShardingSolution& solution,
                                                         const std::vector<int64_t>& mesh_shape,
                                                         const PartitionOptions& options) {
  if (solution.choice.size() != solution.graph.nodes.size() ||
      (!solution.graph.nodes.empty() &&
       solution.graph.nodes.front().instruction->parent() != &computation)) {
    return InvalidArgument("partitioning %{}: the sharding solution is for another computation",
                           computation.name());
  }
  for (int64_t size : mesh_shape) {
    if (size < 1)
      return InvalidArgument("partitioning %{}: mesh axis of size {}", computation.name(), size);
  }
  return Partitioner(computation, solution, mesh_shape, options).Run();
}

}  // namespace alpa::spmd
