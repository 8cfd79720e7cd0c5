// alpa_cpp._core.Module (an HLO module, as JAX lowers a function) and alpa_cpp._core.Cluster (the
// devices a plan is for, from the same strings as `alpa --cluster`).
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "api/hlo_import.h"
#include "bindings.h"
#include "cluster/cluster_json.h"
#include "cluster/cluster_spec.h"
#include "cluster/presets.h"
#include "hlo/printer.h"
#include "ir/module.h"
#include "python_objects.h"

namespace nb = nanobind;

namespace alpa::python {

std::shared_ptr<const ir::Module> ParseModule(const std::string& text, const std::string& name) {
  api::ImportedHlo imported = ValueOrRaise(api::ImportHloText(text, name));
  for (const std::string& note : imported.notes) {
    if (PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 1) != 0) throw nb::python_error();
  }
  return std::move(imported.module);
}

void BindModules(nb::module_& module) {
  nb::class_<ModuleHandle>(module, "Module",
                           "An HLO module: what jax.jit(fn).lower(...).as_text(dialect='hlo') "
                           "prints, parsed and verified.")
      .def(
          "__init__",
          [](ModuleHandle* self, const std::string& text, const std::string& name) {
            new (self) ModuleHandle{ParseModule(text, name)};
          },
          nb::arg("text"), nb::arg("name") = "<module>",
          "Parses HLO text; ValueError names the line and column at fault.")
      .def(
          "text", [](const ModuleHandle& self) { return hlo::PrintModule(*self.module); },
          "The module as HLO text.")
      .def_prop_ro("name", [](const ModuleHandle& self) { return self.module->name(); })
      .def_prop_ro(
          "parameters",
          [](const ModuleHandle& self) {
            std::vector<std::pair<std::string, std::string>> parameters;
            for (const ir::Instruction* parameter : self.module->entry()->parameters()) {
              parameters.emplace_back(parameter->name(), parameter->shape().ToString(false));
            }
            return parameters;
          },
          "The entry parameters in order, each (name, shape).");

  nb::class_<ClusterHandle>(module, "Cluster",
                            "The devices a plan is for: a preset ('local:4', "
                            "'p3.16xlarge:2x8', 'dgx-h100:1x8') or a cluster JSON file.")
      .def(
          "__init__",
          [](ClusterHandle* self, const std::string& spec) {
            new (self) ClusterHandle{spec, ValueOrRaise(cluster::ParseClusterArgument(spec))};
          },
          nb::arg("spec"))
      .def_prop_ro("device_count",
                   [](const ClusterHandle& self) { return cluster::TotalDevices(self.spec); })
      .def_prop_ro(
          "spec_text", [](const ClusterHandle& self) { return self.argument; },
          "The string it was made from.")
      .def(
          "json", [](const ClusterHandle& self) { return cluster::ClusterJson(self.spec); },
          "The cluster as a cluster JSON file writes it.")
      .def("__repr__", [](const ClusterHandle& self) {
        return fmt::format("Cluster('{}', {} devices)", self.argument,
                           cluster::TotalDevices(self.spec));
      });
}

}  // namespace alpa::python
