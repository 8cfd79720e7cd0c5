#include "cost/flop_count.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

namespace alpa::cost {
namespace {

using ir::Computation;
using ir::Instruction;
using ir::Opcode;
using ir::Shape;

// Elements of all array leaves of a shape (a tuple-shaped reduce has one leaf per output).
double LeafElements(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? static_cast<double>(shape.ElementCount()) : 0;
  double total = 0;
  for (const Shape& element : shape.tuple_shapes()) total += LeafElements(element);
  return total;
}

double WindowSize(const Instruction& instruction) {
  double size = 1;
  for (const ir::WindowDim& dim : instruction.attributes().window) {
    size *= static_cast<double>(dim.size);
  }
  return size;
}

std::string Where(const Instruction& instruction) {
  return fmt::format("instruction %{} in computation %{}", instruction.name(),
                     instruction.parent() != nullptr ? instruction.parent()->name() : "?");
}

// 2 * |result| * prod(lhs contracting dim sizes).
Result<double> DotFlops(const Instruction& dot) {
  const auto& numbers = dot.attributes().dot_dims;
  if (!numbers.has_value() || dot.operand_count() != 2 || !dot.operand(0)->shape().IsArray()) {
    return InvalidArgument(
        "{}: dot without dimension numbers or two array operands; run the "
        "verifier first",
        Where(dot));
  }
  const Shape& lhs = dot.operand(0)->shape();
  double contracted = 1;
  for (int64_t dim : numbers->lhs_contracting_dims) {
    if (dim < 0 || dim >= lhs.rank()) {
      return InvalidArgument("{}: lhs contracting dimension {} out of range for {}", Where(dot),
                             dim, lhs.ToString());
    }
    contracted *= static_cast<double>(lhs.dim(dim));
  }
  return 2 * LeafElements(dot.shape()) * contracted;
}

// 2 * |result| * (input features / feature_group_count) * prod(kernel spatial dim sizes): every
// output element is a dot product over the input features of its group and the kernel window.
Result<double> ConvolutionFlops(const Instruction& conv) {
  const ir::Attributes& attributes = conv.attributes();
  const auto& numbers = attributes.conv_dims;
  if (!numbers.has_value() || conv.operand_count() != 2 || attributes.feature_group_count < 1) {
    return InvalidArgument(
        "{}: convolution without dim_labels, two operands or a positive "
        "feature_group_count; run the verifier first",
        Where(conv));
  }
  const Shape& input = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  auto in_range = [](const Shape& shape, int64_t dim) {
    return shape.IsArray() && dim >= 0 && dim < shape.rank();
  };
  if (!in_range(input, numbers->input_feature)) {
    return InvalidArgument("{}: input feature dimension out of range", Where(conv));
  }
  double kernel_spatial = 1;
  for (int64_t dim : numbers->kernel_spatial) {
    if (!in_range(kernel, dim)) {
      return InvalidArgument("{}: kernel spatial dimension {} out of range", Where(conv), dim);
    }
    kernel_spatial *= static_cast<double>(kernel.dim(dim));
  }
  const double features_per_group = static_cast<double>(input.dim(numbers->input_feature)) /
                                    static_cast<double>(attributes.feature_group_count);
  return 2 * LeafElements(conv.shape()) * features_per_group * kernel_spatial;
}

class FlopCounter {
 public:
  Result<FlopCount> Count(const Computation& computation) {
    if (auto it = done_.find(&computation); it != done_.end()) return it->second;
    if (!in_progress_.insert(&computation).second) {
      return InvalidArgument(
          "computation %{} calls itself (directly or through others); the call "
          "graph must be acyclic",
          computation.name());
    }
    FlopCount total;
    for (const auto& instruction : computation.instructions()) {
      ALPA_RETURN_IF_ERROR(AddInstruction(*instruction, total));
    }
    in_progress_.erase(&computation);
    done_.emplace(&computation, total);
    return total;
  }

