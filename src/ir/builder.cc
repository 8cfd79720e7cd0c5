#include "ir/builder.h"

#include <fmt/format.h>

#include <utility>

#include "ir/shape_inference.h"
#include "ir/verifier.h"

namespace alpa::ir {
namespace {

ReplicaGroups MakeReplicaGroups(std::vector<std::vector<int64_t>> groups) {
  ReplicaGroups replica_groups;
  replica_groups.groups = std::move(groups);
  return replica_groups;
}

// Shapes whose element type no rule reads: only the dims of these stand-in shapes matter.
Shape DimsOnly(std::vector<int64_t> dims) { return Shape::Array(DType::kF32, std::move(dims)); }

}  // namespace

ComputationBuilder::ComputationBuilder(ModuleBuilder* module_builder, std::string name)
    : module_builder_(module_builder),
      computation_(std::make_unique<Computation>(std::move(name))) {}

Instruction* ComputationBuilder::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
  return nullptr;
}

Instruction* ComputationBuilder::AddInstruction(Opcode opcode, std::vector<Instruction*> operands,
                                                Attributes attributes,
                                                std::vector<Computation*> called, Shape shape,
                                                std::string name) {
  if (!status_.ok()) return nullptr;
  if (computation_ == nullptr) {
    return Fail(FailedPrecondition("{}: the computation was already built", OpcodeName(opcode)));
  }
  const std::string context = fmt::format("computation %{}", computation_->name());
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == nullptr) {
      return Fail(InvalidArgument("{}: operand {} of {} is null", context, i, OpcodeName(opcode)));
    }
    if (operands[i]->parent() != computation_.get()) {
      return Fail(InvalidArgument("{}: operand {} (%{}) of {} belongs to another computation",
                                  context, i, operands[i]->name(), OpcodeName(opcode)));
    }
  }
  for (size_t i = 0; i < called.size(); ++i) {
    if (called[i] == nullptr) {
      return Fail(InvalidArgument("{}: called computation {} of {} is null", context, i,
                                  OpcodeName(opcode)));
    }
  }
  if (name.empty()) {
    name = module_builder_->UniqueName(std::string(OpcodeName(opcode)));
  } else if (!module_builder_->ClaimName(name)) {
    return Fail(InvalidArgument("{}: instruction name %{} is already used", context, name));
  }
  auto instruction = std::make_unique<Instruction>(std::move(name), opcode, std::move(shape));
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  for (Computation* computation : called) instruction->AppendCalledComputation(computation);
  instruction->mutable_attributes() = std::move(attributes);
  Result<Shape> inferred = InferShape(*instruction);
  if (!inferred.ok()) return Fail(inferred.status().WithContext(context));
  instruction->set_shape(std::move(inferred).value());
  return computation_->AddInstruction(std::move(instruction));
}

Instruction* ComputationBuilder::Parameter(int64_t number, Shape shape, std::string name) {
  Attributes attributes;
  attributes.parameter_number = number;
  return AddInstruction(Opcode::kParameter, {}, std::move(attributes), {}, std::move(shape),
                        std::move(name));
}

Instruction* ComputationBuilder::Constant(Literal literal, std::string name) {
  Attributes attributes;
  attributes.literal = std::move(literal);
  return AddInstruction(Opcode::kConstant, {}, std::move(attributes), {}, Shape(), std::move(name));
}

Instruction* ComputationBuilder::ConstantScalar(DType dtype, double value) {
  if (!IsArrayDType(dtype)) {
    return Fail(InvalidArgument("ConstantScalar: {} has no values", DTypeName(dtype)));
  }
  return Constant(Literal::Scalar(dtype, value));
}

Instruction* ComputationBuilder::Iota(Shape shape, int64_t iota_dimension) {
  Attributes attributes;
  attributes.iota_dimension = iota_dimension;
  return AddInstruction(Opcode::kIota, {}, std::move(attributes), {}, std::move(shape));
}

Instruction* ComputationBuilder::Unary(Opcode opcode, Instruction* x) {
  if (!IsElementwiseUnary(opcode)) {
    return Fail(InvalidArgument("Unary: {} is not an elementwise unary op", OpcodeName(opcode)));
  }
  return AddInstruction(opcode, {x});
}

Instruction* ComputationBuilder::Binary(Opcode opcode, Instruction* a, Instruction* b) {
  if (!IsElementwiseBinary(opcode)) {
    return Fail(InvalidArgument("Binary: {} is not an elementwise binary op", OpcodeName(opcode)));
  }
  return AddInstruction(opcode, {a, b});
}

Instruction* ComputationBuilder::Compare(Instruction* a, Instruction* b,
                                         ComparisonDirection direction) {
  Attributes attributes;
  attributes.comparison_direction = direction;
  return AddInstruction(Opcode::kCompare, {a, b}, std::move(attributes));
}

