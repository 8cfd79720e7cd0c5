#include "api/dumped_step_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "hlo/input_output_alias.h"
#include "models/forward_loss.h"
#include "models/init.h"

namespace alpa::api {
namespace {

using cost::ParameterRole;

// Inputs made as a batch is (models::ForwardBatches): their shapes and id bounds.
struct Inputs {
  std::vector<ir::Shape> shapes;
  std::vector<int64_t> index_bounds;
};

Inputs BatchInputs(const TrainStep& step) {
  const ir::Computation& entry = *step.module->entry();
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  Inputs inputs;
  for (size_t p = 0; p < step.parameters.size(); ++p) {
    if (step.parameters[p].role != ParameterRole::kBatch) continue;
    inputs.shapes.push_back(parameters[p]->shape());
    inputs.index_bounds.push_back(models::IndexBound(entry, *parameters[p]));
  }
  return inputs;
}

// Made as a batch, at the inputs' own sizes.
std::vector<ir::Literal> MakeInputs(const Inputs& inputs, int64_t rows, uint64_t seed) {
  models::BatchGenerator make =
      models::ForwardBatches(inputs.shapes, inputs.index_bounds, ir::Shape::Scalar(ir::DType::kF32),
                             models::LossKind::kOutput);
  return make(rows, seed);
}

ir::Literal InitialWeight(const ir::Shape& shape, uint64_t seed) {
  if (shape.rank() < 2) {
    return ir::Literal::FromDoubles(shape, std::vector<double>(shape.ElementCount(), 1.0));
  }
  int64_t fan_in = 1;
  for (int64_t d = 1; d < shape.rank(); ++d) fan_in *= shape.dim(d);
  return models::NormalLiteral(shape, 1 / std::sqrt(static_cast<double>(fan_in)), seed);
}

bool IsGivenScalar(const ir::Shape& shape, ParameterRole role) {
  return role == ParameterRole::kOther && shape.IsArray() && shape.rank() == 0;
}

// The scalar parameters the user gives (not those the step carries over), their types, and the
// source line that made each where the dump says (PyTorch/XLA records the optimizer's file and
// line), for the errors that ask for them.
std::string ListScalars(const TrainStep& step) {
  const std::vector<ir::Instruction*> parameters = step.module->entry()->parameters();
  std::vector<std::string> scalars;
  for (size_t p = 0; p < parameters.size(); ++p) {
    const ir::Instruction* parameter = parameters[p];
    if (!IsGivenScalar(parameter->shape(), step.parameters[p].role)) continue;
    const std::string file = ir::MetadataField(parameter->attributes(), "source_file");
    const std::string line = ir::MetadataField(parameter->attributes(), "source_line");
    scalars.push_back(fmt::format(
        "{} ({}{})", parameter->name(), parameter->shape().ToString(),
        file.empty()
            ? ""
            : fmt::format(", from {}:{}", std::filesystem::path(file).filename().string(), line)));
  }
  return fmt::format("{}", fmt::join(scalars, ", "));
}

}  // namespace

Result<DumpedStepValues> InitialDumpedStepValues(const TrainStep& step,
                                                 const std::map<std::string, double>& scalars,
                                                 uint64_t seed) {
  const ir::Computation& entry = *step.module->entry();
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  DumpedStepValues values;
  std::set<std::string> named;
  for (size_t p = 0; p < parameters.size(); ++p) {
    const ir::Shape& shape = parameters[p]->shape();
    const ParameterRole role = step.parameters[p].role;
    const auto number = static_cast<int64_t>(p);
    if (role == ParameterRole::kWeight) {
      values.arguments.push_back(InitialWeight(shape, seed * 7919 + p));
    } else if (role == ParameterRole::kOptimizerState) {
      values.arguments.push_back(ir::Literal::CreateZeros(shape));
    } else if (role == ParameterRole::kBatch) {
      values.batch.push_back(number);
      values.batch_rows = shape.dim(0);
      values.arguments.push_back(ir::Literal::CreateZeros(shape));  // each step's, later
    } else if (IsGivenScalar(shape, role)) {
      const auto given = scalars.find(parameters[p]->name());
      if (given == scalars.end()) {
        return InvalidArgument(
            "{}: scalar parameter {} has no value: nothing in the module says what it is (a "
            "learning rate, a step count); give each with --scalar NAME=VALUE (the scalars: {})",
            step.module->name(), parameters[p]->name(), ListScalars(step));
      }
      named.insert(given->first);
      values.arguments.push_back(ir::Literal::Scalar(shape.dtype(), given->second));
    } else if (shape.IsArray()) {  // an input of its own leading dimension, made once
      const Inputs one = {.shapes = {shape},
                          .index_bounds = {models::IndexBound(entry, *parameters[p])}};
      values.arguments.push_back(std::move(MakeInputs(one, shape.dim(0), seed)[0]));
    } else {
      values.arguments.push_back(ir::Literal::CreateZeros(shape));
    }
  }
  for (const auto& [name, value] : scalars) {
    if (!named.contains(name)) {
      return InvalidArgument(
          "--scalar {}={}: the module has no scalar parameter {}; its scalars: {}", name, value,
          name, ListScalars(step));
    }
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<hlo::InputOutputAlias> aliases,
                        hlo::InputOutputAliases(*step.module));
  std::set<int64_t> replacing;
  for (const hlo::InputOutputAlias& alias : aliases) {
    values.next.emplace_back(alias.output_index.at(0), alias.parameter);
    replacing.insert(alias.output_index.at(0));
  }
  const ir::Instruction& root = *entry.root();
  for (int64_t k = 0; k < root.operand_count(); ++k) {
    const ir::Shape& shape = root.operand(k)->shape();
    const bool scalar = shape.IsArray() && shape.rank() == 0 && ir::IsFloating(shape.dtype());
    if (scalar && !replacing.contains(k)) {
      values.loss_result = k;
      break;
    }
  }
  return values;
}

models::BatchGenerator SyntheticDumpedBatches(const TrainStep& step) {
  return [inputs = BatchInputs(step)](int64_t rows, uint64_t seed) {
    return MakeInputs(inputs, rows, seed);
  };
}

void AdvanceDumpedStep(DumpedStepValues& values, const std::vector<ir::Literal>& results) {
  for (const auto& [result, parameter] : values.next) {
    values.arguments[static_cast<size_t>(parameter)] = results[static_cast<size_t>(result)];
  }
}

}  // namespace alpa::api
