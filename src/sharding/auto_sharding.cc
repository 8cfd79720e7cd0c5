#include "sharding/auto_sharding.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>

#include "cost/liveness.h"
#include "ir/broadcast_folding.h"
#include "sharding/batch_dims.h"
#include "sharding/build_cost_graph.h"
#include "sharding/follow_util.h"
#include "sharding/resharding.h"
#include "sharding/strategy_dispatch.h"
#include "sharding/strategy_util.h"
#include "solver/checker.h"
#include "solver/milp_model.h"
#include "support/units.h"

namespace alpa::sharding {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

// CBC keeps process-wide state (its C interface and message handlers were not written for
// threads): one CBC solve at a time in this process.
std::mutex cbc_mutex;

Result<solver::Answer> SolveMilpAlone(const solver::Request& request,
                                      const solver::SolveOptions& options) {
  const std::lock_guard<std::mutex> lock(cbc_mutex);
  return solver::Solve(request, options);
}

// The planner's policy (auto_sharding.h, kPlannerHeuristicEffort).
Result<solver::Answer> SolveForPlan(const solver::Request& request,
                                    const solver::SolveOptions& options) {
  // kMilp, and kAuto with an effort the caller chose, are the solver's own modes (both may run
  // CBC).
  if (options.kind == solver::SolverKind::kMilp || options.effort.has_value()) {
    return options.kind == solver::SolverKind::kHeuristic ? solver::Solve(request, options)
                                                          : SolveMilpAlone(request, options);
  }
  solver::SolveOptions heuristic_options = options;
  heuristic_options.kind = solver::SolverKind::kHeuristic;
  heuristic_options.effort = kPlannerHeuristicEffort;
  heuristic_options.patience = kPlannerHeuristicPatience;
  heuristic_options.stop_when_stalled = true;
  heuristic_options.relative_gap = kPlannerRelativeGap;
  if (options.kind == solver::SolverKind::kHeuristic) {
    return solver::Solve(request, heuristic_options);
  }
  const Clock::time_point begin = Clock::now();
  ALPA_ASSIGN_OR_RETURN(solver::Answer answer, solver::Solve(request, heuristic_options));
  const double left = options.time_limit_s - SecondsSince(begin);
  if (answer.ProvenWithin(kPlannerRelativeGap) || left <= 0 ||
      solver::CountMilpColumns(request) > kPlannerMilpColumnLimit) {
    return answer;
  }
  solver::SolveOptions milp_options = options;
  milp_options.kind = solver::SolverKind::kMilp;
  milp_options.time_limit_s = left;
  if (answer.has_solution()) milp_options.start = answer.choice;
  ALPA_ASSIGN_OR_RETURN(solver::Answer milp, SolveMilpAlone(request, milp_options));
  if (milp.status == solver::SolveStatus::kOptimal ||
      (milp.status == solver::SolveStatus::kInfeasible && !answer.has_solution())) {
    milp.seconds = SecondsSince(begin);
    return milp;
  }
  answer.seconds = SecondsSince(begin);
  return answer;
}

// The devices of a mesh must be of one type for one cost model; the smallest memory bounds the
// budget.
struct MeshDevice {
  cluster::DeviceSpec device;
  int64_t smallest_memory_bytes = 0;
};

Result<MeshDevice> DeviceOfMesh(const cluster::ClusterSpec& cluster,
                                const cluster::LogicalMesh& mesh) {
  const std::vector<int64_t> host_of = cluster::HostOfDevices(cluster);
  MeshDevice result;
  result.smallest_memory_bytes = std::numeric_limits<int64_t>::max();
  for (size_t k = 0; k < mesh.devices.size(); ++k) {
    const int64_t id = mesh.devices[k];
    if (id < 0 || id >= static_cast<int64_t>(host_of.size())) {
      return InvalidArgument("mesh device {} is not a device of cluster '{}' ({} devices)", id,
                             cluster.name, host_of.size());
    }
    const cluster::DeviceSpec& device =
        cluster.hosts[static_cast<size_t>(host_of[static_cast<size_t>(id)])].device;
    if (k == 0) result.device = device;
    if (device.name != result.device.name) {
      return InvalidArgument(
          "the mesh mixes device types '{}' and '{}'; auto-sharding plans one device type per "
          "mesh (give each type its own stage)",
          result.device.name, device.name);
    }
    result.smallest_memory_bytes = std::min(result.smallest_memory_bytes, device.memory_bytes);
  }
  return result;
}

void AddCollective(CommunicationSummary& summary, cost::CollectiveKind kind, int64_t bytes,
                   double seconds) {
  ++summary.count[kind];
  summary.bytes += bytes;
  summary.seconds += seconds;
}

// Each value's bytes per device under its chosen strategy (none for what has no node).
cost::BufferBytesFn ChosenBytes(const ShardingSolution& solution) {
  return [&solution](const ir::Instruction& instruction) -> int64_t {
    const int64_t node = solution.graph.NodeOf(instruction);
    return node < 0 ? 0 : solution.Chosen(node).memory_bytes;
  };
}

// The layout an operand leaf of `user` is produced in, and the one `chosen` (user's strategy)
// reads it in: the two ends of a graph edge.
std::pair<const ShardingSpec&, const ShardingSpec&> LayoutsOf(const ShardingSolution& solution,
                                                              const ir::Instruction& user,
                                                              const Strategy& chosen,
                                                              const OperandLeaf& operand) {
  const ValueSource source = solution.graph.SourceOf(*user.operand(operand.operand), operand.leaf);
  return {solution.Chosen(source.node).output[static_cast<size_t>(source.leaf)],
          chosen.operands[static_cast<size_t>(operand.operand)][static_cast<size_t>(operand.leaf)]};
}

// Bytes a strategy's kernel writes before its own collectives make the result from them: the
// input of each (collective_cost.h's sizes: an all-gather's is its output over the group).
int64_t UnreducedResultBytes(const Strategy& strategy, const std::vector<int64_t>& mesh_shape) {
  int64_t largest = 0;
  for (const StrategyCollective& collective : strategy.collectives) {
    int64_t input = collective.bytes;
    if (collective.kind == cost::CollectiveKind::kAllGather) {
      for (int64_t axis : collective.axes) input /= mesh_shape[static_cast<size_t>(axis)];
    }
    largest = std::max(largest, input);
  }
  return largest;
}

// The buffers the partitioner adds around each instruction under the chosen strategies (its
// operands' resharded copies, the partial sums of its strategy's own collectives). A broadcast
// read in a layout it reaches by slicing is broadcast again from its operand's tile
// (spmd/partitioner.cc): no collective reads it, and the new broadcast is a copy only where the
// broadcast is not read in place (then only the operand's slice, if it is cut, is a buffer).
// A carried value produced in another layout than its parameter's is resharded into the
// parameter's as the step ends (spmd::NextValueResultSpecs): the copy is the step's result, held
// from its root on beside what the root holds.
cost::Lowering LoweringOf(const ir::Computation& computation, const ShardingSolution& solution,
                          const std::vector<int64_t>& mesh_shape,
                          const std::vector<CarriedValue>& carried) {
  const std::unordered_set<const ir::Instruction*> read_in_place =
      ir::BroadcastsReadInPlace(computation);
  cost::Lowering lowering;
  const StrategyGraph& graph = solution.graph;
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    const Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    const ir::Instruction& user = *graph.nodes[v].instruction;
    cost::LoweredInstruction lowered;
    lowered.unreduced_result_bytes = UnreducedResultBytes(chosen, mesh_shape);
    for (const OperandLeaf& operand : OperandLeaves(user)) {
      const ir::Instruction* producer = user.operand(operand.operand);
      const auto [from, to] = LayoutsOf(solution, user, chosen, operand);
      if (from == to) continue;
      if (producer->opcode() != ir::Opcode::kBroadcast || !ReachedBySlicing(from, to)) {
        lowered.resharded_operand_bytes += TileBytes(to, *operand.shape, mesh_shape);
        lowered.resharded_operands.push_back(producer);
        continue;
      }
      const std::vector<int64_t>& dimensions = producer->attributes().dimensions;
      const ShardingSpec source_to = BroadcastOperandSpec(to, dimensions);
      if (BroadcastOperandSpec(from, dimensions) != source_to) {
        lowered.resharded_operand_bytes +=
            TileBytes(source_to, producer->operand(0)->shape(), mesh_shape);
      }
      // (A broadcast read in place by some readers only is counted as a copy for every one,
      // though a loop among them reads its new broadcast in place too.)
      if (!read_in_place.contains(producer) && !solution.fused.contains(producer)) {
        lowered.resharded_operand_bytes += TileBytes(to, *operand.shape, mesh_shape);
      }
    }
    if (lowered.unreduced_result_bytes > 0 || lowered.resharded_operand_bytes > 0) {
      lowering.emplace(&user, std::move(lowered));
    }
  }
  for (const CarriedValue& value : carried) {
    const ShardingSpec& to = solution.Chosen(value.parameter).output[0];
    if (solution.Chosen(value.next).output[0] == to) continue;
    cost::LoweredInstruction& root = lowering[computation.root()];
    const ir::Instruction& parameter =
        *graph.nodes[static_cast<size_t>(value.parameter)].instruction;
    root.resharded_operand_bytes += TileBytes(to, parameter.shape(), mesh_shape);
    root.resharded_operands.push_back(graph.nodes[static_cast<size_t>(value.next)].instruction);
  }
  return lowering;
}

