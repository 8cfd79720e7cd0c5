// Building IR in C++ (XLA's XlaBuilder, simplified).
//
//   ModuleBuilder mb("mlp");
//   ComputationBuilder b = mb.NewComputation("main");
//   Instruction* x = b.Parameter(0, Shape::Array(DType::kF32, {8, 16}), "x");
//   Instruction* w = b.Parameter(1, Shape::Array(DType::kF32, {16, 4}), "w");
//   Instruction* zero = b.Broadcast(b.ConstantScalar(DType::kF32, 0), {8, 4}, {});
//   Instruction* y = b.Maximum(b.MatMul(x, w), zero);  // f32[8,4]
//   Result<Computation*> main = b.Build(y);
//   Result<std::unique_ptr<Module>> module = mb.Build(*main);
//
// Every method infers the result shape with InferShape and returns the new instruction. Names
// are generated from the opcode ("dot.3", unique in the module) unless given. Errors do not
// stop the chain: a method that fails, or that is given nullptr (an earlier failure), returns
// nullptr and keeps the first error, which Build() reports.
#ifndef ALPA_IR_BUILDER_H_
#define ALPA_IR_BUILDER_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/module.h"
#include "support/status.h"

namespace alpa::ir {

class ModuleBuilder;

class ComputationBuilder {
 public:
  ComputationBuilder(ModuleBuilder* module_builder, std::string name);
  ComputationBuilder(ComputationBuilder&&) = default;
  ComputationBuilder& operator=(ComputationBuilder&&) = default;

  // The generic form every helper below uses: an instruction of `opcode` with these operands,
  // attributes and called computations. `shape` is the declared shape, needed only for the parts
  // InferShape takes from it (see shape_inference.h); it is replaced by the inferred shape.
  Instruction* AddInstruction(Opcode opcode, std::vector<Instruction*> operands,
                              Attributes attributes = {}, std::vector<Computation*> called = {},
                              Shape shape = Shape(), std::string name = "");

  Instruction* Parameter(int64_t number, Shape shape, std::string name = "");
  Instruction* Constant(Literal literal, std::string name = "");
  Instruction* ConstantScalar(DType dtype, double value);
  Instruction* Iota(Shape shape, int64_t iota_dimension);

  // Elementwise.
  Instruction* Unary(Opcode opcode, Instruction* x);
  Instruction* Binary(Opcode opcode, Instruction* a, Instruction* b);
  Instruction* Add(Instruction* a, Instruction* b) { return Binary(Opcode::kAdd, a, b); }
  Instruction* Subtract(Instruction* a, Instruction* b) { return Binary(Opcode::kSubtract, a, b); }
  Instruction* Multiply(Instruction* a, Instruction* b) { return Binary(Opcode::kMultiply, a, b); }
  Instruction* Divide(Instruction* a, Instruction* b) { return Binary(Opcode::kDivide, a, b); }
  Instruction* Maximum(Instruction* a, Instruction* b) { return Binary(Opcode::kMaximum, a, b); }
  Instruction* Minimum(Instruction* a, Instruction* b) { return Binary(Opcode::kMinimum, a, b); }
  Instruction* Power(Instruction* a, Instruction* b) { return Binary(Opcode::kPower, a, b); }
  Instruction* Negate(Instruction* x) { return Unary(Opcode::kNegate, x); }
  Instruction* Exp(Instruction* x) { return Unary(Opcode::kExp, x); }
  Instruction* Log(Instruction* x) { return Unary(Opcode::kLog, x); }
  Instruction* Tanh(Instruction* x) { return Unary(Opcode::kTanh, x); }
  Instruction* Sqrt(Instruction* x) { return Unary(Opcode::kSqrt, x); }
  Instruction* Rsqrt(Instruction* x) { return Unary(Opcode::kRsqrt, x); }
  Instruction* Abs(Instruction* x) { return Unary(Opcode::kAbs, x); }
  Instruction* Logistic(Instruction* x) { return Unary(Opcode::kLogistic, x); }
  Instruction* Compare(Instruction* a, Instruction* b, ComparisonDirection direction);
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false);
  Instruction* Clamp(Instruction* min, Instruction* x, Instruction* max);
  Instruction* Convert(Instruction* x, DType dtype);
  Instruction* BitcastConvert(Instruction* x, DType dtype);

