#include "models/forward_loss.h"

#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "models/init.h"

namespace alpa::models {
namespace {

using ir::Instruction;

std::vector<int64_t> AllDims(int64_t rank) {
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  std::iota(dims.begin(), dims.end(), 0);
  return dims;
}

Instruction* Mean(ir::ComputationBuilder& b, Instruction* x) {
  const double count = static_cast<double>(x->shape().ElementCount());
  Instruction* sum = b.Sum(x, AllDims(x->shape().rank()));
  return b.Divide(sum, b.ConstantScalar(sum->shape().dtype(), count));
}

// logits [..., C], labels s32 [...]: the mean of -log softmax(logits)[label].
Instruction* CrossEntropy(ir::ComputationBuilder& b, Instruction* logits, Instruction* labels) {
  if (logits->shape().dtype() != ir::DType::kF64) logits = b.Convert(logits, ir::DType::kF32);
  const ir::DType dtype = logits->shape().dtype();
  const std::vector<int64_t> dims = logits->shape().dims();
  const int64_t last = static_cast<int64_t>(dims.size()) - 1;
  std::vector<int64_t> leading = AllDims(last);
  ir::Instruction* init = b.ConstantScalar(dtype, -std::numeric_limits<double>::infinity());
  Instruction* max =
      b.Reduce(logits, init, {last}, b.module_builder().ScalarReducer(ir::Opcode::kMaximum, dtype));
  Instruction* shifted = b.Subtract(logits, b.Broadcast(max, dims, leading));
  Instruction* log_sum = b.Log(b.Sum(b.Exp(shifted), {last}));
  Instruction* log_probs = b.Subtract(shifted, b.Broadcast(log_sum, dims, leading));
  Instruction* one_hot =
      b.Compare(b.Iota(ir::Shape::Array(ir::DType::kS32, dims), last),
                b.Broadcast(labels, dims, leading), ir::ComparisonDirection::kEq);
  Instruction* zeros = b.Broadcast(b.ConstantScalar(dtype, 0), dims, {});
  Instruction* picked = b.Sum(b.Select(one_hot, log_probs, zeros), AllDims(last + 1));
  const double positions = static_cast<double>(logits->shape().ElementCount() / dims.back());
  return b.Divide(b.Negate(picked), b.ConstantScalar(dtype, positions));
}

// The index of the largest of values[0, n).
int64_t ArgMax(const ir::Literal& x, int64_t offset, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j) {
    if (x.GetDouble(offset + j) > x.GetDouble(offset + best)) best = j;
  }
  return best;
}

// Opcodes an id passes through on its way to a gather or a comparison.
bool CarriesIds(ir::Opcode opcode) {
  switch (opcode) {
    case ir::Opcode::kConvert:
    case ir::Opcode::kReshape:
    case ir::Opcode::kBroadcast:
    case ir::Opcode::kTranspose:
    case ir::Opcode::kSlice:
    case ir::Opcode::kSelect:
    case ir::Opcode::kAdd:
    case ir::Opcode::kClamp:
    case ir::Opcode::kConcatenate:
      return true;
    default:
      return false;
  }
}

}  // namespace

int64_t IndexBound(const ir::Computation& computation, const ir::Instruction& parameter) {
  std::map<const ir::Instruction*, std::vector<const ir::Instruction*>> users;
  for (const auto& instruction : computation.instructions()) {
    for (const ir::Instruction* operand : instruction->operands()) {
      users[operand].push_back(instruction.get());
    }
  }
  int64_t bound = 0;
  auto found = [&bound](int64_t size) { bound = bound == 0 ? size : std::min(bound, size); };
  std::set<const ir::Instruction*> seen = {&parameter};
  std::vector<const ir::Instruction*> stack = {&parameter};
  while (!stack.empty()) {
    const ir::Instruction* value = stack.back();
    stack.pop_back();
    for (const ir::Instruction* user : users[value]) {
      const ir::Attributes& attributes = user->attributes();
      if (user->opcode() == ir::Opcode::kGather && user->operand(1) == value &&
          attributes.gather_dims && !attributes.gather_dims->start_index_map.empty()) {
        found(user->operand(0)->shape().dim(attributes.gather_dims->start_index_map[0]));
      } else if (user->opcode() == ir::Opcode::kCompare) {
        const ir::Instruction* other = user->operand(user->operand(0) == value ? 1 : 0);
        if (other->opcode() == ir::Opcode::kIota) {
          found(other->shape().dim(other->attributes().iota_dimension));
        }
      } else if (CarriesIds(user->opcode()) && !ir::IsFloating(user->shape().dtype()) &&
                 seen.insert(user).second) {
        stack.push_back(user);
      }
    }
  }
  return bound;
}

