// alpa_cpp._core.Executable: a whole train step (forward, backward and update, its state donated,
// as jax.jit(step, donate_argnums=...) lowers it) planned with a parallel method on a cluster and
// partitioned for its devices (api::Parallelize), run on in-process devices. Arguments and
// results cross as NumPy arrays; the carried state can stay on the devices between steps
// (place / step / fetch), as Alpa's DistributedArray kept it.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/dumped_train_step.h"
#include "api/parallelize.h"
#include "api/single_stage_document.h"
#include "bindings.h"
#include "hlo/printer.h"
#include "literal_arrays.h"
#include "python_objects.h"
#include "runtime/execution_trace.h"
#include "sharding/parallel_methods.h"
#include "sharding/pins.h"
#include "solver/iopddl_json.h"

namespace nb = nanobind;

namespace alpa::python {
namespace {

const api::ParallelExecutable& Of(const ExecutableHandle& handle) { return *handle.executable; }
api::ParallelExecutable& Of(ExecutableHandle& handle) { return *handle.executable; }

// The plan document of `executable`, as `alpa plan --method METHOD` writes it for the module.
void DocumentPlan(const api::TrainStep& step, const ClusterHandle& cluster,
                  const std::string& method, int64_t batch_axis, const std::string& model_name,
                  ExecutableHandle& handle) {
  const api::ParallelExecutable& executable = *handle.executable;
  api::SingleStageReport report =
      ValueOrRaise(api::ReportOfSingleStagePlan(step, executable.solution(), 1));
  report.model_name = model_name;
  report.cluster = cluster.argument;
  report.method = method;
  report.batch_axis = batch_axis;
  report.meshes_tried = executable.meshes_tried();
  report.pins = executable.pinned_instructions();
  report.total_seconds = executable.compile_time_s();
  handle.plan_document =
      api::SingleStagePlanJson(report, executable.mesh_shape(), executable.solution()).dump(2);
  handle.plan_text =
      api::SingleStagePlanText(report, executable.mesh_shape(), executable.solution());
}

ExecutableHandle ParallelizeStep(const ModuleHandle& module, const ClusterHandle& cluster,
                                 const std::string& method, std::vector<int64_t> mesh_shape,
                                 int64_t batch_axis, std::optional<int64_t> memory_budget_bytes,
                                 const std::string& model_name) {
  api::ParallelizeOptions options;
  options.method = ValueOrRaise(sharding::ParseParallelMethod(method));
  const api::TrainStep step =
      ValueOrRaise(api::DescribeDumpedStepFor(*module.module, options.method));
  options.mesh_shape = std::move(mesh_shape);
  options.batch_axis = batch_axis;
  options.auto_sharding.memory_budget_bytes = memory_budget_bytes;
  // The module's own shardings (a jit's in/out shardings, with_sharding_constraint) are pins.
  const ir::Computation* entry = module.module->entry();
  options.mesh_pins = [entry](const std::vector<int64_t>& shape) {
    return sharding::PinsFromHloShardings(*entry, shape);
  };
  ExecutableHandle handle{module.module, std::nullopt, "", ""};
  Result<api::ParallelExecutable> executable = [&] {
    nb::gil_scoped_release release;
    return api::Parallelize(step, cluster.spec, options);
  }();
  handle.executable.emplace(ValueOrRaise(std::move(executable)));
  // The data-parallel methods split the batch along axis 0, as `alpa plan` records.
  const bool shard = options.method == sharding::ParallelMethod::kShard;
  DocumentPlan(step, cluster, method, shard || batch_axis >= 0 ? batch_axis : 0, model_name,
               handle);
  return handle;
}

// The whole values of entry `parameters` from `arrays`, each checked against its parameter.
std::vector<ir::Literal> ArgumentsOf(const ExecutableHandle& handle,
                                     const std::vector<HostArray>& arrays,
                                     const std::vector<int64_t>& parameters, const char* what) {
  if (arrays.size() != parameters.size()) {
    Raise(
        InvalidArgument("{}: expected {} arrays, got {}", what, parameters.size(), arrays.size()));
  }
  const std::vector<ir::Instruction*> entry = handle.module->entry()->parameters();
  std::vector<ir::Literal> literals;
  literals.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const ir::Instruction& parameter = *entry[static_cast<size_t>(parameters[i])];
    literals.push_back(LiteralFromArray(
        arrays[i], parameter.shape(),
        fmt::format("{} {} (parameter {}, %{})", what, i, parameters[i], parameter.name())));
  }
  return literals;
}

std::vector<NumpyArray> ArraysOf(std::vector<ir::Literal> literals) {
  std::vector<NumpyArray> arrays;
  arrays.reserve(literals.size());
  for (ir::Literal& literal : literals) arrays.push_back(ArrayFromLiteral(std::move(literal)));
  return arrays;
}

std::vector<int64_t> AllParameters(const ExecutableHandle& handle) {
  std::vector<int64_t> all(static_cast<size_t>(handle.module->entry()->parameter_count()));
  for (size_t p = 0; p < all.size(); ++p) all[p] = static_cast<int64_t>(p);
  return all;
}

}  // namespace