Instruction* ComputationBuilder::Select(Instruction* pred, Instruction* on_true,
                                        Instruction* on_false) {
  return AddInstruction(Opcode::kSelect, {pred, on_true, on_false});
}

Instruction* ComputationBuilder::Clamp(Instruction* min, Instruction* x, Instruction* max) {
  return AddInstruction(Opcode::kClamp, {min, x, max});
}

Instruction* ComputationBuilder::Convert(Instruction* x, DType dtype) {
  return AddInstruction(Opcode::kConvert, {x}, {}, {}, Shape::Scalar(dtype));
}

Instruction* ComputationBuilder::BitcastConvert(Instruction* x, DType dtype) {
  return AddInstruction(Opcode::kBitcastConvert, {x}, {}, {}, Shape::Scalar(dtype));
}

Instruction* ComputationBuilder::Broadcast(Instruction* x, std::vector<int64_t> out_dims,
                                           std::vector<int64_t> dimensions) {
  Attributes attributes;
  attributes.dimensions = std::move(dimensions);
  return AddInstruction(Opcode::kBroadcast, {x}, std::move(attributes), {},
                        DimsOnly(std::move(out_dims)));
}

Instruction* ComputationBuilder::Reshape(Instruction* x, std::vector<int64_t> dims) {
  return AddInstruction(Opcode::kReshape, {x}, {}, {}, DimsOnly(std::move(dims)));
}

Instruction* ComputationBuilder::Transpose(Instruction* x, std::vector<int64_t> permutation) {
  Attributes attributes;
  attributes.dimensions = std::move(permutation);
  return AddInstruction(Opcode::kTranspose, {x}, std::move(attributes));
}

Instruction* ComputationBuilder::Slice(Instruction* x, std::vector<SliceDim> slice) {
  Attributes attributes;
  attributes.slice = std::move(slice);
  return AddInstruction(Opcode::kSlice, {x}, std::move(attributes));
}

Instruction* ComputationBuilder::DynamicSlice(Instruction* x, std::vector<Instruction*> starts,
                                              std::vector<int64_t> sizes) {
  Attributes attributes;
  attributes.slice_sizes = std::move(sizes);
  starts.insert(starts.begin(), x);
  return AddInstruction(Opcode::kDynamicSlice, std::move(starts), std::move(attributes));
}

Instruction* ComputationBuilder::DynamicUpdateSlice(Instruction* x, Instruction* update,
                                                    std::vector<Instruction*> starts) {
  starts.insert(starts.begin(), {x, update});
  return AddInstruction(Opcode::kDynamicUpdateSlice, std::move(starts));
}

Instruction* ComputationBuilder::Concatenate(std::vector<Instruction*> operands,
                                             int64_t dimension) {
  Attributes attributes;
  attributes.dimensions = {dimension};
  return AddInstruction(Opcode::kConcatenate, std::move(operands), std::move(attributes));
}

Instruction* ComputationBuilder::Pad(Instruction* x, Instruction* value,
                                     std::vector<PaddingDim> padding) {
  Attributes attributes;
  attributes.padding = std::move(padding);
  return AddInstruction(Opcode::kPad, {x, value}, std::move(attributes));
}

Instruction* ComputationBuilder::Reverse(Instruction* x, std::vector<int64_t> dimensions) {
  Attributes attributes;
  attributes.dimensions = std::move(dimensions);
  return AddInstruction(Opcode::kReverse, {x}, std::move(attributes));
}

Instruction* ComputationBuilder::Dot(Instruction* a, Instruction* b, DotDimensionNumbers numbers,
                                     std::optional<DType> result_dtype) {
  Attributes attributes;
  attributes.dot_dims.emplace(std::move(numbers));
  return AddInstruction(Opcode::kDot, {a, b}, std::move(attributes), {},
                        result_dtype.has_value() ? Shape::Scalar(*result_dtype) : Shape());
}

Instruction* ComputationBuilder::MatMul(Instruction* a, Instruction* b) {
  DotDimensionNumbers numbers;
  if (a != nullptr && a->shape().IsArray() && a->shape().rank() > 0) {
    numbers.lhs_contracting_dims = {a->shape().rank() - 1};
  }
  numbers.rhs_contracting_dims = {0};
  return Dot(a, b, std::move(numbers));
}

Instruction* ComputationBuilder::Convolution(Instruction* lhs, Instruction* rhs,
                                             std::vector<WindowDim> window,
                                             ConvolutionDimensionNumbers numbers,
                                             int64_t feature_group_count, int64_t batch_group_count,
                                             std::optional<DType> result_dtype) {
  Attributes attributes;
  attributes.window = std::move(window);
  attributes.conv_dims.emplace(std::move(numbers));
  attributes.feature_group_count = feature_group_count;
  attributes.batch_group_count = batch_group_count;
  return AddInstruction(Opcode::kConvolution, {lhs, rhs}, std::move(attributes), {},
                        result_dtype.has_value() ? Shape::Scalar(*result_dtype) : Shape());
}

