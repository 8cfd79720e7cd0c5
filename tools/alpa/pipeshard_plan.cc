#include "tools/alpa/pipeshard_plan.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <utility>

#include "pipeline/trace_export.h"
#include "plan/layer_costs.h"
#include "plan/manual_stages.h"
#include "plan/pipeline_search.h"
#include "plan/pipeshard_document.h"
#include "plan/pipeshard_planner.h"
#include "plan/plan_report.h"
#include "plan/uniform_plans.h"
#include "support/file.h"
#include "support/json_text.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/profile_command.h"

namespace alpa::tools {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The stages of a --manual-stages file (Alpa's format), or of a saved plan's (--validate).
Result<plan::ManualStages> ReadFileStages(const std::string& path, bool saved_plan) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return saved_plan ? plan::ParseSavedPlanStages(text, path) : plan::ParseManualStages(text, path);
}

// `manual`, read from `path`, evaluated on `table`.
Result<plan::PipeshardPlan> EvaluateFileStages(const plan::ManualStages& manual,
                                               const std::string& path, bool saved_plan,
                                               const plan::LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster,
                                               const plan::PipeshardOptions& options) {
  if (saved_plan && manual.num_layers != table.num_layers) {
    return InvalidArgument(
        "{}: the plan cuts a model of {} layers into stages, this model has {}; plan it again",
        path, manual.num_layers, table.num_layers);
  }
  Result<plan::PipeshardPlan> plan = plan::EvaluateManualStages(
      manual, table, cluster, {pipeline::ScheduleKind::k1F1B}, options.num_micro_batches);
  if (!plan.ok()) return plan.status().WithContext(path);
  return plan;
}

// --method uniform: the given (dp, op, pp), or the fastest of the whole grid (kept in `grid`).
Result<plan::PipeshardPlan> PlanUniform(const PlanOptions& flags, const plan::LayerCostTable& table,
                                        const cluster::ClusterSpec& cluster,
                                        const plan::PipeshardOptions& options,
                                        std::vector<plan::UniformGridPoint>& grid) {
  if (flags.dp || flags.op || flags.pp) {
    if (!flags.dp || !flags.op || !flags.pp) {
      return InvalidArgument(
          "--method uniform: give all of --dp, --op and --pp, or none (every grid point)");
    }
    return plan::PlanUniform(table, cluster, *flags.dp, *flags.op, *flags.pp, options);
  }
  grid = plan::SearchUniformGrid(table, cluster, options);
  ALPA_ASSIGN_OR_RETURN(plan::UniformGridPoint fastest, plan::FastestGridPoint(grid));
  return std::move(fastest.plan);
}

// What --validate compares against: the saved plan's header (its stages are parsed with
// plan::ParseSavedPlanStages). Absent fields stay empty; the stages' parser names what is wrong.
struct SavedPlan {
  std::string model, cluster;
  std::optional<int64_t> num_micro_batches;
  std::optional<double> step_time_s;
};

Result<SavedPlan> ReadSavedPlanHeader(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  SavedPlan header;
  const Result<Json> saved = ParseJsonText(text, path);
  if (!saved.ok() || !saved->is_object()) return header;
  // Each field read only when present with its type (a wrong type is the stages' parser's to
  // name): the typed readers never throw.
  if (saved->contains("model") && (*saved)["model"].is_object()) {
    if (Result<std::string> model = JsonString((*saved)["model"], "model", "name"); model.ok()) {
      header.model = *model;
    }
  }
  if (Result<std::string> cluster = JsonString(*saved, "", "cluster"); cluster.ok()) {
    header.cluster = *cluster;
  }
  if (Result<int64_t> micro = JsonInteger(*saved, "", "num_micro_batches"); micro.ok()) {
    header.num_micro_batches = *micro;
  }
  if (saved->contains("estimate") && (*saved)["estimate"].is_object()) {
    if (Result<double> step = JsonNumber((*saved)["estimate"], "estimate", "step_time_s");
        step.ok()) {
      header.step_time_s = *step;
    }
  }
  return header;
}

// "re-costed FILE (gpt-2.6b on p3.16xlarge:1x8, 100.4 s): 98.2 s, 0.98x" for --validate.
std::string ValidationLine(const std::string& path, const SavedPlan& saved, double step_time_s) {
  std::string line =
      fmt::format("re-costed {} (made for {} on {}", path, saved.model, saved.cluster);
  if (saved.step_time_s) line += fmt::format(", step time {}", FormatSeconds(*saved.step_time_s));
  line += fmt::format("): every stage fits; step time {}", FormatSeconds(step_time_s));
  if (saved.step_time_s && *saved.step_time_s > 0) {
    line += fmt::format(" ({:.2f}x the saved estimate)", step_time_s / *saved.step_time_s);
  }
  return line + "\n";
}

Status WriteReport(const std::string& path, const nlohmann::ordered_json& document,
                   const plan::PipeshardPlan& plan, const std::string& model_name) {
  const std::string timeline = pipeline::ToSvgGantt(plan.simulation, model_name);
  return WriteTextFile(path, plan::RenderPlanReport(document, timeline), "--report");
}

// --search-micro-batches: one row per micro-batch count tried.
struct MicroBatchTrial {
  int64_t num_micro_batches = 0;
  Result<double> step_time_s = 0.0;  // or why no plan was found
};

// One planning run at the flags' micro-batch count.
struct PlannedAtCount {
  ZooStep zoo;
  plan::LayerCostTable table;
  plan::PipeshardPlan plan;
  std::vector<plan::UniformGridPoint> grid;  // --method uniform without --dp/--op/--pp
  double layer_costs_s = 0;
  double stage_dp_s = 0;
};

// Progress lines go to a terminal, never into --json output or a log a script parses.
bool ShowsProgress(const PlanOptions& options) { return isatty(STDERR_FILENO) && !options.json; }

Result<PlannedAtCount> PlanAtCount(const PlanOptions& options, const ZooFlags& flags,
                                   const cluster::ClusterSpec& cluster, bool show_progress = true) {
  const Clock::time_point start = Clock::now();
  ALPA_ASSIGN_OR_RETURN(ZooStep zoo, BuildZooLoss(options.model_path, flags));
  const models::Model& model = zoo.zoo.model;
  const int64_t micro_batches = zoo.training.num_micro_batches;
  plan::PipelineSearchOptions search;
  // The flags are checked (CLI::IsMember) against the same names.
  search.submeshes = *plan::ParseSubmeshSpace(options.submesh_space);
  search.logical = *plan::ParseLogicalSpace(options.logical_space);
  plan::LayerCostOptions& cost_options = search.costs;
  cost_options.auto_sharding.strategy.allow_partial_outputs = options.prefer_reduce_scatter;
  cost_options.auto_sharding.strategy.replicate_unknown_ops = options.replicate_unknown_ops;
  cost_options.auto_sharding.solve.time_limit_s = options.time_limit_s;
  show_progress = show_progress && ShowsProgress(options);
  cost_options.progress = [&](int64_t done, int64_t total) {
    if (show_progress) {
      fmt::print(stderr, "\r{} micro-batches: layer costs {}/{} distinct layers", micro_batches,
                 done, total);
      if (done == total) fmt::print(stderr, "\n");
    }
  };
  const std::string& stages_path =
      options.validate_path.empty() ? options.manual_stages_path : options.validate_path;
  const bool saved_plan = !options.validate_path.empty();
  // Read before the costs: the sub-meshes the stages name are costed with the space's.
  if (!stages_path.empty()) {
    ALPA_ASSIGN_OR_RETURN(search.manual, ReadFileStages(stages_path, saved_plan));
  }
  ALPA_ASSIGN_OR_RETURN(plan::LayerCostTable table,
                        plan::PipelineLayerCosts(*model.loss, model.weights, zoo.training, cluster,
                                                 search));
  const double layer_costs_s = SecondsSince(start);

  const Clock::time_point dp_start = Clock::now();
  plan::PipeshardOptions& planner_options = search.planner;
  planner_options.num_micro_batches = micro_batches;
  planner_options.schedules = *pipeline::ParseSchedules(options.schedule);  // the flag is checked
  if (options.imbalance_tolerance >= 0) {
    planner_options.imbalance_tolerance = options.imbalance_tolerance;
  }
  std::vector<plan::UniformGridPoint> grid;
  ALPA_ASSIGN_OR_RETURN(
      plan::PipeshardPlan plan,
      options.method == "uniform" ? PlanUniform(options, table, cluster, planner_options, grid)
      : !search.manual            ? plan::PlanStages(table, cluster, micro_batches, search)
                       : EvaluateFileStages(*search.manual, stages_path, saved_plan, table, cluster,
                                            planner_options));
  return PlannedAtCount{std::move(zoo),  std::move(table), std::move(plan),
                        std::move(grid), layer_costs_s,    SecondsSince(dp_start)};
}

// Alpa leaves the number of micro-batches to a grid search by hand. Tries M = 1, 2, 4, ... (M
// dividing the global batch) and keeps the fastest plan; fewer micro-batches have a larger
// pipeline bubble, more have more per-micro-batch overhead (weights read and collectives'
// latency per micro-batch), so the search stops two counts after the step time stops improving
// (a count where nothing fits does not stop it before the first plan: large micro-batches may
// not fit). The counts are planned two at a time on two threads (each plan is independent and
// deterministic, and a count planned past the stop is dropped unread), so the result is the
// sequential search's in about half the time on two cores.
Result<PlannedAtCount> SearchMicroBatches(const PlanOptions& options,
                                          const cluster::ClusterSpec& cluster,
                                          std::vector<MicroBatchTrial>& trials) {
  ALPA_ASSIGN_OR_RETURN(ZooStep probe, BuildZooLoss(options.model_path, options.zoo));
  std::vector<int64_t> counts;
  for (int64_t count = 1; count <= probe.batch; count *= 2) {
    if (probe.batch % count == 0) counts.push_back(count);
  }
  auto plan_count = [&](int64_t count, bool show_progress) {
    ZooFlags flags = options.zoo;
    flags.micro_batches = count;
    return PlanAtCount(options, flags, cluster, show_progress);
  };
  std::optional<PlannedAtCount> best;
  Status last_error = Status::Ok();
  int worse_in_a_row = 0;
  for (size_t k = 0; k < counts.size() && worse_in_a_row < 2; k += 2) {
    std::optional<std::future<Result<PlannedAtCount>>> next;
    if (k + 1 < counts.size()) {
      next = std::async(std::launch::async, plan_count, counts[k + 1], /*show_progress=*/false);
    }
    std::vector<Result<PlannedAtCount>> pair;
    pair.push_back(plan_count(counts[k], /*show_progress=*/true));
    if (next) pair.push_back(next->get());
    for (size_t j = 0; j < pair.size() && worse_in_a_row < 2; ++j) {
      Result<PlannedAtCount>& planned = pair[j];
      const int64_t count = counts[k + j];
      if (!planned.ok() && planned.status().code() == StatusCode::kInvalidArgument) {
        return planned.status();  // bad input, not a count that does not fit
      }
      // A count the model cannot take (an ONNX export that fixes its batch) is tried, not fatal.
      trials.push_back({count, planned.ok() ? Result<double>(planned->plan.step_time_s)
                                            : Result<double>(planned.status())});
      if (planned.ok() && (!best || planned->plan.step_time_s < best->plan.step_time_s)) {
        best = std::move(planned).value();
        worse_in_a_row = 0;
      } else if (best) {
        ++worse_in_a_row;
      }
      if (!planned.ok()) last_error = planned.status();
      if (ShowsProgress(options)) {
        const std::string tried = trials.back().step_time_s.ok()
                                      ? FormatSeconds(*trials.back().step_time_s) + " per step"
                                      : std::string("nothing fits");
        const std::string so_far =
            best ? fmt::format("M = {} at {}", best->zoo.training.num_micro_batches,
                               FormatSeconds(best->plan.step_time_s))
                 : std::string("none");
        fmt::print(stderr, "micro-batch search: M = {} (global batch {}): {}; best so far {}\n",
                   count, probe.batch, tried, so_far);
      }
    }
  }
  if (!best) return last_error;
  return std::move(best).value();
}

nlohmann::ordered_json TrialsJson(const std::vector<MicroBatchTrial>& trials) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const MicroBatchTrial& trial : trials) {
    rows.push_back({{"num_micro_batches", trial.num_micro_batches},
                    {"step_time_s",
                     trial.step_time_s.ok() ? nlohmann::ordered_json(*trial.step_time_s) : nullptr},
                    {"error", trial.step_time_s.ok() ? "" : trial.step_time_s.status().message()}});
  }
  return rows;
}

