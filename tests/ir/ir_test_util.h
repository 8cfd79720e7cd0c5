// Shared fixture of the ir tests: a module builder, a computation builder "main", and helpers to
// make parameters and read results as text.
#ifndef ALPA_TESTS_IR_IR_TEST_UTIL_H_
#define ALPA_TESTS_IR_IR_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/builder.h"

namespace alpa::ir {

class IrTest : public ::testing::Test {
 protected:
  // The next parameter of `main`, numbered in creation order.
  Instruction* Param(DType dtype, std::vector<int64_t> dims) {
    return Param(Shape::Array(dtype, std::move(dims)));
  }
  Instruction* Param(Shape shape) { return b_.Parameter(next_parameter_++, std::move(shape)); }

  // Starts a fresh computation in `main`'s place, so one test can check several errors.
  void Reset() {
    b_ = mb_.NewComputation("main");
    next_parameter_ = 0;
  }

  // The shape of `x` without layout, or "error: <message>" when the builder failed.
  std::string S(const Instruction* x) const {
    if (x == nullptr) return "error: " + b_.status().message();
    return x->shape().ToString(/*print_layout=*/false);
  }
  // The builder's first error message ("" when none).
  std::string Error() const { return b_.status().message(); }

  // A computation built separately: `make` receives a fresh builder and returns the root.
  template <typename Make>
  Computation* Sub(const std::string& name, Make make) {
    ComputationBuilder builder = mb_.NewComputation(name);
    Result<Computation*> built = builder.Build(make(builder));
    EXPECT_TRUE(built.ok()) << built.status().ToString();
    return built.ok() ? *built : nullptr;
  }

  ModuleBuilder mb_{"test"};
  ComputationBuilder b_ = mb_.NewComputation("main");
  int64_t next_parameter_ = 0;
};

inline Shape F32(std::vector<int64_t> dims) { return Shape::Array(DType::kF32, std::move(dims)); }
inline Shape S32(std::vector<int64_t> dims) { return Shape::Array(DType::kS32, std::move(dims)); }

}  // namespace alpa::ir

#endif  // ALPA_TESTS_IR_IR_TEST_UTIL_H_
