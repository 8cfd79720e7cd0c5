// Elementwise operators: arithmetic and comparisons with numpy broadcasting, activations, Where,
// Cast, and the identities (Identity; Dropout, which our training step runs as identity: a
// dropout rate is a training choice the import notes rather than applies).
//
//   Relu(x) = max(x, 0)     Sigmoid = logistic     Pow(x, 2) = x * x (the decomposed LayerNorm's
//   square; another exponent stays a power)
#include <functional>

#include "onnx/node_context.h"
#include "onnx/onnx_file.h"

namespace alpa::onnx {
namespace {

using ir::Instruction;
using ir::Opcode;

// Integer arithmetic on known values (shape arithmetic): numpy broadcasting over s64 values.
Result<ir::Literal> FoldInts(NodeContext& node, const std::function<int64_t(int64_t, int64_t)>& f,
                             ir::DType result) {
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> a, node.KnownInts(0));
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> b, node.KnownInts(1));
  const std::vector<int64_t>& a_dims = node.input_shape(0).dims();
  const std::vector<int64_t>& b_dims = node.input_shape(1).dims();
  std::optional<std::vector<int64_t>> dims = BroadcastDims(a_dims, b_dims);
  if (!dims || dims->size() > 1) {
    return node.Error("shape arithmetic on shapes {} and {}: only scalars and vectors fold",
                      node.input_shape(0).ToString(), node.input_shape(1).ToString());
  }
  const size_t count = dims->empty() ? 1 : static_cast<size_t>((*dims)[0]);
  std::vector<int64_t> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = f(a[a.size() == 1 ? 0 : i], b[b.size() == 1 ? 0 : i]);
  return ir::Literal::FromInts(ir::Shape::Array(result, *dims), values);
}

bool BothKnownInts(const NodeContext& node) {
  return node.IsKnown(0) && node.IsKnown(1) && ir::IsInteger(node.input_shape(0).dtype()) &&
         ir::IsInteger(node.input_shape(1).dtype());
}

// The shape inputs 0 and 1 broadcast to.
Result<std::vector<int64_t>> BroadcastOperands(const NodeContext& node) {
  std::optional<std::vector<int64_t>> dims =
      BroadcastDims(node.input_shape(0).dims(), node.input_shape(1).dims());
  if (!dims) {
    return node.Error("shapes {} and {} do not broadcast", node.input_shape(0).ToString(),
                      node.input_shape(1).ToString());
  }
  return *dims;
}

// a (op) b with numpy broadcasting.
Status Binary(NodeContext& node, Opcode opcode) {
  ALPA_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, BroadcastOperands(node));
  ir::ComputationBuilder& b = node.b();
  node.SetOutput(0, b.Binary(opcode, BroadcastTo(b, node.Input(0), dims),
                             BroadcastTo(b, node.Input(1), dims)));
  return Status::Ok();
}

template <Opcode kOpcode>
Status Arithmetic(NodeContext& node) {
  if (BothKnownInts(node)) {
    const std::function<int64_t(int64_t, int64_t)> f = [](int64_t a, int64_t b) -> int64_t {
      switch (kOpcode) {
        case Opcode::kAdd:
          return a + b;
        case Opcode::kSubtract:
          return a - b;
        case Opcode::kMultiply:
          return a * b;
        default:
          return b == 0 ? 0 : a / b;  // ONNX's integer Div truncates
      }
    };
    ALPA_ASSIGN_OR_RETURN(ir::Literal folded, FoldInts(node, f, node.input_shape(0).dtype()));
    node.SetKnownOutput(0, std::move(folded));
    return Status::Ok();
  }
  return Binary(node, kOpcode);
}

template <ir::ComparisonDirection kDirection>
Status Comparison(NodeContext& node) {
  if (BothKnownInts(node)) {
    const std::function<int64_t(int64_t, int64_t)> f = [](int64_t a, int64_t b) -> int64_t {
      switch (kDirection) {
        case ir::ComparisonDirection::kEq:
          return a == b;
        case ir::ComparisonDirection::kLt:
          return a < b;
        default:
          return a > b;
      }
    };
    ALPA_ASSIGN_OR_RETURN(ir::Literal folded, FoldInts(node, f, ir::DType::kPred));
    node.SetKnownOutput(0, std::move(folded));
    return Status::Ok();
  }
  ALPA_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, BroadcastOperands(node));
  ir::ComputationBuilder& b = node.b();
  node.SetOutput(0, b.Compare(BroadcastTo(b, node.Input(0), dims),
                              BroadcastTo(b, node.Input(1), dims), kDirection));
  return Status::Ok();
}

template <Opcode kOpcode>
Status Unary(NodeContext& node) {
  node.SetOutput(0, node.b().Unary(kOpcode, node.Input(0)));
  return Status::Ok();
}

Status Relu(NodeContext& node) {
  Instruction* x = node.Input(0);
  node.SetOutput(0,
                 node.b().Maximum(x, Filled(node.b(), x->shape().dtype(), 0, x->shape().dims())));
  return Status::Ok();
}