// How many times AutoShard solves again with a lower memory limit when the buffers lowering adds
// take its plan past the budget (each round sets the limit that far below the budget).
constexpr int kBudgetTightenings = 3;

// Step time, collectives and the exact per-device peak of the chosen strategies.
ShardingEstimate Estimate(const ir::Computation& computation, const ShardingSolution& solution,
                          const ReshardCostModel& reshard_cost,
                          const std::vector<CarriedValue>& carried,
                          const std::vector<ValueSource>& whole) {
  ShardingEstimate estimate;
  const StrategyGraph& graph = solution.graph;
  estimate.nodes.resize(graph.nodes.size());
  // Seconds of resharding `leaf` from `from` to `to`, its collectives counted.
  auto add_resharding = [&](const ShardingSpec& from, const ShardingSpec& to,
                            const ir::Shape& leaf) {
    double total = 0;
    if (from == to) return total;
    for (const ReshardStep& step : PlanReshard(from, to, reshard_cost.mesh_shape(), leaf.dims(),
                                               ir::DTypeByteSize(leaf.dtype()))) {
      const double seconds = reshard_cost.StepSeconds(step);
      total += seconds;
      AddCollective(estimate.communication, step.kind, step.bytes, seconds);
    }
    estimate.resharding_seconds += total;
    return total;
  };
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    const Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    NodeCost& node = estimate.nodes[v];
    node.compute_seconds = chosen.compute_seconds;
    node.communication_seconds = chosen.communication_seconds;
    estimate.compute_seconds += chosen.compute_seconds;
    estimate.communication_seconds += chosen.communication_seconds;
    for (const StrategyCollective& collective : chosen.collectives) {
      AddCollective(estimate.communication, collective.kind, collective.bytes,
                    reshard_cost.StepSeconds(
                        ReshardStep{collective.kind, collective.axes, collective.bytes}));
    }
    const ir::Instruction& user = *graph.nodes[v].instruction;
    for (const OperandLeaf& operand : OperandLeaves(user)) {
      const auto [from, to] = LayoutsOf(solution, user, chosen, operand);
      node.resharding_seconds += add_resharding(from, to, *operand.shape);
    }
  }
  // What the next step pays to read each carried value in its parameter's layout.
  for (const CarriedValue& value : carried) {
    estimate.carried_seconds += add_resharding(
        solution.Chosen(value.next).output[0], solution.Chosen(value.parameter).output[0],
        graph.nodes[static_cast<size_t>(value.parameter)].instruction->shape());
  }
  // A whole value's pending sum, summed on the node that computes it.
  for (const ValueSource& value : whole) {
    const ir::Shape& shape = graph.nodes[static_cast<size_t>(value.node)].instruction->shape();
    const ShardingSpec& produced =
        solution.Chosen(value.node).output[static_cast<size_t>(value.leaf)];
    estimate.nodes[static_cast<size_t>(value.node)].resharding_seconds +=
        add_resharding(produced, WithoutPartial(produced),
                       shape.IsTuple() ? shape.tuple_shape(value.leaf) : shape);
  }
  const cost::Liveness liveness = cost::ComputeLiveness(
      computation, ChosenBytes(solution), solution.fused, solution.donated, solution.lowering);
  estimate.peak_memory_bytes = liveness.peak_bytes;
  if (liveness.peak_step >= 0) {
    estimate.peak_instruction = liveness.order[static_cast<size_t>(liveness.peak_step)];
  }
  return estimate;
}

