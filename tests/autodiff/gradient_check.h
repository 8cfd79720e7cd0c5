// Checks autodiff::Grad against central finite differences, evaluated by the interpreter.
#ifndef ALPA_TESTS_AUTODIFF_GRADIENT_CHECK_H_
#define ALPA_TESTS_AUTODIFF_GRADIENT_CHECK_H_

#include <functional>
#include <memory>
#include <vector>

#include "ir/builder.h"
#include "ir/module.h"

namespace alpa::autodiff::testing {

inline ir::Shape F64(std::vector<int64_t> dims) {
  return ir::Shape::Array(ir::DType::kF64, std::move(dims));
}

// One window dimension of a convolution or reduce-window.
inline ir::WindowDim Window(int64_t size, int64_t stride = 1, int64_t pad_low = 0,
                            int64_t pad_high = 0, int64_t rhs_dilation = 1) {
  ir::WindowDim w;
  w.size = size;
  w.stride = stride;
  w.pad_low = pad_low;
  w.pad_high = pad_high;
  w.rhs_dilation = rhs_dilation;
  return w;
}

// Builds the body of a loss from its parameters; returns an array of any shape.
using BodyFn =
    std::function<ir::Instruction*(ir::ComputationBuilder&, const std::vector<ir::Instruction*>&)>;

// The module loss(p...) = sum(body(p...) * w), w a fixed pseudo-random array, so that every
// element of the body's result reaches the loss with a different weight.
std::unique_ptr<ir::Module> WeightedSumLoss(const std::vector<ir::Shape>& parameters,
                                            const BodyFn& body);

// Evaluates Grad(forward, wrt) at seeded random inputs in [-1, 1) and compares each gradient
// element with (loss(x + h e_i) - loss(x - h e_i)) / 2h, h = 1e-6, within `tolerance` times
// max(1, |gradient|). f64 parameters keep both sides exact to ~1e-9.
void ExpectGradientMatchesFiniteDifferences(const ir::Module& forward,
                                            const std::vector<int64_t>& wrt,
                                            double tolerance = 1e-6);

}  // namespace alpa::autodiff::testing

#endif  // ALPA_TESTS_AUTODIFF_GRADIENT_CHECK_H_