void BindExecutables(nb::module_& module) {
  nb::class_<DeviceValues>(module, "DeviceValues",
                           "The values a step carries to the next, split over the devices.")
      .def_prop_ro(
          "empty", [](const DeviceValues& self) { return self.state.empty(); },
          "True after a failed step handed them to the devices: place them again.");

  nb::class_<ExecutableHandle>(module, "Executable",
                               "A train step planned and partitioned for a cluster's devices.")
      .def(
          "run",
          [](ExecutableHandle& self, const std::vector<HostArray>& arguments) {
            std::vector<ir::Literal> whole =
                ArgumentsOf(self, arguments, AllParameters(self), "argument");
            std::vector<ir::Literal> results;
            {
              nb::gil_scoped_release release;
              results = ValueOrRaise(Of(self).Run(whole));
            }
            return ArraysOf(std::move(results));
          },
          nb::arg("arguments"),
          "Runs one step on whole arguments (every entry parameter, in order); returns every "
          "result, whole.")
      .def(
          "place",
          [](const ExecutableHandle& self, const std::vector<HostArray>& carried) {
            std::vector<ir::Literal> whole =
                ArgumentsOf(self, carried, Of(self).carried_parameters(), "carried value");
            nb::gil_scoped_release release;
            return DeviceValues{ValueOrRaise(Of(self).Place(whole))};
          },
          nb::arg("carried"), "Splits the carried values over the devices, once.")
      .def(
          "step",
          [](ExecutableHandle& self, DeviceValues& state, const std::vector<HostArray>& fresh,
             bool trace) {
            std::vector<ir::Literal> whole =
                ArgumentsOf(self, fresh, Of(self).fresh_parameters(), "argument");
            std::vector<ir::Literal> results;
            {
              nb::gil_scoped_release release;
              std::optional<std::chrono::steady_clock::time_point> epoch;
              if (trace) epoch = std::chrono::steady_clock::now();
              results = ValueOrRaise(Of(self).Step(state.state, whole, nullptr, epoch));
            }
            return ArraysOf(std::move(results));
          },
          nb::arg("state"), nb::arg("fresh"), nb::arg("trace") = false,
          "Runs one step on the carried values in `state` (updated in place) and the fresh "
          "arguments; returns the results that replace no parameter, whole. With `trace`, every "
          "device records when it ran each instruction (last_trace_json).")
      .def(
          "last_trace_json",
          [](const ExecutableHandle& self) {
            const std::vector<runtime::ExecutionProfile>& profiles = Of(self).last_run();
            runtime::ExecutionTrace trace(static_cast<int64_t>(profiles.size()));
            for (size_t device = 0; device < profiles.size(); ++device) {
              trace.Add(static_cast<int64_t>(device), profiles[device].events);
            }
            return trace.ToChromeTrace();
          },
          "The last step's timeline as a Chrome trace (chrome://tracing, Perfetto): one row per "
          "device, one event per instruction; empty rows unless that step was traced.")
      .def(
          "fetch",
          [](const ExecutableHandle& self, const DeviceValues& state) {
            std::vector<ir::Literal> whole;
            {
              nb::gil_scoped_release release;
              whole = ValueOrRaise(Of(self).Fetch(state.state));
            }
            return ArraysOf(std::move(whole));
          },
          nb::arg("state"), "The carried values, whole.")
      .def_prop_ro("carried_parameters",
                   [](const ExecutableHandle& self) { return Of(self).carried_parameters(); })
      .def_prop_ro(
          "carried_leaves", [](const ExecutableHandle& self) { return Of(self).carried_leaves(); },
          "The result replacing each carried parameter.")
      .def_prop_ro("fresh_parameters",
                   [](const ExecutableHandle& self) { return Of(self).fresh_parameters(); })
      .def_prop_ro(
          "fresh_leaves", [](const ExecutableHandle& self) { return Of(self).fresh_leaves(); },
          "The results step returns, in root order.")
      .def_prop_ro("mesh_shape", [](const ExecutableHandle& self) { return Of(self).mesh_shape(); })
      .def_prop_ro("device_count",
                   [](const ExecutableHandle& self) { return Of(self).device_count(); })
      .def_prop_ro(
          "peak_memory_bytes",
          [](const ExecutableHandle& self) { return Of(self).peak_memory_bytes(); },
          "The largest per-device peak measured so far (0 before the first step).")
      .def_prop_ro(
          "predicted_peak_memory_bytes",
          [](const ExecutableHandle& self) { return Of(self).estimate().peak_memory_bytes; },
          "The memory model's per-device peak for the plan.")
      .def_prop_ro(
          "predicted_step_seconds",
          [](const ExecutableHandle& self) { return Of(self).estimate().step_seconds(); },
          "The cost model's step time on the cluster's devices.")
      .def_prop_ro("compile_time_s",
                   [](const ExecutableHandle& self) { return Of(self).compile_time_s(); })
      .def_prop_ro(
          "passed_over", [](const ExecutableHandle& self) { return Of(self).passed_over(); },
          "Faster plans of other mesh shapes the partitioner could not lower yet.")
      .def_prop_ro(
          "parameter_shardings",
          [](const ExecutableHandle& self) {
            std::vector<std::string> specs;
            for (const sharding::ShardingSpec& spec : Of(self).parameter_specs()) {
              specs.push_back(sharding::ToString(spec));
            }
            return specs;
          },
          "Each entry parameter's layout over the mesh.")
      .def(
          "ilp_problem_json",
          [](const ExecutableHandle& self) {
            return solver::IopddlJson(Of(self).solution().problem);
          },
          "The auto-sharding problem the plan solved, in the IOPDDL contest's JSON form "
          "(`alpa solve` reads it).")
      .def_prop_ro(
          "plan_document", [](const ExecutableHandle& self) { return self.plan_document; },
          "The plan document (JSON), as `alpa plan --json` writes it for the module.")
      .def_prop_ro(
          "plan_text", [](const ExecutableHandle& self) { return self.plan_text; },
          "The plan as `alpa plan` prints it.")
      .def(
          "program_text",
          [](const ExecutableHandle& self) { return hlo::PrintModule(Of(self).program()); },
          "The program every device runs (local shapes and collectives), as HLO text.");

  module.def("parallelize_step", &ParallelizeStep, nb::arg("module"), nb::arg("cluster"),
             nb::arg("method"), nb::arg("mesh_shape") = std::vector<int64_t>{},
             nb::arg("batch_axis") = -1, nb::arg("memory_budget_bytes") = nb::none(),
             nb::arg("model_name") = "",
             "Plans a whole train step (its state donated: the module's input_output_alias) with "
             "`method` (shard, data, zero2, zero3) on the cluster's devices and partitions it.");
}

}  // namespace alpa::python
