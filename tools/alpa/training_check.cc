#include "tools/alpa/training_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autodiff/optimizer.h"
#include "ir/instruction.h"

namespace alpa::tools {
namespace {

// max_i |a_i - b_i|.
double MaxDifference(const ir::Literal& a, const ir::Literal& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    worst = std::max(worst, std::abs(a.GetDouble(i) - b.GetDouble(i)));
  }
  return worst;
}

// max(1e-3, max_i |x_i|): the floor keeps an array of zeros from demanding exact zeros.
double Scale(const ir::Literal& x) {
  double scale = 1e-3;
  for (int64_t i = 0; i < x.element_count(); ++i) scale = std::max(scale, std::abs(x.GetDouble(i)));
  return scale;
}

}  // namespace

void TrainingCheck::Worst::Update(const std::string& value, double value_difference,
                                  double value_rounding, double tolerance) {
  if (value_difference / tolerance < fraction && !name.empty()) return;
  *this = Worst{value_difference / tolerance, value_difference, value_rounding, value};
}

TrainingCheck::TrainingCheck(const ZooStep& zoo, const ZooStep* f32_step, uint64_t seed)
    : zoo_(zoo), reference_(zoo, seed) {
  if (f32_step != nullptr) exact_.emplace(*f32_step, seed);
  if (zoo.training.optimizer.kind != autodiff::OptimizerKind::kSgd) {
    weight_absolute_ = 2 * zoo.training.optimizer.learning_rate;
  }
}

Status TrainingCheck::Follow(const std::vector<ir::Literal>& inputs) {
  ALPA_RETURN_IF_ERROR(reference_.Restart(inputs));
  if (exact_) ALPA_RETURN_IF_ERROR(exact_->Restart(inputs));
  return Status::Ok();
}

Result<double> TrainingCheck::Compare(int64_t index, double loss,
                                      const std::vector<ir::Literal>& carried) {
  double ignored = 0;
  Result<double> want = reference_.Step(index, ignored);
  if (!want.ok()) return want.status().WithContext("the reference interpreter");
  Result<std::vector<ir::Literal>> want_carried = reference_.Carried();
  if (!want_carried.ok()) return want_carried.status().WithContext("the reference interpreter");
  double exact_loss = *want;
  std::vector<ir::Literal> exact_carried;
  if (exact_) {
    Result<double> exact = exact_->Step(index, ignored);
    if (!exact.ok()) return exact.status().WithContext("the reference interpreter in f32");
    exact_loss = *exact;
    ALPA_ASSIGN_OR_RETURN(exact_carried, exact_->Carried());
  }
  const double loss_scale = std::max(1.0, std::abs(*want));
  loss_.Update(
      fmt::format("step {}", index + 1), std::abs(loss - *want), std::abs(*want - exact_loss),
      std::max(kRelativeTolerance * loss_scale, kRoundingMultiple * std::abs(*want - exact_loss)));

  if (carried.size() != want_carried->size()) {
    return Internal("--check: the devices carry {} values, the reference {}", carried.size(),
                    want_carried->size());
  }
  const std::vector<ir::Instruction*> parameters = zoo_.step->entry()->parameters();
  const size_t weights = zoo_.zoo.model.weights.size();
  // The weights and their optimizer state (the carried values but the step count, the last).
  for (size_t i = 0; i + 1 < want_carried->size(); ++i) {
    const ir::Literal& got = carried[i];
    const ir::Literal& want_value = (*want_carried)[i];
    double rounding = 0;
    if (exact_) {
      const ir::Literal& exact = exact_carried[i];
      if (exact.shape() != want_value.shape()) {
        return Internal("--check: the f32 reference carries {} as {}, the model as {}",
                        parameters[i]->name(), exact.shape().ToString(),
                        want_value.shape().ToString());
      }
      rounding = MaxDifference(want_value, exact);
    }
    const bool weight = i < weights;
    const double tolerance =
        std::max(kRelativeTolerance * Scale(want_value) + (weight ? weight_absolute_ : 0.0),
                 kRoundingMultiple * rounding);
    (weight ? weights_ : state_)
        .Update(parameters[i]->name(), MaxDifference(got, want_value), rounding, tolerance);
  }
  return *want;
}

bool TrainingCheck::passed() const {
  return loss_.fraction <= 1.0 && weights_.fraction <= 1.0 && state_.fraction <= 1.0;
}

std::string TrainingCheck::Text() const {
  std::string text = fmt::format(
      "check {}: each value within {:.0e} of its array's largest (of the loss, for losses)",
      passed() ? "passed" : "FAILED", kRelativeTolerance);
  if (exact_) {
    text += fmt::format(
        ",\n      or within {:g}x of how far the model's {} rounding moves it (the reference in {} "
        "against the reference in f32), where that is more",
        kRoundingMultiple, ir::DTypeName(zoo_.dtype), ir::DTypeName(zoo_.dtype));
  }
  auto line = [&](const char* kind, const Worst& worst) {
    std::string out = fmt::format("\n  {:<16} worst {} at {:.2f} of its tolerance (|diff| {:.1e}",
                                  kind, worst.name, worst.fraction, worst.difference);
    if (exact_) out += fmt::format(", rounding {:.1e}", worst.rounding);
    return out + ")";
  };
  text += line("losses", loss_);
  if (!state_.name.empty()) text += line("optimizer state", state_);
  text += line("weights", weights_);
  if (weight_absolute_ > 0) {
    text += fmt::format(
        "\n                   (+ {:g} allowed: twice the learning rate, as Adam moves a weight "
        "whose gradient is zero up to rounding by up to about the learning rate, either way)",
        weight_absolute_);
  }
  return text;
}

nlohmann::ordered_json TrainingCheck::Json() const {
  nlohmann::ordered_json json = {{"passed", passed()},
                                 {"relative_tolerance", kRelativeTolerance},
                                 {"weight_absolute_tolerance", weight_absolute_}};
  if (exact_) {
    json["rounding_reference"] = "f32";
    json["rounding_multiple"] = kRoundingMultiple;
  }
  auto add = [&](const std::string& kind, const Worst& worst) {
    json["worst_" + kind] = worst.name;
    json["worst_" + kind + "_difference"] = worst.difference;
    json["worst_" + kind + "_fraction_of_tolerance"] = worst.fraction;
    if (exact_) json["worst_" + kind + "_rounding"] = worst.rounding;
  };
  add("loss", loss_);
  add("weight", weights_);
  add("optimizer_state", state_);
  return json;
}

}  // namespace alpa::tools