// The least per-device memory any choice needs under the request's memory terms:
//   max over t of sum over nodes live at t of min_j usage[j]
// Every choice needs at least this at the maximising t, and choosing each node's smallest
// strategy needs exactly this at every t, so it is the minimum.
int64_t LeastMemory(const solver::Request& request) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, usage change); ends sort first
  for (const solver::Node& node : request.nodes) {
    if (node.interval.empty()) continue;
    const int64_t smallest = *std::min_element(node.usages.begin(), node.usages.end());
    events.push_back({node.interval.start, smallest});
    events.push_back({node.interval.end, -smallest});
  }
  std::sort(events.begin(), events.end());
  int64_t current = 0;
  int64_t peak = 0;
  for (const auto& [time, change] : events) {
    current += change;
    peak = std::max(peak, current);
  }
  return peak;
}

// A node whose every strategy is forbidden makes the whole problem infeasible; name it rather
// than let the solver say "infeasible".
Status CheckSomeStrategyAllowed(const StrategyGraph& graph, const CostGraph& cost_graph) {
  for (size_t v = 0; v < cost_graph.nodes.size(); ++v) {
    const std::vector<double>& seconds = cost_graph.nodes[v].seconds;
    if (std::any_of(seconds.begin(), seconds.end(),
                    [](double t) { return ToSolverCost(t) < solver::kForbiddenCost; })) {
      continue;
    }
    const ir::Instruction& instruction = *graph.nodes[v].instruction;
    return InvalidArgument(
        "{} ({}{}): every sharding strategy of this op is forbidden by the cost "
        "model (first: '{}')",
        instruction.name(), ir::OpcodeName(instruction.opcode()),
        instruction.location().known() ? fmt::format(", line {}", instruction.location().line) : "",
        graph.nodes[v].set.strategies.front().name);
  }
  return Status::Ok();
}

