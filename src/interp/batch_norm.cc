// batch-norm-training, batch-norm-inference and batch-norm-grad (PyTorch/XLA lowers layer norm to
// them). Statistics run over every dimension except feature_index; N is the element count per
// feature and eps the epsilon attribute:
//   mean[c] = sum(x) / N        var[c] = sum((x - mean)^2) / N        (biased, as XLA)
//   training / inference:  y = (x - mean) / sqrt(var + eps) * scale + offset
//   grad (dy the output gradient, r = 1 / sqrt(var + eps)):
//     grad_offset = sum(dy)        grad_scale = sum(dy * (x - mean)) * r
//     grad_x = scale * r / N * (N * dy - sum(dy) - (x - mean) * sum(dy * (x - mean)) * r^2)
// Sums accumulate in f64 and results round once to the element type, a tighter bound than
// XLA's expansion into element-type ops.
#include <cmath>
#include <initializer_list>

#include "interp/literal_util.h"
#include "interp/ops.h"

namespace alpa::interp::internal {
namespace {

using ir::Literal;

// Where feature c of a row-major array lives: element i has feature (i / inner) % features.
struct FeatureLayout {
  int64_t features = 0;
  int64_t inner = 1;  // product of the dimensions after feature_index
  int64_t count = 0;

  int64_t FeatureOf(int64_t i) const { return (i / inner) % features; }
  // No features means no elements; 0 then, not a division by zero.
  double PerFeature() const { return features == 0 ? 0.0 : static_cast<double>(count / features); }
};

Result<FeatureLayout> LayoutOf(const ir::Instruction& instruction, const Literal& operand) {
  const ir::Shape& shape = operand.shape();
  const int64_t feature_index = instruction.attributes().feature_index;
  if (!shape.IsArray() || feature_index < 0 || feature_index >= shape.rank()) {
    return InvalidArgument("feature_index={} is out of range for operand shape {}", feature_index,
                           shape.ToString(false));
  }
  FeatureLayout layout;
  layout.features = shape.dim(feature_index);
  for (int64_t d = feature_index + 1; d < shape.rank(); ++d) layout.inner *= shape.dim(d);
  layout.count = shape.ElementCount();
  return layout;
}

// Checks the operand count, that operand 0 has a valid feature_index, and that the operands in
// `per_feature` are [features] vectors; returns operand 0's layout.
Result<FeatureLayout> CheckOperands(const ir::Instruction& instruction, const Operands& operands,
                                    size_t count, std::initializer_list<size_t> per_feature) {
  ALPA_RETURN_IF_ERROR(ExpectOperandCount(operands, count));
  ALPA_RETURN_IF_ERROR(ExpectArrayOperands(operands));
  ALPA_ASSIGN_OR_RETURN(FeatureLayout layout, LayoutOf(instruction, *operands[0]));
  for (size_t k : per_feature) {
    const ir::Shape& shape = operands[k]->shape();
    if (shape.rank() != 1 || shape.dim(0) != layout.features) {
      return InvalidArgument(
          "operand {} has shape {}, expected [{}] (the size of feature "
          "dimension {} of {})",
          k, shape.ToString(false), layout.features, instruction.attributes().feature_index,
          operands[0]->shape().ToString(false));
    }
  }
  return layout;
}

std::vector<double> Values(const Literal& literal) {
  std::vector<double> values(static_cast<size_t>(literal.element_count()));
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    values[static_cast<size_t>(i)] = literal.GetDouble(i);
  }
  return values;
}

// Per-feature sums of f(i) over the elements.
template <typename F>
std::vector<double> SumPerFeature(const FeatureLayout& layout, F&& f) {
  std::vector<double> sums(static_cast<size_t>(layout.features), 0.0);
  for (int64_t i = 0; i < layout.count; ++i) sums[static_cast<size_t>(layout.FeatureOf(i))] += f(i);
  return sums;
}

Literal FeatureLiteral(const Literal& like, const std::vector<double>& values) {
  Literal literal = Literal::CreateZeros(like.shape());
  for (size_t c = 0; c < values.size(); ++c) literal.SetDouble(static_cast<int64_t>(c), values[c]);
  return literal;
}

// y = (x - mean) * rsqrt(var + eps) * scale + offset, into a literal shaped like `operand`.
Literal Normalize(const FeatureLayout& layout, const Literal& operand, const std::vector<double>& x,
                  const std::vector<double>& mean, const std::vector<double>& var,
                  const Literal& scale, const Literal& offset, double epsilon) {
  Literal output = Literal::CreateZeros(operand.shape());
  for (int64_t i = 0; i < layout.count; ++i) {
    const int64_t c = layout.FeatureOf(i);
    const size_t k = static_cast<size_t>(c);
    output.SetDouble(i, (x[static_cast<size_t>(i)] - mean[k]) / std::sqrt(var[k] + epsilon) *
                                scale.GetDouble(c) +
                            offset.GetDouble(c));
  }
  return output;
}

}  // namespace

