// What the extension module's binding files share: how a C++ error reaches Python, and the
// functions that add each group of classes to the module (core_module.cc calls them in turn).
#ifndef ALPA_PYTHON_BINDINGS_H_
#define ALPA_PYTHON_BINDINGS_H_

#include <nanobind/nanobind.h>

#include <utility>

#include "support/status.h"

namespace alpa::python {

// Raises the Python exception for `status`: ValueError for bad input (INVALID_ARGUMENT), KeyError
// for a name not found, MemoryError for a plan that fits nowhere or a device out of memory,
// NotImplementedError for what this build cannot do yet, RuntimeError otherwise. The message is
// the C++ one, which names the place and what to do.
[[noreturn]] void Raise(const Status& status);

inline void RaiseIfError(const Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T ValueOrRaise(Result<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).value();
}

void BindModules(nanobind::module_& module);      // module_bindings.cc: Module, Cluster
void BindExecutables(nanobind::module_& module);  // executable_bindings.cc: Executable
// plan_bindings.cc: plan_pipeline, explain_plan, render_plan_report
void BindPlans(nanobind::module_& module);
// pipeline_bindings.cc: PlannedPipeline.compile, PipelineExecutable
void BindPipelines(nanobind::module_& module);

}  // namespace alpa::python

#endif  // ALPA_PYTHON_BINDINGS_H_
