// Helpers for interpreter tests: build small computations directly in IR and read results.
#ifndef ALPA_TESTS_INTERP_TEST_UTIL_H_
#define ALPA_TESTS_INTERP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/parser.h"
#include "interp/evaluator.h"
#include "ir/computation.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace alpa::interp::testing {

// The scalar reducers of collective tests (max with its operands swapped: a reducer is
// recognised in either order), and an entry computation parsed after them.
inline constexpr std::string_view kCollectiveReducers = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(b, a)
}
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] minimum(a, b)
}
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] multiply(a, b)
}
)";
inline Result<std::unique_ptr<ir::Module>> ParseAfterCollectiveReducers(std::string_view entry) {
  return hlo::ParseHloModule(std::string(kCollectiveReducers) + std::string(entry), "test");
}

inline ir::Shape S(ir::DType dtype, std::vector<int64_t> dims) {
  return ir::Shape::Array(dtype, std::move(dims));
}
inline ir::Literal Vals(ir::DType dtype, std::vector<int64_t> dims, std::vector<double> values) {
  return ir::Literal::FromDoubles(S(dtype, std::move(dims)), values);
}
inline ir::Literal Ints(ir::DType dtype, std::vector<int64_t> dims, std::vector<int64_t> values) {
  return ir::Literal::FromInts(S(dtype, std::move(dims)), values);
}
inline std::vector<double> AsDoubles(const ir::Literal& literal) {
  std::vector<double> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetDouble(i));
  return values;
}
inline std::vector<int64_t> AsInts(const ir::Literal& literal) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetInt(i));
  return values;
}

// Builds one computation instruction by instruction; names are generated (`v0`, `v1`, ...).
class Builder {
 public:
  explicit Builder(std::string name) : computation_(std::make_unique<ir::Computation>(name)) {}

  ir::Instruction* Parameter(int64_t number, ir::Shape shape) {
    ir::Instruction* p = Add(ir::Opcode::kParameter, std::move(shape), {});
    p->mutable_attributes().parameter_number = number;
    return p;
  }
  ir::Instruction* Constant(ir::Literal literal) {
    ir::Instruction* c = Add(ir::Opcode::kConstant, literal.shape(), {});
    c->mutable_attributes().literal = std::move(literal);
    return c;
  }
  ir::Instruction* Add(ir::Opcode opcode, ir::Shape shape, std::vector<ir::Instruction*> operands,
                       std::vector<ir::Computation*> called = {}) {
    auto instruction = std::make_unique<ir::Instruction>(
        "v" + std::to_string(computation_->instruction_count()), opcode, std::move(shape));
    for (ir::Instruction* operand : operands) instruction->AppendOperand(operand);
    for (ir::Computation* computation : called) instruction->AppendCalledComputation(computation);
    return computation_->AddInstruction(std::move(instruction));
  }
  // Finishes with `root` as ROOT (the last added instruction by default).
  std::unique_ptr<ir::Computation> Build(ir::Instruction* root = nullptr) {
    computation_->set_root(root != nullptr ? root : computation_->instructions().back().get());
    return std::move(computation_);
  }

 private:
  std::unique_ptr<ir::Computation> computation_;
};

// A scalar computation `(a, b) -> opcode(a, b)`, e.g. the `add` of a reduce.
inline std::unique_ptr<ir::Computation> ScalarBinary(ir::Opcode opcode, ir::DType dtype) {
  Builder b(std::string(ir::OpcodeName(opcode)));
  ir::Instruction* x = b.Parameter(0, S(dtype, {}));
  ir::Instruction* y = b.Parameter(1, S(dtype, {}));
  b.Add(opcode, S(dtype, {}), {x, y});
  return b.Build();
}

// Evaluates `computation` and fails the test on error.
inline ir::Literal Eval(const ir::Computation& computation, const std::vector<ir::Literal>& args) {
  Result<ir::Literal> result = EvaluateComputation(computation, args);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ir::Literal();
}

// Evaluates one instruction `opcode` of result `shape` on parameters holding `args`; `set` fills
// the attributes.
template <typename SetAttributes>
Result<ir::Literal> EvalOp(ir::Opcode opcode, ir::Shape shape, const std::vector<ir::Literal>& args,
                           SetAttributes set, std::vector<ir::Computation*> called = {}) {
  Builder b("entry");
  std::vector<ir::Instruction*> params;
  for (size_t i = 0; i < args.size(); ++i) {
    params.push_back(b.Parameter(static_cast<int64_t>(i), args[i].shape()));
  }
  ir::Instruction* op = b.Add(opcode, std::move(shape), params, std::move(called));
  set(op->mutable_attributes());
  std::unique_ptr<ir::Computation> computation = b.Build(op);
  return EvaluateComputation(*computation, args);
}
inline Result<ir::Literal> EvalOp(ir::Opcode opcode, ir::Shape shape,
                                  const std::vector<ir::Literal>& args) {
  return EvalOp(opcode, std::move(shape), args, [](ir::Attributes&) {});
}

// Parses HLO text and evaluates its entry computation.
inline Result<ir::Literal> RunHlo(std::string_view text, const std::vector<ir::Literal>& args) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(text, "test");
  if (!module.ok()) return module.status();
  return EvaluateModule(**module, args);
}

// RunHlo that fails the test on error.
inline ir::Literal MustRunHlo(std::string_view text, const std::vector<ir::Literal>& args = {}) {
  Result<ir::Literal> result = RunHlo(text, args);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ir::Literal();
}

}  // namespace alpa::interp::testing

#endif  // ALPA_TESTS_INTERP_TEST_UTIL_H_