Result<LossKind> ParseLossKind(std::string_view text) {
  for (LossKind kind : {LossKind::kCrossEntropy, LossKind::kMeanSquaredError, LossKind::kOutput}) {
    if (text == LossKindName(kind)) return kind;
  }
  return InvalidArgument("--loss {}: unknown loss; use cross-entropy, mse or output", text);
}

std::string_view LossKindName(LossKind kind) {
  switch (kind) {
    case LossKind::kCrossEntropy:
      return "cross-entropy";
    case LossKind::kMeanSquaredError:
      return "mse";
    case LossKind::kOutput:
      return "output";
  }
  return "?";
}

Result<ir::Instruction*> AppendLoss(ir::ComputationBuilder& b, ir::Instruction* output,
                                    LossKind kind, int64_t labels_parameter) {
  const ir::Shape& shape = output->shape();
  if (kind == LossKind::kOutput) {
    if (shape.rank() != 0) {
      return InvalidArgument(
          "--loss output: the model's output is {}, not a scalar; use --loss cross-entropy (for "
          "logits) or mse",
          shape.ToString());
    }
    return output;
  }
  if (shape.rank() == 0) {
    return InvalidArgument("--loss {}: the model's output is a scalar; use --loss output",
                           LossKindName(kind));
  }
  if (kind == LossKind::kCrossEntropy) {
    const std::vector<int64_t> label_dims(shape.dims().begin(), shape.dims().end() - 1);
    Instruction* labels =
        b.Parameter(labels_parameter, ir::Shape::Array(ir::DType::kS32, label_dims), "labels");
    return CrossEntropy(b, output, labels);
  }
  Instruction* labels = b.Parameter(labels_parameter, shape, "labels");
  Instruction* error = b.Subtract(output, labels);
  return Mean(b, b.Multiply(error, error));
}

BatchGenerator ForwardBatches(std::vector<ir::Shape> inputs, std::vector<int64_t> index_bounds,
                              ir::Shape output, LossKind kind) {
  return [inputs = std::move(inputs), index_bounds = std::move(index_bounds),
          output = std::move(output), kind](int64_t rows, uint64_t step_seed) {
    const uint64_t seed = step_seed % kBatchPool;
    std::vector<ir::Literal> batch;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<int64_t> dims = inputs[i].dims();
      if (!dims.empty()) dims[0] = rows;
      const ir::Shape shape = ir::Shape::Array(inputs[i].dtype(), dims);
      if (ir::IsFloating(shape.dtype())) {
        batch.push_back(NormalLiteral(shape, 1.0, seed * 7919 + i));
        continue;
      }
      std::mt19937_64 engine(seed * 7919 + i);
      const auto bound = static_cast<uint64_t>(index_bounds[i] > 0 ? index_bounds[i] : 2);
      ir::Literal ids = ir::Literal::CreateZeros(shape);
      for (int64_t e = 0; e < ids.element_count(); ++e) {
        ids.SetInt(e, static_cast<int64_t>(engine() % bound));
      }
      batch.push_back(std::move(ids));
    }
    if (kind == LossKind::kOutput || batch.empty()) return batch;
    std::vector<int64_t> out_dims = output.dims();
    out_dims[0] = rows;
    const ir::Literal& x = batch[0];
    const int64_t row_size = rows > 0 ? x.element_count() / rows : 0;
    if (kind == LossKind::kCrossEntropy) {
      const int64_t classes = out_dims.back();
      out_dims.pop_back();
      ir::Literal labels = ir::Literal::CreateZeros(ir::Shape::Array(ir::DType::kS32, out_dims));
      const int64_t per_row = rows > 0 ? labels.element_count() / rows : 0;
      for (int64_t p = 0; p < labels.element_count(); ++p) {
        if (!ir::IsFloating(x.shape().dtype()) && x.shape().dims() == out_dims) {
          labels.SetInt(p, x.GetInt(p) % classes);  // copy the ids
        } else if (per_row == 1) {
          labels.SetInt(p, ArgMax(x, p * row_size, std::min(classes, row_size)));
        } else {
          labels.SetInt(p, (p % per_row) % classes);
        }
      }
      batch.push_back(std::move(labels));
    } else {
      ir::Literal labels = ir::Literal::CreateZeros(ir::Shape::Array(output.dtype(), out_dims));
      const int64_t per_row = rows > 0 ? labels.element_count() / rows : 0;
      for (int64_t p = 0; p < labels.element_count(); ++p) {
        const int64_t row = p / per_row, j = p % per_row;
        labels.SetDouble(p, ir::IsFloating(x.shape().dtype())
                                ? x.GetDouble(row * row_size + j % row_size)
                                : 0.0);
      }
      batch.push_back(std::move(labels));
    }
    return batch;
  };
}

}  // namespace alpa::models
