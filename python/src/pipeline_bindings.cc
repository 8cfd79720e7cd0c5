// PipeshardParallel from Python: alpa_cpp._core.plan_pipeline plans a loss lowered by JAX
// (api/pipeline_planning.h), or re-costs a saved plan's stages for it, with the step's own
// optimizer (the optax update JAX lowered: autodiff/update_program.h) into a PlannedPipeline, and
// PlannedPipeline.compile builds its stages' programs into a PipelineExecutable
// (api/pipeshard_executable.h) that runs on in-process devices. The values the step carries stay
// on the stages' devices between steps; they cross as NumPy arrays only when placed or fetched,
// in the executable's carried order: the weights, each weight's states, the shared states.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/imported_model.h"
#include "autodiff/optimizer.h"
#include "bindings.h"
#include "literal_arrays.h"
#include "pipeline/schedule.h"
#include "python_objects.h"

namespace nb = nanobind;

namespace alpa::python {
namespace {

// The search `alpa plan --method pipeshard` makes with the same flags (tools/alpa/plan_command.h
// holds their defaults, which the Python method's match).
Result<plan::PipelineSearchOptions> SearchOptions(const std::string& schedule,
                                                  const std::string& logical_space,
                                                  const std::string& submesh_space,
                                                  double time_limit_s) {
  plan::PipelineSearchOptions search;
  ALPA_ASSIGN_OR_RETURN(search.planner.schedules, pipeline::ParseSchedules(schedule));
  Result<plan::LogicalSpace> logical = plan::ParseLogicalSpace(logical_space);
  if (!logical.ok()) return logical.status().WithContext("logical_space");
  search.logical = *logical;
  Result<cluster::SubmeshSpace> submeshes = plan::ParseSubmeshSpace(submesh_space);
  if (!submeshes.ok()) return submeshes.status().WithContext("submesh_space");
  search.submeshes = *submeshes;
  if (!(time_limit_s > 0)) {
    return InvalidArgument("time_limit_s {}: it must be positive", time_limit_s);
  }
  search.costs.auto_sharding.solve.time_limit_s = time_limit_s;
  return search;
}

PlannedPipelineHandle PlanPipeline(
    const std::string& loss_text, const std::string& name, const std::string& weights,
    const ClusterHandle& cluster, int64_t num_micro_batches, const std::string& schedule,
    std::optional<int64_t> auto_layers, bool remat, const std::string& optimizer,
    const std::optional<std::string>& update_text, std::optional<int64_t> memory_budget_bytes,
    const std::string& logical_space, const std::string& submesh_space, double time_limit_s,
    const std::optional<std::string>& saved_plan, const std::string& saved_plan_source) {
  if (num_micro_batches < 1) {
    Raise(InvalidArgument("num_micro_batches {}: it must be at least 1", num_micro_batches));
  }
  api::PipelinePlanRequest request;
  request.search =
      ValueOrRaise(SearchOptions(schedule, logical_space, submesh_space, time_limit_s));
  request.auto_layers = auto_layers;
  request.cluster_text = cluster.argument;
  request.memory_budget_bytes = memory_budget_bytes;
  if (saved_plan) {
    plan::document::Json document =
        plan::document::Json::parse(*saved_plan, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) {
      Raise(InvalidArgument("{}: not JSON; save a plan with Plan.save or alpa plan -o",
                            saved_plan_source));
    }
    request.saved = api::SavedPipelinePlan{std::move(document), saved_plan_source};
  }
  models::ZooModel model =
      ValueOrRaise(api::ImportHloLossText(loss_text, name, {.weights = weights, .batch = {}}));
  model.training.num_micro_batches = num_micro_batches;
  model.training.remat = remat;
  Result<autodiff::OptimizerKind> kind = autodiff::ParseOptimizer(optimizer);
  if (!kind.ok()) Raise(kind.status().WithContext("PipeshardParallel(optimizer=...)"));
  model.training.optimizer.kind = *kind;
  if (update_text) {
    model.training.update = ValueOrRaise(api::ImportUpdateProgramText(
        *update_text, "update program", static_cast<int64_t>(model.model.weights.size())));
  }
  Result<api::PlannedPipeline> planned = [&] {
    nb::gil_scoped_release unlocked;  // planning takes seconds; other threads may run
    return api::PlanPipeline(std::move(model), cluster.spec, request);
  }();
  return {std::make_shared<const api::PlannedPipeline>(ValueOrRaise(std::move(planned))), cluster};
}

PipelineExecutableHandle Compile(const PlannedPipelineHandle& planned) {
  const models::Model& model = planned.planned->model.model;
  const autodiff::TrainStepOptions& training = planned.planned->model.training;
  if (training.update == nullptr) {
    Raise(FailedPrecondition(
        "the pipeline was planned without the step's optimizer (plan_pipeline's update_text), "
        "so it has nothing to update the weights with"));
  }
  PipelineExecutableHandle handle{planned.planned, std::nullopt};
  Result<api::PipeshardExecutable> executable = [&] {
    nb::gil_scoped_release unlocked;
    return api::ParallelizePipeshard({model.loss.get(), model.weights, training},
                                     planned.cluster.spec, planned.planned->plan,
                                     planned.planned->table.configs);
  }();
  handle.executable.emplace(ValueOrRaise(std::move(executable)));
  return handle;
}

// The step's optimizer the executable was compiled with (Compile checked there is one).
const autodiff::UpdateProgram& UpdateOf(const PipelineExecutableHandle& self) {
  return *self.planned->model.training.update;
}

// The shapes of the carried values, in order: the weights, each weight's states, the shared
// states.
std::vector<ir::Shape> CarriedShapes(const PipelineExecutableHandle& self) {
  const models::Model& model = self.planned->model.model;
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  std::vector<ir::Shape> shapes;
  for (int64_t w : model.weights) shapes.push_back(parameters[static_cast<size_t>(w)]->shape());
  const autodiff::UpdateProgram& update = UpdateOf(self);
  for (const std::vector<int64_t>& states : update.weight_states) {
    for (int64_t j : states) shapes.push_back(update.state_shape(j));
  }
  for (int64_t j : update.shared_states) shapes.push_back(update.state_shape(j));
  return shapes;
}

// The loss's batch parameters at the step's size: the micro-batches stacked along dimension 0.
std::vector<ir::Shape> BatchShapes(const PipelineExecutableHandle& self) {
  const models::Model& model = self.planned->model.model;
  const int64_t micro_batches = self.planned->model.training.num_micro_batches;
  std::vector<ir::Shape> shapes;
  const std::vector<ir::Instruction*> parameters = model.loss->entry()->parameters();
  for (int64_t p = 0; p < static_cast<int64_t>(parameters.size()); ++p) {
    if (std::find(model.weights.begin(), model.weights.end(), p) != model.weights.end()) continue;
    std::vector<int64_t> dims = parameters[static_cast<size_t>(p)]->shape().dims();
    dims.at(0) *= micro_batches;
    shapes.push_back(ir::Shape::Array(parameters[static_cast<size_t>(p)]->shape().dtype(), dims));
  }
  return shapes;
}

std::vector<ir::Literal> LiteralsOf(const std::vector<HostArray>& arrays,
                                    const std::vector<ir::Shape>& shapes, const char* what) {
  if (arrays.size() != shapes.size()) {
    Raise(InvalidArgument("{}: expected {} arrays, got {}", what, shapes.size(), arrays.size()));
  }
  std::vector<ir::Literal> literals;
  for (size_t i = 0; i < arrays.size(); ++i) {
    literals.push_back(LiteralFromArray(arrays[i], shapes[i], fmt::format("{} {}", what, i)));
  }
  return literals;
}

}  // namespace

void BindPipelines(nb::module_& module) {
  nb::class_<PlannedPipelineHandle>(module, "PlannedPipeline",
                                    "A loss planned for a pipeline (PipeshardParallel).")
      .def_prop_ro(
          "document",
          [](const PlannedPipelineHandle& self) { return self.planned->document.dump(2); },
          "The plan document (JSON), as `alpa plan --method pipeshard --json` writes it.")
      .def_prop_ro(
          "text", [](const PlannedPipelineHandle& self) { return self.planned->text; },
          "The plan as `alpa plan` prints it.")
      .def_prop_ro(
          "timeline_svg",
          [](const PlannedPipelineHandle& self) { return self.planned->timeline_svg; },
          "The simulated step's Gantt chart.")
      .def("compile", &Compile,
           "Builds every stage's programs with the step's optimizer (plan_pipeline's "
           "update_text) for in-process devices.");

  nb::class_<PipelineExecutableHandle>(module, "PipelineExecutable",
                                       "A pipelined plan compiled to run on in-process devices.")
      .def_prop_ro(
          "weight_states",
          [](const PipelineExecutableHandle& self) { return UpdateOf(self).weight_states; },
          "For each weight, the states (indices of S) its update reads and writes.")
      .def_prop_ro(
          "shared_states",
          [](const PipelineExecutableHandle& self) { return UpdateOf(self).shared_states; },
          "The states no weight owns (optax's count), a copy on every stage.")
      .def(
          "place",
          [](PipelineExecutableHandle& self, const std::vector<HostArray>& carried) {
            std::vector<ir::Literal> whole = LiteralsOf(carried, CarriedShapes(self), "carried");
            nb::gil_scoped_release unlocked;
            RaiseIfError(self.executable->Place(whole));
          },
          nb::arg("carried"),
          "Splits the carried values (weights, each weight's states, shared states) over the "
          "stages' devices.")
      .def(
          "step",
          [](PipelineExecutableHandle& self, const std::vector<HostArray>& batch) {
            std::vector<ir::Literal> whole = LiteralsOf(batch, BatchShapes(self), "batch");
            nb::gil_scoped_release unlocked;
            return ValueOrRaise(self.executable->Step(whole));
          },
          nb::arg("batch"),
          "One training step on the loss's batch parameters (the whole batch); returns the mean "
          "of the micro-batches' losses.")
      .def(
          "fetch",
          [](const PipelineExecutableHandle& self) {
            std::vector<ir::Literal> whole;
            {
              nb::gil_scoped_release unlocked;
              whole = ValueOrRaise(self.executable->Fetch());
            }
            std::vector<NumpyArray> arrays;
            for (ir::Literal& value : whole) arrays.push_back(ArrayFromLiteral(std::move(value)));
            return arrays;
          },
          "The carried values, whole.")
      .def_prop_ro(
          "carried_placement",
          [](const PipelineExecutableHandle& self) {
            std::vector<std::pair<int64_t, std::string>> placement;
            for (const auto& [stage, spec] : self.executable->CarriedPlacement()) {
              placement.emplace_back(stage, sharding::ToString(spec));
            }
            return placement;
          },
          "For each carried value: the first stage holding it and its layout there.")
      .def_prop_ro(
          "peak_memory_bytes",
          [](const PipelineExecutableHandle& self) {
            std::vector<int64_t> peaks;
            for (const runtime::PipelineProfile& device : self.executable->last_run()) {
              peaks.push_back(device.peak_bytes);
            }
            return peaks;
          },
          "Each device's measured peak in the last step (empty before the first).")
      .def_prop_ro("device_count", [](const PipelineExecutableHandle& self) {
        return self.executable->device_count();
      });

  module.def("plan_pipeline", &PlanPipeline, nb::arg("loss_text"), nb::arg("name"),
             nb::arg("weights"), nb::arg("cluster"), nb::arg("num_micro_batches"),
             nb::arg("schedule") = "auto", nb::arg("auto_layers") = nb::none(),
             nb::arg("remat") = false, nb::arg("optimizer") = "adam",
             nb::arg("update_text") = nb::none(), nb::arg("memory_budget_bytes") = nb::none(),
             nb::arg("logical_space") = "single-node", nb::arg("submesh_space") = "power-of-two",
             nb::arg("time_limit_s") = 30.0, nb::arg("saved_plan") = nb::none(),
             nb::arg("saved_plan_source") = "the saved plan",
             "Plans the HLO loss `loss_text` (its `weights` as `alpa plan --weights` takes them) "
             "for a pipeline, as `alpa plan --method pipeshard` does; with `update_text` (the HLO "
             "of apply(W..., G..., S...) -> (W'..., S'...) over the weights W, their gradients G "
             "and the other state S the step carries) the step's own optimizer in place of "
             "`optimizer`, as `--update-program` gives it. With `saved_plan` (a plan document's "
             "JSON text, named `saved_plan_source` in errors) its stages are re-costed instead "
             "of searched, as `alpa run --plan` takes them.");
  module.def(
      "split_update_program",
      [](const std::string& text, int64_t num_weights) {
        std::shared_ptr<const autodiff::UpdateProgram> program =
            ValueOrRaise(api::ImportUpdateProgramText(text, "update program", num_weights));
        return std::make_pair(program->weight_states, program->shared_states);
      },
      nb::arg("text"), nb::arg("num_weights"),
      "(each weight's states, the shared states) of the update program `text`; ValueError when "
      "a pipeline cannot run it (a value that reads two weights).");
}

}  // namespace alpa::python
