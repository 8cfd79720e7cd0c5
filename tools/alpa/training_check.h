// `alpa run --cluster SPEC --check`: every step the devices take, taken again from the same inputs
// (the devices' carried values) by the reference interpreter on one device, and compared.
//
// A value (a step's loss, each weight array, each optimizer state array) passes when
//   max_i |got_i - want_i| <= max(kRelativeTolerance * scale + absolute,
//                                 kRoundingMultiple * max_i |want_i - exact_i|)
//   scale = max(1e-3, max_i |want_i|)   (max(1, |want|) for a loss)
// where
//   absolute is 0 except for the weights under Adam, AdamW or Adafactor: they divide each gradient
//     by a running magnitude (Adafactor's factored for matrices, not for biases), so a gradient
//     that is zero up to rounding (GPT's key bias: softmax ignores a shift shared by every key)
//     moves its weight by up to about the learning rate, in a direction set by the order of the
//     sums; two such runs differ by up to twice the learning rate.
//   exact is the same step run by the reference in f32 (the model built with --dtype f32, from
//     the same inputs), for 16-bit models only (else the term is 0). The fast kernels and the
//     reference round differently (a matmul's f32 sum taken in another order can round to the
//     neighbouring f16), and the cancelling sums of a backward pass (layer norm's, softmax's)
//     magnify one ulp into a percent of an array's largest: bert-base in f16 (2 layers, batch 8,
//     seq 128) has its position embedding's Adam moment 1.4% apart between two correct runs. How
//     far the reference's own 16-bit rounding moves each value is the yardstick: the devices
//     pass within kRoundingMultiple of it.
// Starting each step from the devices' inputs keeps a difference from compounding over the steps
// (with Adafactor, a weight moved by noise changes the next gradients, and the state after them,
// beyond any fixed tolerance).
#ifndef ALPA_TOOLS_ALPA_TRAINING_CHECK_H_
#define ALPA_TOOLS_ALPA_TRAINING_CHECK_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"
#include "tools/alpa/zoo_options.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {

inline constexpr double kRelativeTolerance = 1e-4;
inline constexpr double kRoundingMultiple = 4;

class TrainingCheck {
 public:
  // `zoo` and `f32_step` (the same model in f32, required for a 16-bit `zoo`, else null) must
  // outlive the check.
  TrainingCheck(const ZooStep& zoo, const ZooStep* f32_step, uint64_t seed);

  // Before the devices' step: the references take the devices' inputs, their carried values
  // (ZooTraining::Carried).
  Status Follow(const std::vector<ir::Literal>& inputs);

  // After the devices' step `index` (from 0), which returned `loss` and left `carried`: runs the
  // references' step and compares. Returns the reference's loss; errors name the reference at
  // fault.
  Result<double> Compare(int64_t index, double loss, const std::vector<ir::Literal>& carried);

  bool passed() const;
  // "check passed: ..." and the worst value of each kind, for people.
  std::string Text() const;
  nlohmann::ordered_json Json() const;

 private:
  // The value of a kind furthest from its tolerance: its difference in units of the tolerance.
  struct Worst {
    double fraction = 0;
    double difference = 0;  // max |got - want|
    double rounding = 0;    // max |want - exact|: 0 without an f32 reference
    std::string name;

    void Update(const std::string& value, double difference, double rounding, double tolerance);
  };

  const ZooStep& zoo_;
  ZooTraining reference_;
  std::optional<ZooTraining> exact_;  // the reference in f32, for a 16-bit model
  double weight_absolute_ = 0;
  Worst loss_, weights_, state_;
};

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_TRAINING_CHECK_H_