  // Data movement.
  // Operand dimension i becomes output dimension dimensions[i] of `out_dims`.
  Instruction* Broadcast(Instruction* x, std::vector<int64_t> out_dims,
                         std::vector<int64_t> dimensions);
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims);
  Instruction* Transpose(Instruction* x, std::vector<int64_t> permutation);
  Instruction* Slice(Instruction* x, std::vector<SliceDim> slice);
  Instruction* DynamicSlice(Instruction* x, std::vector<Instruction*> starts,
                            std::vector<int64_t> sizes);
  Instruction* DynamicUpdateSlice(Instruction* x, Instruction* update,
                                  std::vector<Instruction*> starts);
  Instruction* Concatenate(std::vector<Instruction*> operands, int64_t dimension);
  Instruction* Pad(Instruction* x, Instruction* value, std::vector<PaddingDim> padding);
  Instruction* Reverse(Instruction* x, std::vector<int64_t> dimensions);

  // Contractions. `result_dtype` is XLA's preferred_element_type; the operands' type by default.
  Instruction* Dot(Instruction* a, Instruction* b, DotDimensionNumbers numbers,
                   std::optional<DType> result_dtype = std::nullopt);
  // a[..., k] x b[k, ...]: contracts a's last dimension with b's first.
  Instruction* MatMul(Instruction* a, Instruction* b);
  Instruction* Convolution(Instruction* lhs, Instruction* rhs, std::vector<WindowDim> window,
                           ConvolutionDimensionNumbers numbers, int64_t feature_group_count = 1,
                           int64_t batch_group_count = 1,
                           std::optional<DType> result_dtype = std::nullopt);

  // Reductions and sorting. The variadic forms take N inputs and N init values.
  Instruction* Reduce(Instruction* x, Instruction* init, std::vector<int64_t> dimensions,
                      Computation* reducer);
  Instruction* Reduce(std::vector<Instruction*> inputs, std::vector<Instruction*> inits,
                      std::vector<int64_t> dimensions, Computation* reducer);
  Instruction* ReduceWindow(std::vector<Instruction*> inputs, std::vector<Instruction*> inits,
                            std::vector<WindowDim> window, Computation* reducer);
  // The sum of `x` over `dimensions`. f16 and bf16 are summed in f32 and the sum rounded once
  // (convert, reduce, convert back), as JAX's jnp.sum, Flax's LayerNorm and PyTorch's autocast
  // do: a sum of n terms rounded to 16 bits after every add drifts by up to about n/2 ulps of its
  // partial sums, which for a bias gradient over 1024 positions swamps the gradient. A fusing
  // compiler reads the 16-bit input once (cost/kernel_fusion.h fuses the convert into the reduce).
  // Other types are summed in their own.
  Instruction* Sum(Instruction* x, std::vector<int64_t> dimensions);
  Instruction* Sort(std::vector<Instruction*> operands, int64_t dimension, Computation* comparator,
                    bool is_stable = false);

  // Indexing.
  Instruction* Gather(Instruction* operand, Instruction* indices, GatherDimensionNumbers numbers,
                      std::vector<int64_t> slice_sizes);
  Instruction* Scatter(std::vector<Instruction*> inputs, Instruction* indices,
                       std::vector<Instruction*> updates, ScatterDimensionNumbers numbers,
                       Computation* reducer);

  // Tuples and control flow.
  Instruction* Tuple(std::vector<Instruction*> elements);
  Instruction* GetTupleElement(Instruction* tuple, int64_t index);
  Instruction* Call(Computation* callee, std::vector<Instruction*> arguments);
  Instruction* While(Computation* condition, Computation* body, Instruction* init);
  // branch_index is s32[] (or pred[] with two branches: true runs branches[0]).
  Instruction* Conditional(Instruction* branch_index, std::vector<Computation*> branches,
                           std::vector<Instruction*> operands);

  // Random numbers: rng(a, b) of `shape`'s dims.
  Instruction* Rng(Instruction* a, Instruction* b, std::vector<int64_t> dims,
                   RandomDistribution distribution);
  Instruction* RngBitGenerator(Instruction* state, Shape output,
                               std::string algorithm = "rng_default");

  // Collectives; empty `groups` means one group of all devices.
  Instruction* AllReduce(Instruction* x, Computation* reducer,
                         std::vector<std::vector<int64_t>> groups = {});
  Instruction* AllGather(Instruction* x, int64_t dimension,
                         std::vector<std::vector<int64_t>> groups);
  Instruction* ReduceScatter(Instruction* x, int64_t dimension, Computation* reducer,
                             std::vector<std::vector<int64_t>> groups);
  Instruction* AllToAll(Instruction* x, int64_t split_dimension,
                        std::vector<std::vector<int64_t>> groups);

  // The first error so far (OK when none).
  const Status& status() const { return status_; }
  // The module builder this computation belongs to (for reducers and other callees).
  ModuleBuilder& module_builder() const { return *module_builder_; }

  // Sets the root, checks the computation (VerifyComputation) and hands it to the module. The
  // builder is empty afterwards; a second Build is an error.
  Result<Computation*> Build(Instruction* root);

 private:
  // Records the first error; returns nullptr for the caller to return.
  Instruction* Fail(Status status);

  ModuleBuilder* module_builder_;
  std::unique_ptr<Computation> computation_;
  Status status_;
};

class ModuleBuilder {
 public:
  explicit ModuleBuilder(std::string name);

  ComputationBuilder NewComputation(std::string name) {
    return ComputationBuilder(this, std::move(name));
  }

  // A scalar reducer `(T, T) -> T` applying `opcode` (add, multiply, maximum, minimum, and, or),
  // created once per (opcode, dtype) and named e.g. "add.f32".
  Computation* ScalarReducer(Opcode opcode, DType dtype);
  // This module's copy of `callee`, another module's computation, when it is a scalar reducer
  // `(a, b) -> op(a, b)` (what reductions call in the HLO JAX and the zoo write); nullptr for any
  // other computation, which the caller reports.
  Computation* CopyScalarReducer(const Computation& callee);

  // Sets the entry, verifies the module (VerifyModule) and returns it. The builder is empty
  // afterwards.
  Result<std::unique_ptr<Module>> Build(Computation* entry);

  // The module being built (computations already built are in it).
  Module* module() { return module_.get(); }

  // "base.N" with N counting up from 1 per base, skipping names already used: deterministic.
  std::string UniqueName(const std::string& base);
  // Claims a user-given name; false when it is already used.
  bool ClaimName(const std::string& name);

 private:
  std::unique_ptr<Module> module_;
  std::map<std::string, int64_t> next_suffix_;
  std::set<std::string> used_names_;
  std::map<std::pair<Opcode, DType>, Computation*> reducers_;
};

}  // namespace alpa::ir

#endif  // ALPA_IR_BUILDER_H_