// Forbids every strategy of a pinned instruction that `allowed(strategy, pin)` rejects; errors
// name the pin (`describe(pin)`) and what the instruction can take (`label(strategy)`).
// Forbidding (rather than removing) keeps the one-to-one correspondence of followers with their
// leaders.
template <typename Pin, typename Allowed, typename Describe, typename Label>
Status ForbidUnpinned(const std::map<std::string, Pin>& pins, StrategyGraph& graph,
                      const Allowed& allowed, const Describe& describe, const Label& label) {
  size_t applied = 0;
  for (StrategyNode& node : graph.nodes) {
    auto pin = pins.find(node.instruction->name());
    if (pin == pins.end()) continue;
    ++applied;
    // A pinned node decides on its own: merged with a leader pinned otherwise, the group would
    // have no allowed strategy left.
    node.set.follows_operand = -1;
    bool matched = false;
    std::vector<std::string> available;
    for (Strategy& strategy : node.set.strategies) {
      if (allowed(strategy, pin->second)) {
        matched = true;
        continue;
      }
      strategy.compute_seconds = std::numeric_limits<double>::infinity();
      available.push_back(label(strategy));
    }
    if (!matched) {
      std::sort(available.begin(), available.end());
      available.erase(std::unique(available.begin(), available.end()), available.end());
      return InvalidArgument("{}: no strategy {}; it can take: {}", pin->first,
                             describe(pin->second), fmt::join(available, ", "));
    }
  }
  if (applied < pins.size()) {
    for (const auto& [name, unused] : pins) {
      bool found = false;
      for (const StrategyNode& node : graph.nodes)
        found = found || node.instruction->name() == name;
      if (!found)
        return NotFound("pinned sharding for '{}': no such instruction decides a layout", name);
    }
  }
  return Status::Ok();
}