std::string TrialsText(const std::vector<MicroBatchTrial>& trials) {
  Table table({"micro-batches", "step time"}, {Table::Align::kRight, Table::Align::kLeft});
  for (const MicroBatchTrial& trial : trials) {
    // The reason's first clause ("no stage plan fits the cluster's 8 devices"); --json has it
    // whole.
    const std::string reason = trial.step_time_s.ok()
                                   ? ""
                                   : trial.step_time_s.status().message().substr(
                                         0, trial.step_time_s.status().message().find(": "));
    table.AddRow({std::to_string(trial.num_micro_batches),
                  trial.step_time_s.ok() ? FormatSeconds(*trial.step_time_s) : reason});
  }
  return "\nmicro-batch counts tried (the fastest kept):\n" + table.Render();
}

}  // namespace

int RunPipeshardPlan(const PlanOptions& flags) {
  const Clock::time_point start = Clock::now();
  if (!IsTrainableModel(flags.model_path, flags.zoo)) {
    return ReportError(InvalidArgument(
        "--method {} needs a model with weights and a loss (a zoo name, an ONNX file, or an HLO "
        "loss with --weights); an HLO file of a whole train step does not separate forward and "
        "backward: plan {} with --method shard",
        flags.method, flags.model_path));
  }
  if (!flags.mesh.empty()) {
    return ReportError(InvalidArgument(
        "--mesh {}: pipeshard chooses each stage's logical mesh; leave --mesh out", flags.mesh));
  }
  const bool fixed_stages = flags.method == "uniform" || !flags.manual_stages_path.empty() ||
                            !flags.validate_path.empty();
  if (flags.search_micro_batches && (fixed_stages || flags.zoo.micro_batches)) {
    return ReportError(InvalidArgument(
        "--search-micro-batches searches stages and micro-batches together: leave out "
        "--micro-batches, --manual-stages, --validate and --method uniform"));
  }
  PlanOptions options = flags;
  // Without --micro-batches the count is searched with the stages (Alpa leaves it to the user).
  if (!fixed_stages && !flags.zoo.micro_batches) options.search_micro_batches = true;
  SavedPlan saved;
  if (!options.validate_path.empty()) {
    Result<SavedPlan> header = ReadSavedPlanHeader(options.validate_path);
    if (!header.ok()) return ReportError(header.status());
    saved = std::move(header).value();
    // Re-cost at the saved micro-batch count unless --micro-batches asks otherwise.
    if (!options.zoo.micro_batches) options.zoo.micro_batches = saved.num_micro_batches;
  }
  Result<cluster::ClusterSpec> described = ProfiledCluster(options.cluster, options.profile_path);
  if (!described.ok()) return ReportError(described.status());
  // The planner sees the budget as its devices' memory; the document keeps both.
  const std::optional<cluster::ClusterSpec> budgeted =
      options.memory_budget
          ? std::optional(cluster::WithDeviceMemory(*described, *options.memory_budget))
          : std::nullopt;
  const cluster::ClusterSpec& cluster = budgeted ? *budgeted : *described;
  std::vector<MicroBatchTrial> trials;
  Result<PlannedAtCount> planned = options.search_micro_batches
                                       ? SearchMicroBatches(options, cluster, trials)
                                       : PlanAtCount(options, options.zoo, cluster);
  if (!planned.ok()) {
    if (!options.memory_budget) return ReportError(planned.status());
    return ReportError(planned.status().WithContext(
        fmt::format("--memory-budget {}", FormatBytes(*options.memory_budget))));
  }
  const plan::LayerCostTable& table = planned->table;
  const plan::PipeshardPlan& plan = planned->plan;

  const models::Model& model = planned->zoo.zoo.model;
  plan::PipeshardReport report =
      plan::ReportOfPlan(*model.loss, table, cluster, plan,
                         *pipeline::ParseSchedules(options.schedule),  // the flag is checked
                         planned->grid);
  report.method = options.method;
  report.grid = std::move(planned->grid);
  report.stage_dp_s = planned->stage_dp_s;
  report.layer_costs_s = planned->layer_costs_s;
  report.model_name = planned->zoo.zoo.entry.name;
  report.cluster = options.cluster;
  report.micro_batch_size = planned->zoo.batch / plan.num_micro_batches;
  if (!options.search_micro_batches) {
    if (std::optional<std::string> warning = plan::FewMicroBatchesWarning(plan)) {
      report.warnings.push_back(std::move(*warning));
    }
  }
  report.total_s = SecondsSince(start);
  report.memory_budget_bytes = options.memory_budget;
  nlohmann::ordered_json document = plan::PipeshardPlanJson(report, table, *described, plan);
  std::string text = plan::PipeshardPlanText(report, table, plan);
  if (!trials.empty()) {
    document["micro_batch_search"] = TrialsJson(trials);
    text += TrialsText(trials);
  }
  if (!options.report_path.empty()) {
    const Status written = WriteReport(options.report_path, document, plan, report.model_name);
    if (!written.ok()) return ReportError(written);
  }
  if (!options.validate_path.empty()) {
    text = ValidationLine(options.validate_path, saved, plan.step_time_s) + text;
  }
  return EmitDocument(document, text, options.output_path, options.json);
}

}  // namespace alpa::tools