Instruction* ComputationBuilder::Reduce(Instruction* x, Instruction* init,
                                        std::vector<int64_t> dimensions, Computation* reducer) {
  return Reduce(std::vector<Instruction*>{x}, std::vector<Instruction*>{init},
                std::move(dimensions), reducer);
}

Instruction* ComputationBuilder::Reduce(std::vector<Instruction*> inputs,
                                        std::vector<Instruction*> inits,
                                        std::vector<int64_t> dimensions, Computation* reducer) {
  Attributes attributes;
  attributes.dimensions = std::move(dimensions);
  inputs.insert(inputs.end(), inits.begin(), inits.end());
  return AddInstruction(Opcode::kReduce, std::move(inputs), std::move(attributes), {reducer});
}

Instruction* ComputationBuilder::Sum(Instruction* x, std::vector<int64_t> dimensions) {
  if (x == nullptr) return Reduce(x, nullptr, std::move(dimensions), nullptr);
  const DType dtype = x->shape().dtype();
  const bool widen = dtype == DType::kF16 || dtype == DType::kBF16;
  const DType accumulate = widen ? DType::kF32 : dtype;
  Instruction* sum =
      Reduce(widen ? Convert(x, accumulate) : x, ConstantScalar(accumulate, 0),
             std::move(dimensions), module_builder_->ScalarReducer(Opcode::kAdd, accumulate));
  return widen ? Convert(sum, dtype) : sum;
}

Instruction* ComputationBuilder::ReduceWindow(std::vector<Instruction*> inputs,
                                              std::vector<Instruction*> inits,
                                              std::vector<WindowDim> window, Computation* reducer) {
  Attributes attributes;
  attributes.window = std::move(window);
  inputs.insert(inputs.end(), inits.begin(), inits.end());
  return AddInstruction(Opcode::kReduceWindow, std::move(inputs), std::move(attributes), {reducer});
}

Instruction* ComputationBuilder::Sort(std::vector<Instruction*> operands, int64_t dimension,
                                      Computation* comparator, bool is_stable) {
  Attributes attributes;
  attributes.dimensions = {dimension};
  attributes.is_stable = is_stable;
  return AddInstruction(Opcode::kSort, std::move(operands), std::move(attributes), {comparator});
}

Instruction* ComputationBuilder::Gather(Instruction* operand, Instruction* indices,
                                        GatherDimensionNumbers numbers,
                                        std::vector<int64_t> slice_sizes) {
  Attributes attributes;
  attributes.gather_dims.emplace(std::move(numbers));
  attributes.slice_sizes = std::move(slice_sizes);
  return AddInstruction(Opcode::kGather, {operand, indices}, std::move(attributes));
}

Instruction* ComputationBuilder::Scatter(std::vector<Instruction*> inputs, Instruction* indices,
                                         std::vector<Instruction*> updates,
                                         ScatterDimensionNumbers numbers, Computation* reducer) {
  Attributes attributes;
  attributes.scatter_dims.emplace(std::move(numbers));
  inputs.push_back(indices);
  inputs.insert(inputs.end(), updates.begin(), updates.end());
  return AddInstruction(Opcode::kScatter, std::move(inputs), std::move(attributes), {reducer});
}

Instruction* ComputationBuilder::Tuple(std::vector<Instruction*> elements) {
  return AddInstruction(Opcode::kTuple, std::move(elements));
}

Instruction* ComputationBuilder::GetTupleElement(Instruction* tuple, int64_t index) {
  Attributes attributes;
  attributes.tuple_index = index;
  return AddInstruction(Opcode::kGetTupleElement, {tuple}, std::move(attributes));
}

Instruction* ComputationBuilder::Call(Computation* callee, std::vector<Instruction*> arguments) {
  return AddInstruction(Opcode::kCall, std::move(arguments), {}, {callee});
}

Instruction* ComputationBuilder::While(Computation* condition, Computation* body,
                                       Instruction* init) {
  return AddInstruction(Opcode::kWhile, {init}, {}, {condition, body});
}

Instruction* ComputationBuilder::Conditional(Instruction* branch_index,
                                             std::vector<Computation*> branches,
                                             std::vector<Instruction*> operands) {
  operands.insert(operands.begin(), branch_index);
  return AddInstruction(Opcode::kConditional, std::move(operands), {}, std::move(branches));
}

Instruction* ComputationBuilder::Rng(Instruction* a, Instruction* b, std::vector<int64_t> dims,
                                     RandomDistribution distribution) {
  Attributes attributes;
  attributes.distribution = distribution;
  return AddInstruction(Opcode::kRng, {a, b}, std::move(attributes), {}, DimsOnly(std::move(dims)));
}