std::string LeavesText(const LeafSpecs& specs) {
  std::vector<std::string> leaves;
  for (const ShardingSpec& spec : specs) leaves.push_back(ToString(spec));
  return fmt::format("{}", fmt::join(leaves, " "));
}

Status ApplyPins(const AutoShardingOptions& options, StrategyGraph& graph) {
  ALPA_RETURN_IF_ERROR(ForbidUnpinned(
      options.pinned_outputs, graph,
      [](const Strategy& strategy, const LeafSpecs& pin) { return strategy.output == pin; },
      [](const LeafSpecs& pin) { return "lays it out as the pinned " + LeavesText(pin); },
      [](const Strategy& strategy) { return LeavesText(strategy.output); }));
  return ForbidUnpinned(
      options.pinned_strategies, graph,
      [](const Strategy& strategy, const std::string& pin) { return strategy.name == pin; },
      [](const std::string& pin) { return fmt::format("is named '{}'", pin); },
      [](const Strategy& strategy) { return fmt::format("'{}'", strategy.name); });
}

// DispatchStrategies, with every set of a value that carries the batch filtered to the forced
// axis when one is given. Error: an axis the mesh does not have.
Result<StrategyGenerator> MakeGenerator(const ir::Computation& computation,
                                        const cluster::LogicalMesh& mesh,
                                        const AutoShardingOptions& options) {
  const int64_t axis = options.force_batch_axis;
  if (axis < 0) return StrategyGenerator(DispatchStrategies);
  if (axis >= static_cast<int64_t>(mesh.shape.size())) {
    return InvalidArgument(
        "the batch dimension is forced to mesh axis {}, but the mesh {} has "
        "axes 0 to {}",
        axis, cluster::ShapeString(mesh.shape), mesh.shape.size() - 1);
  }
  auto batch_dims =
      std::make_shared<const BatchDims>(AnalyzeBatchDims(computation, options.batch_parameters));
  return StrategyGenerator(
      [batch_dims, axis](const ir::Instruction& instruction,
                         const StrategyContext& context) -> Result<StrategySet> {
        ALPA_ASSIGN_OR_RETURN(StrategySet set, DispatchStrategies(instruction, context));
        auto it = batch_dims->find(&instruction);
        if (it == batch_dims->end()) return set;
        return KeepBatchSplit(std::move(set), it->second, axis, context.mesh_shape());
      });
}

}  // namespace

