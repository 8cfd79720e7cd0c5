#include "api/single_stage_document.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "cluster/mesh.h"
#include "cost/flop_count.h"
#include "hlo/printer.h"
#include "plan/memory_summary.h"
#include "sharding/hlo_sharding.h"
#include "solver/request.h"
#include "support/fingerprint.h"
#include "support/json_text.h"
#include "support/table.h"
#include "support/units.h"

namespace alpa::api {
namespace {

std::string ReadableSpecs(const sharding::LeafSpecs& specs) {
  std::vector<std::string> parts;
  for (const sharding::ShardingSpec& spec : specs) parts.push_back(sharding::ToString(spec));
  return fmt::format("{}", fmt::join(parts, " "));
}

nlohmann::ordered_json CommJson(const sharding::CommunicationSummary& comm) {
  nlohmann::ordered_json json;
  for (cost::CollectiveKind kind :
       {cost::CollectiveKind::kAllReduce, cost::CollectiveKind::kAllGather,
        cost::CollectiveKind::kReduceScatter, cost::CollectiveKind::kAllToAll,
        cost::CollectiveKind::kCollectivePermute, cost::CollectiveKind::kSendRecv}) {
    auto it = comm.count.find(kind);
    json[std::string(cost::CollectiveKindName(kind))] = it == comm.count.end() ? 0 : it->second;
  }
  json["bytes"] = comm.bytes;
  return json;
}

double Tflops(const SingleStageReport& report, const sharding::ShardingEstimate& estimate) {
  return estimate.step_seconds() > 0 ? report.dot_flops / estimate.step_seconds() / 1e12 : 0;
}

}  // namespace

Result<SingleStageReport> ReportOfSingleStagePlan(const TrainStep& step,
                                                  const sharding::ShardingSolution& solution,
                                                  int64_t num_micro_batches) {
  const ir::Computation& entry = *step.module->entry();
  SingleStageReport report;
  report.fingerprint = FingerprintHex(hlo::PrintModule(*step.module));
  report.num_micro_batches = num_micro_batches;
  ALPA_ASSIGN_OR_RETURN(cost::FlopCount flops, cost::CountFlops(entry));
  for (ir::Opcode opcode : {ir::Opcode::kDot, ir::Opcode::kConvolution}) {
    if (auto it = flops.by_opcode.find(opcode); it != flops.by_opcode.end()) {
      report.dot_flops += it->second;
    }
  }
  std::vector<cost::ParameterRole> roles;
  for (const sharding::MethodParameter& parameter : step.parameters) {
    roles.push_back(parameter.role);
  }
  report.peak =
      plan::PeakJson(sharding::SolutionMemoryModel(entry, solution, roles, num_micro_batches));
  return report;
}

nlohmann::ordered_json SingleStagePlanJson(const SingleStageReport& report,
                                           const std::vector<int64_t>& shape,
                                           const sharding::ShardingSolution& solution) {
  const sharding::ShardingEstimate& estimate = solution.estimate;
  nlohmann::ordered_json json;
  json["format"] = "alpa-plan";
  json["version"] = 1;
  json["model"] = {{"name", report.model_name}, {"fingerprint", report.fingerprint}};
  json["cluster"] = report.cluster;
  json["method"] = report.method;
  json["mesh"] = shape;
  json["batch_axis"] = report.batch_axis >= 0 ? nlohmann::ordered_json(report.batch_axis)
                                              : nlohmann::ordered_json(nullptr);
  json["num_micro_batches"] = report.num_micro_batches;
  json["pins"] = report.pins;
  json["estimate"] = {{"step_time_s", estimate.step_seconds()},
                      {"compute_s", estimate.compute_seconds},
                      {"communication_s", estimate.communication_seconds},
                      {"resharding_s", estimate.resharding_seconds},
                      {"tflops", Tflops(report, estimate)},
                      {"peak_memory_bytes", estimate.peak_memory_bytes},
                      {"peak", report.peak},
                      {"memory_budget_bytes", solution.memory_budget_bytes},
                      {"comm", CommJson(estimate.communication)}};
  json["compile"] = {{"total_s", report.total_seconds},
                     {"solver_s", solution.timings.solve_s},
                     {"strategies_s", solution.timings.generate_s},
                     {"cost_graph_s", solution.timings.cost_graph_s},
                     {"estimate_s", solution.timings.estimate_s},
                     {"solver_status", solver::SolveStatusName(solution.answer.status)},
                     {"ilp_nodes", solution.solver_nodes},
                     {"ilp_edges", solution.solver_edges},
                     {"meshes_tried", report.meshes_tried}};
  nlohmann::ordered_json shardings = nlohmann::ordered_json::object();
  nlohmann::ordered_json strategies = nlohmann::ordered_json::object();
  for (size_t v = 0; v < solution.graph.nodes.size(); ++v) {
    const std::string& name = solution.graph.nodes[v].instruction->name();
    const sharding::Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    AppendNewKey(shardings, name, sharding::ToHloShardingText(chosen.output, shape));
    AppendNewKey(strategies, name, chosen.name);
  }
  json["shardings"] = std::move(shardings);
  json["strategies"] = std::move(strategies);
  return json;
}

std::string SingleStagePlanText(const SingleStageReport& report, const std::vector<int64_t>& shape,
                                const sharding::ShardingSolution& solution) {
  const sharding::ShardingEstimate& estimate = solution.estimate;
  std::string text = fmt::format("plan for {} on {} (method {}): mesh {}\n", report.model_name,
                                 report.cluster, report.method, cluster::ShapeString(shape));
  if (report.batch_axis >= 0) {
    text += fmt::format("  batch split   over mesh axis {} only\n", report.batch_axis);
  }
  if (report.pins > 0) text += fmt::format("  pinned        {} instructions\n", report.pins);
  text += fmt::format(
      "  step time     {} (compute {}, collectives in ops {}, resharding {})\n",
      FormatSeconds(estimate.step_seconds()), FormatSeconds(estimate.compute_seconds),
      FormatSeconds(estimate.communication_seconds), FormatSeconds(estimate.resharding_seconds));
  text += fmt::format("  throughput    {:.2f} TFLOPS (dot/convolution FLOPs, all devices)\n",
                      Tflops(report, estimate));
  text += fmt::format("  peak memory   {} per device (budget {})\n",
                      FormatBytes(estimate.peak_memory_bytes),
                      FormatBytes(solution.memory_budget_bytes));
  text += fmt::format("                {}\n", plan::PeakLine(report.peak));
  if (estimate.peak_memory_bytes > solution.memory_budget_bytes) {
    text += fmt::format(
        "                over the budget by {} once the partitioner's copies and partial sums "
        "are counted (they are not terms of the solver's problem); raise the budget, use more "
        "devices or turn on rematerialisation\n",
        FormatBytes(estimate.peak_memory_bytes - solution.memory_budget_bytes));
  }
  std::vector<std::string> kinds;
  for (const auto& [kind, count] : estimate.communication.count) {
    kinds.push_back(fmt::format("{} {}", count, cost::CollectiveKindName(kind)));
  }
  text += fmt::format("  collectives   {} ({} in all)\n",
                      kinds.empty() ? "none" : fmt::format("{}", fmt::join(kinds, ", ")),
                      FormatBytes(estimate.communication.bytes));
  text += fmt::format(
      "  compile       {:.2f} s (solver {:.2f} s, {}; {} ILP nodes, {} edges; {} mesh shapes)\n",
      report.total_seconds, solution.timings.solve_s,
      solver::SolveStatusName(solution.answer.status), solution.solver_nodes, solution.solver_edges,
      report.meshes_tried);

  // Parameters in order, then the ten largest other values by per-device bytes.
  Table parameters(
      {"parameter", "shape", "sharding", "per device"},
      {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kRight});
  std::vector<size_t> others;
  for (size_t v = 0; v < solution.graph.nodes.size(); ++v) {
    const ir::Instruction& instruction = *solution.graph.nodes[v].instruction;
    const sharding::Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    if (instruction.opcode() != ir::Opcode::kParameter) {
      others.push_back(v);
      continue;
    }
    parameters.AddRow({instruction.name(), instruction.shape().ToString(),
                       ReadableSpecs(chosen.output), FormatBytes(chosen.memory_bytes)});
  }
  std::stable_sort(others.begin(), others.end(), [&](size_t a, size_t b) {
    return solution.Chosen(static_cast<int64_t>(a)).memory_bytes >
           solution.Chosen(static_cast<int64_t>(b)).memory_bytes;
  });
  others.resize(std::min<size_t>(others.size(), 10));
  Table largest(
      {"largest values", "shape", "sharding", "strategy"},
      {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft, Table::Align::kLeft});
  for (size_t v : others) {
    const ir::Instruction& instruction = *solution.graph.nodes[v].instruction;
    const sharding::Strategy& chosen = solution.Chosen(static_cast<int64_t>(v));
    largest.AddRow({instruction.name(), instruction.shape().ToString(),
                    ReadableSpecs(chosen.output), chosen.name});
  }
  return text + "\n" + parameters.Render() + "\n" + largest.Render();
}

}  // namespace alpa::api