  Status AddInstruction(const Instruction& instruction, FlopCount& total) {
    const Opcode opcode = instruction.opcode();
    auto add = [&](double flops) {
      if (flops <= 0) return;
      total.flops += flops;
      total.by_opcode[opcode] += flops;
    };
    auto callee = [&](int64_t i) -> Result<FlopCount> {
      if (i >= static_cast<int64_t>(instruction.called_computations().size()) ||
          instruction.called_computation(i) == nullptr) {
        return InvalidArgument("{}: missing called computation {}", Where(instruction), i);
      }
      return Count(*instruction.called_computation(i));
    };

    if (ir::IsElementwiseArithmetic(opcode)) {
      add(LeafElements(instruction.shape()));
      return Status::Ok();
    }
    switch (opcode) {
      case Opcode::kDot: {
        ALPA_ASSIGN_OR_RETURN(double flops, DotFlops(instruction));
        add(flops);
        break;
      }
      case Opcode::kConvolution: {
        ALPA_ASSIGN_OR_RETURN(double flops, ConvolutionFlops(instruction));
        add(flops);
        break;
      }
      case Opcode::kReduce: {
        // Operands are N inputs then N init values.
        double elements = 0;
        for (int64_t i = 0; i < instruction.operand_count() / 2; ++i) {
          elements += LeafElements(instruction.operand(i)->shape());
        }
        add(elements);
        break;
      }
      case Opcode::kReduceWindow:
        add(LeafElements(instruction.shape()) * WindowSize(instruction));
        break;
      case Opcode::kSelectAndScatter: {
        // Operands: operand, source, init value.
        if (instruction.operand_count() < 2) break;
        const double source = LeafElements(instruction.operand(1)->shape());
        add(source * WindowSize(instruction) + source);
        break;
      }
      case Opcode::kScatter: {
        // Operands: N inputs, indices, N updates.
        const int64_t n = (instruction.operand_count() - 1) / 2;
        double updates = 0;
        for (int64_t i = n + 1; i < instruction.operand_count(); ++i) {
          updates += LeafElements(instruction.operand(i)->shape());
        }
        add(updates);
        break;
      }
      case Opcode::kMap: {
        ALPA_ASSIGN_OR_RETURN(FlopCount body, callee(0));
        total.Accumulate(body, LeafElements(instruction.shape()));
        break;
      }
      case Opcode::kFusion:
      case Opcode::kCall:
      case Opcode::kAsyncStart: {
        ALPA_ASSIGN_OR_RETURN(FlopCount body, callee(0));
        total.Accumulate(body, 1);
        break;
      }
      case Opcode::kWhile: {
        ALPA_ASSIGN_OR_RETURN(FlopCount condition, callee(0));
        ALPA_ASSIGN_OR_RETURN(FlopCount body, callee(1));
        ALPA_ASSIGN_OR_RETURN(std::optional<int64_t> trip_count, KnownTripCount(instruction));
        if (!trip_count.has_value()) {
          total.unknown_trip_count_loops.push_back(instruction.name());
        }
        const double n = static_cast<double>(trip_count.value_or(1));
        total.Accumulate(body, n);
        total.Accumulate(condition, n + 1);
        break;
      }
      case Opcode::kConditional: {
        std::optional<FlopCount> most;
        for (int64_t i = 0; i < static_cast<int64_t>(instruction.called_computations().size());
             ++i) {
          ALPA_ASSIGN_OR_RETURN(FlopCount branch, callee(i));
          if (!most.has_value() || branch.flops > most->flops) most = std::move(branch);
        }
        if (most.has_value()) total.Accumulate(*most, 1);
        break;
      }
      default:
        break;
    }
    return Status::Ok();
  }

 private:
  std::map<const Computation*, FlopCount> done_;
  std::set<const Computation*> in_progress_;
};

}  // namespace

void FlopCount::Accumulate(const FlopCount& other, double scale) {
  flops += scale * other.flops;
  for (const auto& [opcode, count] : other.by_opcode) by_opcode[opcode] += scale * count;
  unknown_trip_count_loops.insert(unknown_trip_count_loops.end(),
                                  other.unknown_trip_count_loops.begin(),
                                  other.unknown_trip_count_loops.end());
}

Result<std::optional<int64_t>> KnownTripCount(const Instruction& loop) {
  using nlohmann::json;
  const std::string& text = loop.attributes().backend_config;
  if (text.empty()) return std::optional<int64_t>();
  // The config is raw JSON, or a JSON string holding it (`backend_config="{\"k\":...}"`).
  json config = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_string()) {
    config = json::parse(config.get_ref<const std::string&>(), nullptr, false);
  }
  // A config that is not JSON, or has no known_trip_count, says nothing about the trip count.
  if (!config.is_object() || !config.contains("known_trip_count")) {
    return std::optional<int64_t>();
  }
  const json& known = config["known_trip_count"];
  const json* n = known.is_object() && known.contains("n") ? &known["n"] : nullptr;
  int64_t value = -1;
  if (n != nullptr && n->is_number_integer()) {
    value = n->get<int64_t>();
  } else if (n != nullptr && n->is_string()) {
    const std::string& digits = n->get_ref<const std::string&>();
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size()) value = -1;
  }
  if (value < 0) {
    return InvalidArgument(
        "{}: backend_config known_trip_count must be {{\"n\":\"N\"}} with N a "
        "non-negative integer, got {}",
        Where(loop), known.dump());
  }
  return std::optional<int64_t>(value);
}

Result<FlopCount> CountFlops(const Computation& computation) {
  FlopCounter counter;
  return counter.Count(computation);
}

Result<FlopCount> CountFlops(const Instruction& instruction) {
  FlopCounter counter;
  FlopCount total;
  ALPA_RETURN_IF_ERROR(counter.AddInstruction(instruction, total));
  return total;
}

}  // namespace alpa::cost