Result<Literal> EvaluateBatchNormTraining(const ir::Instruction& instruction,
                                          const Operands& operands) {
  // (operand, scale, offset)
  ALPA_ASSIGN_OR_RETURN(FeatureLayout layout, CheckOperands(instruction, operands, 3, {1, 2}));
  const Literal& operand = *operands[0];
  const std::vector<double> x = Values(operand);
  std::vector<double> mean = SumPerFeature(layout, [&](int64_t i) { return x[size_t(i)]; });
  for (double& m : mean) m /= layout.PerFeature();
  std::vector<double> var = SumPerFeature(layout, [&](int64_t i) {
    const double d = x[size_t(i)] - mean[size_t(layout.FeatureOf(i))];
    return d * d;
  });
  for (double& v : var) v /= layout.PerFeature();
  std::vector<Literal> results;
  results.push_back(Normalize(layout, operand, x, mean, var, *operands[1], *operands[2],
                              instruction.attributes().epsilon));
  results.push_back(FeatureLiteral(*operands[1], mean));
  results.push_back(FeatureLiteral(*operands[1], var));
  return Literal::CreateTuple(std::move(results));
}

Result<Literal> EvaluateBatchNormInference(const ir::Instruction& instruction,
                                           const Operands& operands) {
  // (operand, scale, offset, mean, variance)
  ALPA_ASSIGN_OR_RETURN(FeatureLayout layout,
                        CheckOperands(instruction, operands, 5, {1, 2, 3, 4}));
  const Literal& operand = *operands[0];
  return Normalize(layout, operand, Values(operand), Values(*operands[3]), Values(*operands[4]),
                   *operands[1], *operands[2], instruction.attributes().epsilon);
}

Result<Literal> EvaluateBatchNormGrad(const ir::Instruction& instruction,
                                      const Operands& operands) {
  // (operand, scale, mean, variance, grad_output)
  ALPA_ASSIGN_OR_RETURN(FeatureLayout layout, CheckOperands(instruction, operands, 5, {1, 2, 3}));
  const Literal& operand = *operands[0];
  if (operands[4]->shape().dims() != operand.shape().dims()) {
    return InvalidArgument("grad_output {} must have the dims of the operand {}",
                           operands[4]->shape().ToString(false), operand.shape().ToString(false));
  }
  const std::vector<double> x = Values(operand);
  const std::vector<double> mean = Values(*operands[2]);
  const std::vector<double> var = Values(*operands[3]);
  const std::vector<double> dy = Values(*operands[4]);
  const double epsilon = instruction.attributes().epsilon;
  auto centered = [&](int64_t i) { return x[size_t(i)] - mean[size_t(layout.FeatureOf(i))]; };
  const std::vector<double> sum_dy =
      SumPerFeature(layout, [&](int64_t i) { return dy[size_t(i)]; });
  const std::vector<double> sum_dy_centered =
      SumPerFeature(layout, [&](int64_t i) { return dy[size_t(i)] * centered(i); });
  std::vector<double> rsqrt(var.size());
  for (size_t c = 0; c < var.size(); ++c) rsqrt[c] = 1.0 / std::sqrt(var[c] + epsilon);

  const double n = layout.PerFeature();
  Literal grad_operand = Literal::CreateZeros(operand.shape());
  for (int64_t i = 0; i < layout.count; ++i) {
    const int64_t c = layout.FeatureOf(i);
    const size_t k = static_cast<size_t>(c);
    grad_operand.SetDouble(i, operands[1]->GetDouble(c) * rsqrt[k] / n *
                                  (n * dy[size_t(i)] - sum_dy[k] -
                                   centered(i) * sum_dy_centered[k] * rsqrt[k] * rsqrt[k]));
  }
  std::vector<double> grad_scale(var.size());
  for (size_t c = 0; c < var.size(); ++c) grad_scale[c] = sum_dy_centered[c] * rsqrt[c];
  std::vector<Literal> results;
  results.push_back(std::move(grad_operand));
  results.push_back(FeatureLiteral(*operands[1], grad_scale));
  results.push_back(FeatureLiteral(*operands[1], sum_dy));
  return Literal::CreateTuple(std::move(results));
}

}  // namespace alpa::interp::internal