Result<ShardingSolution> AutoShard(const ir::Computation& computation,
                                   const cluster::ClusterSpec& cluster,
                                   const cluster::LogicalMesh& mesh,
                                   const AutoShardingOptions& options) {
  ALPA_ASSIGN_OR_RETURN(MeshDevice mesh_device, DeviceOfMesh(cluster, mesh));
  ALPA_ASSIGN_OR_RETURN(ReshardCostModel reshard_cost, ReshardCostModel::Create(cluster, mesh));

  StrategyContext context;
  context.cluster = &cluster;
  context.mesh = &mesh;
  context.device = cost::ThroughputOf(mesh_device.device);
  context.efficiency = options.efficiency;
  context.pricer = &reshard_cost;
  context.options = options.strategy;

  ShardingSolution solution;
  solution.fused = cost::FusionFor(context.device, computation);
  context.fused = &solution.fused;
  Clock::time_point phase = Clock::now();
  ALPA_ASSIGN_OR_RETURN(const StrategyGenerator generate,
                        MakeGenerator(computation, mesh, options));
  ALPA_RETURN_IF_ERROR(GenerateStrategies(computation, context, generate, solution.graph));
  ALPA_RETURN_IF_ERROR(ApplyPins(options, solution.graph));
  solution.timings.generate_s = SecondsSince(phase);
  phase = Clock::now();

  if (mesh_device.device.fuses_kernels) {
    const ir::InstructionIndex by_name(computation);
    for (const auto& [parameter, next] : options.next_values) {
      const ir::Instruction* from = by_name.Find(parameter);
      const ir::Instruction* to = by_name.Find(next);
      if (from != nullptr && to != nullptr) solution.donated.push_back({from, to});
    }
  }
  const cost::Liveness liveness =
      cost::ComputeLiveness(computation, cost::FullShapeBytes, solution.fused, solution.donated);
  ALPA_ASSIGN_OR_RETURN(const std::vector<CarriedValue> carried,
                        CarriedValues(options.next_values, computation, solution.graph));
  ALPA_ASSIGN_OR_RETURN(const std::vector<ValueSource> whole,
                        WholeValues(options.whole_values, computation, solution.graph));
  const CostGraph cost_graph =
      BuildCostGraph(solution.graph, liveness, reshard_cost, carried, whole);
  ALPA_RETURN_IF_ERROR(CheckSomeStrategyAllowed(solution.graph, cost_graph));
  solution.memory_budget_bytes =
      options.memory_budget_bytes.value_or(mesh_device.smallest_memory_bytes);
  ReducedProblem problem =
      ReduceCostGraph(cost_graph, computation.name(), solution.memory_budget_bytes);
  solution.solver_nodes = static_cast<int64_t>(problem.request.nodes.size());
  solution.solver_edges = static_cast<int64_t>(problem.request.edges.size());
  solution.timings.cost_graph_s = SecondsSince(phase);

  phase = Clock::now();
  ALPA_ASSIGN_OR_RETURN(solution.answer, SolveForPlan(problem.request, options.solve));
  solution.timings.solve_s = SecondsSince(phase);
  switch (solution.answer.status) {
    case solver::SolveStatus::kOptimal:
    case solver::SolveStatus::kFeasible:
      break;
    case solver::SolveStatus::kInfeasible:
    case solver::SolveStatus::kNoSolution: {
      const int64_t least = LeastMemory(problem.request);
      if (least > solution.memory_budget_bytes) {
        return Status(StatusCode::kResourceExhausted,
                      fmt::format("no sharding of '{}' on mesh {} fits the memory budget of {} "
                                  "per device: the least memory any sharding needs is {} per "
                                  "device; raise the budget (--memory-budget), use more devices "
                                  "or turn on rematerialisation",
                                  computation.name(), cluster::ShapeString(mesh.shape),
                                  FormatBytes(solution.memory_budget_bytes), FormatBytes(least)));
      }
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("the solver found no sharding of '{}' on mesh {} within its "
                                "limits (status: {}; the least memory any sharding needs, {}, "
                                "is within the budget of {}): raise --time-limit",
                                computation.name(), cluster::ShapeString(mesh.shape),
                                solver::SolveStatusName(solution.answer.status), FormatBytes(least),
                                FormatBytes(solution.memory_budget_bytes)));
    }
  }
  phase = Clock::now();
  solution.choice = ExpandChoice(problem, solution.answer.choice);
  solution.lowering = LoweringOf(computation, solution, reshard_cost.mesh_shape(), carried);
  solution.estimate = Estimate(computation, solution, reshard_cost, carried, whole);
  solution.timings.estimate_s = SecondsSince(phase);
  // The problem's memory terms hold each value over its interval; the estimate also counts the
  // buffers the partitioner puts around an instruction (resharded copies, partial sums:
  // cost/liveness.h), which depend on pairs of choices and so are not terms of the problem. When
  // they take the plan past the budget, the problem is solved again with its limit lowered by
  // what they added to this plan's peak; a plan that still overshoots is kept (its estimate
  // says so), and `problem` is the last one solved.
  for (int round = 0; round < kBudgetTightenings &&
                      solution.estimate.peak_memory_bytes > solution.memory_budget_bytes;
       ++round) {
    ALPA_ASSIGN_OR_RETURN(const solver::Evaluation terms,
                          solver::EvaluateChoice(problem.request, solution.answer.choice));
    const int64_t unpriced =
        solution.estimate.peak_memory_bytes - static_cast<int64_t>(terms.peak_usage);
    if (unpriced <= 0) break;
    problem.request.usage_limit = solution.memory_budget_bytes - unpriced;
    phase = Clock::now();
    Result<solver::Answer> answer = SolveForPlan(problem.request, options.solve);
    solution.timings.solve_s += SecondsSince(phase);
    if (!answer.ok() || (answer->status != solver::SolveStatus::kOptimal &&
                         answer->status != solver::SolveStatus::kFeasible)) {
      break;
    }
    phase = Clock::now();
    std::vector<int64_t> looser_choice =
        std::exchange(solution.choice, ExpandChoice(problem, answer->choice));
    cost::Lowering looser_lowering = std::exchange(
        solution.lowering, LoweringOf(computation, solution, reshard_cost.mesh_shape(), carried));
    ShardingEstimate tighter = Estimate(computation, solution, reshard_cost, carried, whole);
    solution.timings.estimate_s += SecondsSince(phase);
    if (tighter.peak_memory_bytes >= solution.estimate.peak_memory_bytes) {
      solution.choice = std::move(looser_choice);
      solution.lowering = std::move(looser_lowering);
      break;
    }
    solution.answer = std::move(answer).value();
    solution.estimate = std::move(tighter);
  }
  solution.problem = std::move(problem.request);
  return solution;
}