Status Pow(NodeContext& node) {
  if (node.IsKnown(1) && node.input_shape(1).ElementCount() == 1 &&
      node.input(1).known->GetDouble(0) == 2.0) {
    Instruction* x = node.Input(0);
    node.SetOutput(0, node.b().Multiply(x, x));
    return Status::Ok();
  }
  if (node.input_shape(1).dtype() != node.input_shape(0).dtype()) {
    return node.Error("exponent of type {} for a base of type {}: cast the exponent",
                      ir::DTypeName(node.input_shape(1).dtype()),
                      ir::DTypeName(node.input_shape(0).dtype()));
  }
  return Binary(node, Opcode::kPower);
}

Status Where(NodeContext& node) {
  std::optional<std::vector<int64_t>> dims =
      BroadcastDims(node.input_shape(0).dims(), node.input_shape(1).dims());
  if (dims) dims = BroadcastDims(*dims, node.input_shape(2).dims());
  if (!dims) return node.Error("the condition and the two values do not broadcast");
  if (node.IsKnown(0) && node.IsKnown(1) && node.IsKnown(2) && dims->size() <= 1 &&
      ir::IsInteger(node.input_shape(1).dtype())) {
    const std::vector<int64_t> condition = LiteralInts(*node.input(0).known);
    const std::vector<int64_t> x = LiteralInts(*node.input(1).known);
    const std::vector<int64_t> y = LiteralInts(*node.input(2).known);
    const size_t count = dims->empty() ? 1 : static_cast<size_t>((*dims)[0]);
    std::vector<int64_t> values(count);
    auto at = [](const std::vector<int64_t>& v, size_t i) { return v[v.size() == 1 ? 0 : i]; };
    for (size_t i = 0; i < count; ++i) values[i] = at(condition, i) != 0 ? at(x, i) : at(y, i);
    node.SetKnownOutput(
        0, ir::Literal::FromInts(ir::Shape::Array(node.input_shape(1).dtype(), *dims), values));
    return Status::Ok();
  }
  ir::ComputationBuilder& b = node.b();
  node.SetOutput(
      0, b.Select(BroadcastTo(b, node.Input(0), *dims), BroadcastTo(b, node.Input(1), *dims),
                  BroadcastTo(b, node.Input(2), *dims)));
  return Status::Ok();
}

Status Cast(NodeContext& node) {
  ALPA_ASSIGN_OR_RETURN(ir::DType to, ElementType(static_cast<int32_t>(node.Int("to", 0)),
                                                  fmt::format("node '{}'", node.node().name())));
  if (node.IsKnown(0)) {
    const ir::Literal& known = *node.input(0).known;
    ir::Literal cast = ir::Literal::CreateZeros(ir::Shape::Array(to, known.shape().dims()));
    for (int64_t i = 0; i < known.element_count(); ++i) {
      if (ir::IsFloating(to)) {
        cast.SetDouble(i, known.GetDouble(i));
      } else {
        cast.SetInt(i, ir::IsFloating(known.shape().dtype())
                           ? static_cast<int64_t>(known.GetDouble(i))
                           : known.GetInt(i));
      }
    }
    node.SetKnownOutput(0, std::move(cast));
    return Status::Ok();
  }
  node.SetOutput(0, node.b().Convert(node.Input(0), to));
  return Status::Ok();
}

Status Identity(NodeContext& node) {
  if (node.IsKnown(0)) {
    node.SetKnownOutput(0, *node.input(0).known);
  } else {
    node.SetOutput(0, node.Input(0));
  }
  return Status::Ok();
}

Status Dropout(NodeContext& node) {
  if (node.output_used(1)) {
    return node.Error(
        "its mask output '{}' is used; the import runs dropout as identity and has no mask",
        node.node().output(1));
  }
  return Identity(node);
}

}  // namespace

void AddElementwiseConverters(ConverterTable& table) {
  table["Add"] = Arithmetic<Opcode::kAdd>;
  table["Sub"] = Arithmetic<Opcode::kSubtract>;
  table["Mul"] = Arithmetic<Opcode::kMultiply>;
  table["Div"] = Arithmetic<Opcode::kDivide>;
  table["Max"] = [](NodeContext& node) { return Binary(node, Opcode::kMaximum); };
  table["Min"] = [](NodeContext& node) { return Binary(node, Opcode::kMinimum); };
  table["Pow"] = Pow;
  table["Equal"] = Comparison<ir::ComparisonDirection::kEq>;
  table["Less"] = Comparison<ir::ComparisonDirection::kLt>;
  table["Greater"] = Comparison<ir::ComparisonDirection::kGt>;
  table["Relu"] = Relu;
  table["Tanh"] = Unary<Opcode::kTanh>;
  table["Erf"] = Unary<Opcode::kErf>;
  table["Sqrt"] = Unary<Opcode::kSqrt>;
  table["Exp"] = Unary<Opcode::kExp>;
  table["Log"] = Unary<Opcode::kLog>;
  table["Neg"] = Unary<Opcode::kNegate>;
  table["Abs"] = Unary<Opcode::kAbs>;
  table["Sigmoid"] = Unary<Opcode::kLogistic>;
  table["Where"] = Where;
  table["Cast"] = Cast;
  table["Identity"] = Identity;
  table["Dropout"] = Dropout;
}

}  // namespace alpa::onnx
