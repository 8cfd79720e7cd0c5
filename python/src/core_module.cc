// alpa_cpp._core: the C++ API under the Python package. The package's Python files
// (python/alpa_cpp/) build the user-facing API on it: parallelize, the methods, DistributedArray.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.h"
#include "kernels/elementwise.h"

namespace nb = nanobind;

namespace alpa::python {

[[noreturn]] void Raise(const Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      type = PyExc_ValueError;
      break;
    case StatusCode::kNotFound:
      type = PyExc_KeyError;
      break;
    case StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    case StatusCode::kUnimplemented:
      type = PyExc_NotImplementedError;
      break;
    default:
      break;
  }
  PyErr_SetString(type, status.message().c_str());
  throw nb::python_error();
}

}  // namespace alpa::python

NB_MODULE(_core, module) {
  module.doc() = "Alpa C++: plan and run training steps over device meshes (the C++ API).";
  // Refused at import, as the CLI refuses it before any command, so no kernel runs on a path the
  // user did not ask for.
  if (const std::string problem = alpa::kernels::VectorInstructionSetCapError(); !problem.empty()) {
    alpa::python::Raise(alpa::InvalidArgument("{}", problem));
  }
  module.def(
      "version", [] { return std::string(ALPA_VERSION); },
      "The version, as `alpa --version` prints it.");
  alpa::python::BindModules(module);
  alpa::python::BindExecutables(module);
  alpa::python::BindPlans(module);
  alpa::python::BindPipelines(module);
}
