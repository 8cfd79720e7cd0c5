// The C++ objects behind the extension's Python classes: each keeps alive what it points into
// (an executable holds the module its train step reads).
#ifndef ALPA_PYTHON_PYTHON_OBJECTS_H_
#define ALPA_PYTHON_PYTHON_OBJECTS_H_

#include <memory>
#include <optional>
#include <string>

#include "api/parallel_executable.h"
#include "api/pipeline_planning.h"
#include "api/pipeshard_executable.h"
#include "cluster/cluster_spec.h"
#include "ir/module.h"

namespace alpa::python {

struct ModuleHandle {
  std::shared_ptr<const ir::Module> module;
};

struct ClusterHandle {
  std::string argument;  // as given: "local:4", a file's path
  cluster::ClusterSpec spec;
};

// A planned and partitioned train step: the module its plan reads stays alive with it.
struct ExecutableHandle {
  std::shared_ptr<const ir::Module> module;
  std::optional<api::ParallelExecutable> executable;  // always set once made
  // Its plan document (api/single_stage_document.h) and the plan as `alpa plan` prints it.
  std::string plan_document;
  std::string plan_text;
};

// A pipelined plan of a loss (PipeshardParallel), with the model it cuts and the cluster it is
// for: what its executables run.
struct PlannedPipelineHandle {
  std::shared_ptr<const api::PlannedPipeline> planned;
  ClusterHandle cluster;
};

// A pipelined plan compiled with the step's own optimizer (autodiff/update_program.h); it reads
// the planned model's loss, which lives as long as it does.
struct PipelineExecutableHandle {
  std::shared_ptr<const api::PlannedPipeline> planned;  // its model's training has the update
  std::optional<api::PipeshardExecutable> executable;   // always set once made
};

// Values a step carries to the next, kept on the executable's devices between calls.
struct DeviceValues {
  api::DeviceState state;
};

}  // namespace alpa::python

#endif  // ALPA_PYTHON_PYTHON_OBJECTS_H_
