#include "tools/alpa/zoo_training.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <utility>

#include "interp/evaluator.h"
#include "models/init.h"
#include "runtime/profiler.h"
#include "support/units.h"

namespace alpa::tools {
namespace {

class Interpreter final : public StepRunner {
 public:
  explicit Interpreter(const ir::Module& step) : step_(step) {}

  Status Place(std::vector<ir::Literal> carried) override {
    carried_ = std::move(carried);
    return Status::Ok();
  }

  Result<double> Step(std::vector<ir::Literal> batch) override {
    // The carried values move into the step and come back as its results: no copies.
    std::vector<ir::Literal> arguments = std::move(carried_);
    carried_.clear();
    for (ir::Literal& value : batch) arguments.push_back(std::move(value));
    ALPA_ASSIGN_OR_RETURN(ir::Literal result, interp::EvaluateModule(step_, std::move(arguments)));
    // The results: the loss, then the carried values in parameter order.
    std::vector<ir::Literal>& outputs = result.tuple_elements();
    carried_.assign(std::make_move_iterator(outputs.begin() + 1),
                    std::make_move_iterator(outputs.end()));
    return outputs[0].GetDouble(0);
  }

  Result<std::vector<ir::Literal>> Fetch() override { return carried_; }

 private:
  const ir::Module& step_;
  std::vector<ir::Literal> carried_;
};

// The layout of `step`'s carried values held whole by one device: its first parameters, as many
// as the root's elements after the loss.
api::CarriedLayout WholeCarriedLayout(const ir::Module& step) {
  const std::vector<ir::Instruction*> parameters = step.entry()->parameters();
  const int64_t carried = step.entry()->root()->shape().tuple_size() - 1;
  std::vector<std::string> names;
  std::vector<ir::Shape> shapes;
  for (int64_t i = 0; i < carried; ++i) {
    names.push_back(parameters[static_cast<size_t>(i)]->name());
    shapes.push_back(parameters[static_cast<size_t>(i)]->shape());
  }
  return api::WholeValuesLayout(names, shapes);
}

}  // namespace

Result<std::string> StepRunner::Save(const ir::Module& step, const api::CheckpointTarget& target) {
  ALPA_ASSIGN_OR_RETURN(std::vector<ir::Literal> values, Fetch());
  return api::SaveCheckpoint(WholeCarriedLayout(step), 0, {std::move(values)}, target);
}

Result<api::RestoredState> StepRunner::Restore(const ir::Module& step, const std::string& path,
                                               const std::string& model) {
  ALPA_ASSIGN_OR_RETURN(api::RestoredState restored,
                        api::RestoreCheckpoint(WholeCarriedLayout(step), path, model));
  ALPA_RETURN_IF_ERROR(Place(std::move(restored.tiles.front())));
  restored.tiles.clear();
  return restored;
}

nlohmann::ordered_json StepRecordsJson(const std::vector<StepRecord>& records, bool reference) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const StepRecord& record : records) {
    nlohmann::ordered_json step = {{"step", record.step},
                                   {"loss", record.loss},
                                   {"time_s", record.seconds},
                                   {"peak_memory_bytes", record.peak_memory_bytes}};
    if (reference) step["reference_loss"] = record.reference_loss;
    steps.push_back(std::move(step));
  }
  return steps;
}

void PrintStepHeader(bool reference) {
  fmt::print("\n{:>6}  {:>12}  {:>9}  {:>10}{}\n", "step", "loss", "time", "peak mem",
             reference ? fmt::format("  {:>12}  {:>9}", "reference", "|diff|") : "");
  fmt::print("{:>6}  {:>12}  {:>9}  {:>10}{}\n", "------", "------------", "---------",
             "----------", reference ? "  ------------  ---------" : "");
  std::fflush(stdout);
}

