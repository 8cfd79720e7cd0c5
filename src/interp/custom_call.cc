// custom-call targets with a meaning on one device. Anything else has semantics only its backend
// knows and is an error naming the target.
//
// Identity (one operand, same shape): sharding annotations (Sharding, SPMDFullToShardShape,
// SPMDShardToFullShape), host/device moves (MoveToHost, MoveToDevice) and AWS Neuron's weight
// transfer marker (AwsNeuronTransferWithStaticRing: PyTorch/XLA on Trainium wraps every
// parameter in one), and our pipeline layer boundaries (ir/layer_boundary.h).
//
// Elementwise activations PyTorch/XLA emits for Neuron, on floats, computed in f64:
//   AwsNeuronGelu(x)          = x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2)))
//   AwsNeuronGeluApprxTanh(x) = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
//   AwsNeuronGeluBackward(x)  = d/dx (x * Phi(x)) = Phi(x) + x * phi(x),
//                               phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
//                               (the caller multiplies by the incoming gradient)
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "interp/ops.h"
#include "ir/known_custom_calls.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

double Gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); }

double GeluTanh(double x) {
  const double k = std::sqrt(2 / std::numbers::pi);
  return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double GeluDerivative(double x) {
  const double cdf = 0.5 * (1 + std::erf(x / std::numbers::sqrt2));
  const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
  return cdf + x * pdf;
}

// The function of each of ir::ElementwiseCustomCallTargets(), in its order (AwsNeuronGelu,
// AwsNeuronGeluApprxTanh, AwsNeuronGeluBackward; the interpreter's tests evaluate each by name).
constexpr double (*kActivations[])(double) = {&Gelu, &GeluTanh, &GeluDerivative};

// Identities on one device that no pass may look through (they change layouts), besides
// ir::IdentityCustomCallTargets() (JAX's "Sharding" among them).
constexpr std::string_view kShardingTargets[] = {"SPMDFullToShardShape", "SPMDShardToFullShape"};

bool Among(std::string_view target, std::span<const std::string_view> targets) {
  return std::find(targets.begin(), targets.end(), target) != targets.end();
}

Status ExpectShapePreservingUnary(const ir::Instruction& instruction, const Operands& operands) {
  const std::string& target = instruction.attributes().custom_call_target;
  if (operands.size() != 1) {
    return InvalidArgument("custom-call \"{}\" takes one operand but has {}", target,
                           operands.size());
  }
  if (!operands[0]->shape().Compatible(instruction.shape())) {
    return Unimplemented(
        "custom-call \"{}\" from {} to {} changes the shape, which needs "
        "several devices; the interpreter runs one",
        target, operands[0]->shape().ToString(false), instruction.shape().ToString(false));
  }
  return Status::Ok();
}

}  // namespace

Result<Literal> EvaluateCustomCall(const ir::Instruction& instruction, const Operands& operands) {
  const std::string& target = instruction.attributes().custom_call_target;
  const std::span<const std::string_view> elementwise = ir::ElementwiseCustomCallTargets();
  const bool identity =
      Among(target, kShardingTargets) || Among(target, ir::IdentityCustomCallTargets());
  const auto activation = std::find(elementwise.begin(), elementwise.end(), target);
  if (!identity && activation == elementwise.end()) {
    std::vector<std::string_view> known(std::begin(kShardingTargets), std::end(kShardingTargets));
    known.insert(known.end(), ir::IdentityCustomCallTargets().begin(),
                 ir::IdentityCustomCallTargets().end());
    known.insert(known.end(), elementwise.begin(), elementwise.end());
    return Unimplemented(
        "custom-call %{} has target \"{}\", which the interpreter does not know; known targets: {}",
        instruction.name(), target, fmt::join(known, ", "));
  }
  ALPA_RETURN_IF_ERROR(ExpectShapePreservingUnary(instruction, operands));
  if (identity) return *operands[0];
  const Literal& input = *operands[0];
  if (!ir::IsFloating(input.shape().dtype())) {
    return InvalidArgument("custom-call \"{}\" needs a floating-point operand, not {}", target,
                           input.shape().ToString(false));
  }
  Literal output = Literal::CreateZeros(input.shape());
  for (int64_t i = 0; i < input.element_count(); ++i) {
    output.SetDouble(i, kActivations[activation - elementwise.begin()](input.GetDouble(i)));
  }
  return output;
}

}  // namespace alpa::interp::internal