std::vector<Result<ShardingSolution>> AutoShardMeshes(
    const ir::Computation& computation, const cluster::ClusterSpec& cluster,
    const std::vector<cluster::LogicalMesh>& meshes,
    const std::vector<AutoShardingOptions>& options, int64_t threads) {
  ALPA_CHECK(options.size() == meshes.size(), "AutoShardMeshes: {} meshes but {} option sets",
             meshes.size(), options.size());
  if (threads <= 0) threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
  threads = std::min<int64_t>(threads, static_cast<int64_t>(meshes.size()));
  // Each thread takes the next mesh not yet taken; results land in their mesh's slot.
  std::vector<std::optional<Result<ShardingSolution>>> slots(meshes.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t m = next++; m < meshes.size(); m = next++) {
      slots[m].emplace(AutoShard(computation, cluster, meshes[m], options[m]));
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  std::vector<Result<ShardingSolution>> results;
  results.reserve(meshes.size());
  for (std::optional<Result<ShardingSolution>>& slot : slots) results.push_back(std::move(*slot));
  return results;
}

cost::MemoryModel SolutionMemoryModel(const ir::Computation& computation,
                                      const ShardingSolution& solution,
                                      std::vector<cost::ParameterRole> roles,
                                      int64_t num_micro_batches) {
  cost::MemoryModelOptions options;
  options.parameter_roles = std::move(roles);
  options.num_micro_batches = num_micro_batches;
  options.fused = &solution.fused;
  options.donated = solution.donated;
  options.bytes = ChosenBytes(solution);
  options.lowering = solution.lowering;
  return cost::BuildMemoryModel(computation, options);
}

}  // namespace alpa::sharding