Instruction* ComputationBuilder::RngBitGenerator(Instruction* state, Shape output,
                                                 std::string algorithm) {
  Attributes attributes;
  attributes.rng_algorithm = std::move(algorithm);
  return AddInstruction(Opcode::kRngBitGenerator, {state}, std::move(attributes), {},
                        Shape::Tuple({Shape(), std::move(output)}));
}

Instruction* ComputationBuilder::AllReduce(Instruction* x, Computation* reducer,
                                           std::vector<std::vector<int64_t>> groups) {
  Attributes attributes;
  attributes.replica_groups = MakeReplicaGroups(std::move(groups));
  return AddInstruction(Opcode::kAllReduce, {x}, std::move(attributes), {reducer});
}

Instruction* ComputationBuilder::AllGather(Instruction* x, int64_t dimension,
                                           std::vector<std::vector<int64_t>> groups) {
  Attributes attributes;
  attributes.dimensions = {dimension};
  attributes.replica_groups = MakeReplicaGroups(std::move(groups));
  return AddInstruction(Opcode::kAllGather, {x}, std::move(attributes));
}

Instruction* ComputationBuilder::ReduceScatter(Instruction* x, int64_t dimension,
                                               Computation* reducer,
                                               std::vector<std::vector<int64_t>> groups) {
  Attributes attributes;
  attributes.dimensions = {dimension};
  attributes.replica_groups = MakeReplicaGroups(std::move(groups));
  return AddInstruction(Opcode::kReduceScatter, {x}, std::move(attributes), {reducer});
}

Instruction* ComputationBuilder::AllToAll(Instruction* x, int64_t split_dimension,
                                          std::vector<std::vector<int64_t>> groups) {
  Attributes attributes;
  attributes.dimensions = {split_dimension};
  attributes.replica_groups = MakeReplicaGroups(std::move(groups));
  return AddInstruction(Opcode::kAllToAll, {x}, std::move(attributes));
}

Result<Computation*> ComputationBuilder::Build(Instruction* root) {
  if (!status_.ok()) return status_;
  if (computation_ == nullptr) return FailedPrecondition("the computation was already built");
  if (root == nullptr || root->parent() != computation_.get()) {
    return InvalidArgument("computation %{}: the root must be an instruction of this computation",
                           computation_->name());
  }
  computation_->set_root(root);
  ALPA_RETURN_IF_ERROR(VerifyComputation(*computation_));
  return module_builder_->module()->AddComputation(std::move(computation_));
}

ModuleBuilder::ModuleBuilder(std::string name)
    : module_(std::make_unique<Module>(std::move(name))) {}

std::string ModuleBuilder::UniqueName(const std::string& base) {
  int64_t& next = next_suffix_[base];
  std::string name;
  do {
    name = fmt::format("{}.{}", base, ++next);
  } while (!used_names_.insert(name).second);
  return name;
}

bool ModuleBuilder::ClaimName(const std::string& name) { return used_names_.insert(name).second; }

Computation* ModuleBuilder::CopyScalarReducer(const Computation& callee) {
  const Instruction* root = callee.root();
  const bool scalar_reducer = callee.parameter_count() == 2 && root != nullptr &&
                              IsElementwiseBinary(root->opcode()) &&
                              root->operand(0)->opcode() == Opcode::kParameter &&
                              root->operand(1)->opcode() == Opcode::kParameter;
  return scalar_reducer ? ScalarReducer(root->opcode(), root->shape().dtype()) : nullptr;
}

Computation* ModuleBuilder::ScalarReducer(Opcode opcode, DType dtype) {
  auto it = reducers_.find({opcode, dtype});
  if (it != reducers_.end()) return it->second;
  if (module_ == nullptr || !IsElementwiseBinary(opcode)) return nullptr;
  ComputationBuilder builder =
      NewComputation(fmt::format("{}.{}", OpcodeName(opcode), DTypeName(dtype)));
  Instruction* lhs = builder.Parameter(0, Shape::Scalar(dtype));
  Instruction* rhs = builder.Parameter(1, Shape::Scalar(dtype));
  Result<Computation*> reducer = builder.Build(builder.Binary(opcode, lhs, rhs));
  if (!reducer.ok()) return nullptr;  // e.g. and.f32: the caller reports the null reducer
  reducers_[{opcode, dtype}] = *reducer;
  return *reducer;
}

Result<std::unique_ptr<Module>> ModuleBuilder::Build(Computation* entry) {
  if (module_ == nullptr) return FailedPrecondition("the module was already built");
  if (entry == nullptr) {
    return InvalidArgument("module {}: the entry computation is null", module_->name());
  }
  module_->set_entry(entry);
  ALPA_RETURN_IF_ERROR(VerifyModule(*module_));
  return std::move(module_);
}

}  // namespace alpa::ir