void PrintStepRow(const StepRecord& record, bool reference) {
  fmt::print("{:>6}  {:>12}  {:>9}  {:>10}", record.step, FormatLoss(record.loss),
             FormatSeconds(record.seconds),
             record.peak_memory_bytes > 0 ? FormatBytes(record.peak_memory_bytes) : "-");
  if (reference) {
    fmt::print("  {:>12}  {:>9.2e}", FormatLoss(record.reference_loss),
               std::abs(record.loss - record.reference_loss));
  }
  fmt::print("\n");
  std::fflush(stdout);
}

double MeasuredStepSeconds(const std::vector<StepRecord>& records) {
  std::vector<double> warm;
  for (size_t i = records.size() > 1 ? 1 : 0; i < records.size(); ++i) {
    warm.push_back(records[i].seconds);
  }
  return runtime::Median(std::move(warm));
}

std::string FormatLoss(double loss) {
  return std::fabs(loss) < 1e5 ? fmt::format("{:.6f}", loss) : fmt::format("{:.4e}", loss);
}

std::unique_ptr<StepRunner> InterpreterRunner(const ir::Module& step) {
  return std::make_unique<Interpreter>(step);
}

std::vector<ir::Literal> InitialCarriedValues(const ZooStep& zoo, uint64_t seed) {
  const std::vector<ir::Instruction*> inputs = zoo.step->entry()->parameters();
  const models::Model& model = zoo.zoo.model;
  // The step's inputs: the weights, then their state, t, then the batch.
  const size_t batch_inputs =
      static_cast<size_t>(model.loss->entry()->parameter_count()) - model.weights.size();
  const size_t carried = inputs.size() - batch_inputs;
  // The weights are drawn in the step's type: the f32 master copy of a mixed-precision model.
  std::vector<ir::Literal> weights =
      models::InitialWeights(model, seed, inputs[0]->shape().dtype());
  std::vector<ir::Literal> values;
  for (size_t i = 0; i < carried; ++i) {
    values.push_back(i < weights.size() ? std::move(weights[i])
                                        : ir::Literal::CreateZeros(inputs[i]->shape()));
  }
  return values;
}

std::vector<ir::Literal> StepBatch(const ZooStep& zoo, uint64_t seed, int64_t index) {
  return zoo.zoo.model.batch(zoo.batch, seed + static_cast<uint64_t>(index));
}

ZooTraining::ZooTraining(const ZooStep& zoo, uint64_t seed, std::unique_ptr<StepRunner> runner)
    : zoo_(zoo), seed_(seed), runner_(std::move(runner)) {
  if (runner_ == nullptr) runner_ = InterpreterRunner(*zoo.step);
}

Status ZooTraining::PlaceInitial() {
  if (placed_) return Status::Ok();
  ALPA_RETURN_IF_ERROR(runner_->Place(InitialCarriedValues(zoo_, seed_)));
  placed_ = true;
  return Status::Ok();
}

Result<double> ZooTraining::Step(int64_t index, double& seconds) {
  ALPA_RETURN_IF_ERROR(PlaceInitial());
  std::vector<ir::Literal> batch = StepBatch(zoo_, seed_, index);
  const auto start = std::chrono::steady_clock::now();
  Result<double> loss = runner_->Step(std::move(batch));
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!loss.ok()) {
    return loss.status().WithContext(fmt::format("step {}: evaluation failed", index + 1));
  }
  return loss;
}

Result<std::vector<ir::Literal>> ZooTraining::Carried() {
  ALPA_RETURN_IF_ERROR(PlaceInitial());
  return runner_->Fetch();
}

Status ZooTraining::Restart(std::vector<ir::Literal> carried) {
  ALPA_RETURN_IF_ERROR(runner_->Place(std::move(carried)));
  placed_ = true;
  return Status::Ok();
}

Result<std::string> ZooTraining::Save(api::CheckpointTarget target) {
  ALPA_RETURN_IF_ERROR(PlaceInitial());
  target.model = zoo_.zoo.entry.name;
  return runner_->Save(*zoo_.step, target);
}

Result<api::RestoredState> ZooTraining::Resume(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(api::RestoredState restored,
                        runner_->Restore(*zoo_.step, path, zoo_.zoo.entry.name));
  placed_ = true;
  return restored;
}

}  // namespace alpa::tools
