#include "hlo/attribute_printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hlo/lexer.h"
#include "hlo/opcode_rules.h"
#include "ir/computation.h"

namespace alpa::hlo::internal {
namespace {

using ir::Opcode;

std::string IntList(const std::vector<int64_t>& values) {
  return fmt::format("{{{}}}", fmt::join(values, ","));
}

std::string XList(const std::vector<int64_t>& values) {
  return fmt::format("{}", fmt::join(values, "x"));
}

std::string NameList(const std::vector<ir::Computation*>& computations) {
  std::string out = "{";
  for (size_t i = 0; i < computations.size(); ++i) {
    if (i > 0) out += ", ";
    out += "%" + computations[i]->name();
  }
  return out + "}";
}

std::string Slice(const std::vector<ir::SliceDim>& dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("[{}:{}", dims[i].start, dims[i].limit);
    if (dims[i].stride != 1) out += fmt::format(":{}", dims[i].stride);
    out += "]";
  }
  return out + "}";
}

std::string Padding(const std::vector<ir::PaddingDim>& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += "x";
    out += fmt::format("{}_{}", dims[i].low, dims[i].high);
    if (dims[i].interior != 0) out += fmt::format("_{}", dims[i].interior);
  }
  return out;
}

// XLA's window text: size always, every other field only when some dimension differs from the
// default.
std::string Window(const std::vector<ir::WindowDim>& dims) {
  std::vector<int64_t> size, stride, lhs, rhs, reversal;
  std::vector<std::string> pad;
  bool any_stride = false, any_pad = false, any_lhs = false, any_rhs = false, any_rev = false;
  for (const ir::WindowDim& d : dims) {
    size.push_back(d.size);
    stride.push_back(d.stride);
    lhs.push_back(d.lhs_dilation);
    rhs.push_back(d.rhs_dilation);
    reversal.push_back(d.reversal ? 1 : 0);
    pad.push_back(fmt::format("{}_{}", d.pad_low, d.pad_high));
    any_stride |= d.stride != 1;
    any_pad |= d.pad_low != 0 || d.pad_high != 0;
    any_lhs |= d.lhs_dilation != 1;
    any_rhs |= d.rhs_dilation != 1;
    any_rev |= d.reversal;
  }
  if (dims.empty()) return "{}";
  std::string out = "{size=" + XList(size);
  if (any_stride) out += " stride=" + XList(stride);
  if (any_pad) out += fmt::format(" pad={}", fmt::join(pad, "x"));
  if (any_lhs) out += " lhs_dilate=" + XList(lhs);
  if (any_rhs) out += " rhs_dilate=" + XList(rhs);
  if (any_rev) out += " rhs_reversal=" + XList(reversal);
  return out + "}";
}

// One operand's conv labels; positions out of range (a hand-built IR) show as '?'.
std::string ConvLabels(int64_t major_pos, char major, int64_t minor_pos, char minor,
                       const std::vector<int64_t>& spatial) {
  std::string labels(spatial.size() + 2, '?');
  auto put = [&](int64_t pos, char c) {
    if (pos >= 0 && static_cast<size_t>(pos) < labels.size()) labels[static_cast<size_t>(pos)] = c;
  };
  put(major_pos, major);
  put(minor_pos, minor);
  for (size_t i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>('0' + i % 10));
  return labels;
}

std::string DimLabels(const ir::ConvolutionDimensionNumbers& d) {
  return ConvLabels(d.input_batch, 'b', d.input_feature, 'f', d.input_spatial) + "_" +
         ConvLabels(d.kernel_input_feature, 'i', d.kernel_output_feature, 'o', d.kernel_spatial) +
         "->" + ConvLabels(d.output_batch, 'b', d.output_feature, 'f', d.output_spatial);
}

std::string ReplicaGroups(const ir::ReplicaGroups& groups) {
  if (groups.iota.has_value()) {
    const ir::IotaReplicaGroups& iota = *groups.iota;
    std::string out = fmt::format("[{}]<=[{}]", fmt::join(iota.group_dims, ","),
                                  fmt::join(iota.reshape_dims, ","));
    if (!iota.transpose_perm.empty())
      out += fmt::format("T({})", fmt::join(iota.transpose_perm, ","));
    return out;
  }
  std::string out = "{";
  for (size_t i = 0; i < groups.groups.size(); ++i) {
    if (i > 0) out += ",";
    out += IntList(groups.groups[i]);
  }
  return out + "}";
}

// The value of one opcode-specific attribute, or "" when it is at its default and optional.
std::string TypedValue(const ir::Instruction& instruction, const AttributeRule& rule) {
  const ir::Attributes& a = instruction.attributes();
  const std::string_view name = rule.name;
  const auto& callees = instruction.called_computations();
  auto list_if = [&](const std::vector<int64_t>& values) {
    return rule.required || !values.empty() ? IntList(values) : std::string();
  };
  auto flag = [](bool value) { return value ? std::string("true") : std::string(); };
  if (name == "dimensions") return list_if(a.dimensions);
  if (name == "dynamic_slice_sizes" || name == "slice_sizes") return IntList(a.slice_sizes);
  if (name == "index") return std::to_string(a.tuple_index);
  if (name == "iota_dimension") return std::to_string(a.iota_dimension);
  if (name == "slice") return Slice(a.slice);
  if (name == "padding") return Padding(a.padding);
  if (name == "window") return rule.required || !a.window.empty() ? Window(a.window) : "";
  if (name == "dim_labels") return a.conv_dims.has_value() ? DimLabels(*a.conv_dims) : "";
  if (name == "feature_group_count") {
    return a.feature_group_count != 1 ? std::to_string(a.feature_group_count) : "";
  }
  if (name == "batch_group_count") {
    return a.batch_group_count != 1 ? std::to_string(a.batch_group_count) : "";
  }
  if (name.starts_with("lhs_") || name.starts_with("rhs_")) {
    if (!a.dot_dims.has_value()) return "";
    const ir::DotDimensionNumbers& d = *a.dot_dims;
    if (name == "lhs_batch_dims") return list_if(d.lhs_batch_dims);
    if (name == "rhs_batch_dims") return list_if(d.rhs_batch_dims);
    if (name == "lhs_contracting_dims") return list_if(d.lhs_contracting_dims);
    return list_if(d.rhs_contracting_dims);
  }
  if (instruction.opcode() == Opcode::kGather && a.gather_dims.has_value()) {
    const ir::GatherDimensionNumbers& d = *a.gather_dims;
    if (name == "offset_dims") return list_if(d.offset_dims);
    if (name == "collapsed_slice_dims") return list_if(d.collapsed_slice_dims);
    if (name == "start_index_map") return list_if(d.start_index_map);
    if (name == "operand_batching_dims") return list_if(d.operand_batching_dims);
    if (name == "start_indices_batching_dims") return list_if(d.start_indices_batching_dims);
    if (name == "index_vector_dim") return std::to_string(d.index_vector_dim);
  }
  if (instruction.opcode() == Opcode::kScatter && a.scatter_dims.has_value()) {
    const ir::ScatterDimensionNumbers& d = *a.scatter_dims;
    if (name == "update_window_dims") return list_if(d.update_window_dims);
    if (name == "inserted_window_dims") return list_if(d.inserted_window_dims);
    if (name == "scatter_dims_to_operand_dims") return list_if(d.scatter_dims_to_operand_dims);
    if (name == "input_batching_dims") return list_if(d.input_batching_dims);
    if (name == "scatter_indices_batching_dims") return list_if(d.scatter_indices_batching_dims);
    if (name == "index_vector_dim") return std::to_string(d.index_vector_dim);
  }
  if (name == "indices_are_sorted") return flag(a.indices_are_sorted);
  if (name == "unique_indices") return flag(a.unique_indices);
  if (name == "direction") return std::string(ir::ComparisonDirectionName(a.comparison_direction));
  if (name == "type") return std::string(ir::ComparisonTypeName(a.comparison_type));
  if (name == "is_stable") return flag(a.is_stable);
  if (name == "k") return std::to_string(a.k);
  if (name == "largest") return a.largest ? "true" : "false";
  if (name == "exponent_bits") return std::to_string(a.exponent_bits);
  if (name == "mantissa_bits") return std::to_string(a.mantissa_bits);
  if (name == "epsilon") return fmt::format("{}", a.epsilon);
  if (name == "feature_index") return std::to_string(a.feature_index);
  if (name == "distribution") {
    return a.distribution == ir::RandomDistribution::kUniform ? "rng_uniform" : "rng_normal";
  }
  if (name == "algorithm") return a.rng_algorithm;
  if (name == "kind") return std::string(ir::FusionKindName(a.fusion_kind));
  if (name == "replica_groups") {
    return a.replica_groups.has_value() ? ReplicaGroups(*a.replica_groups) : "";
  }
  if (name == "channel_id") return a.channel_id.has_value() ? std::to_string(*a.channel_id) : "";
  if (name == "use_global_device_ids") return flag(a.use_global_device_ids);
  if (name == "constrain_layout") return flag(a.constrain_layout);
  if (name == "source_target_pairs") {
    std::string out = "{";
    for (size_t i = 0; i < a.source_target_pairs.size(); ++i) {
      if (i > 0) out += ",";
      out +=
          fmt::format("{{{},{}}}", a.source_target_pairs[i].first, a.source_target_pairs[i].second);
    }
    return out + "}";
  }
  if (name == "custom_call_target") return EscapeString(a.custom_call_target);
  if (name == "custom_call_has_side_effect") return flag(a.custom_call_has_side_effect);
  // Called computations, by role (see ir/instruction.h for the order).
  auto callee = [&](size_t i) {
    return i < callees.size() ? "%" + callees[i]->name() : std::string();
  };
  if (name == "condition" || name == "select") return callee(0);
  if (name == "body" || name == "scatter") return callee(1);
  if (name == "called_computations") return callees.empty() ? "" : NameList(callees);
  if (name == "to_apply" || name == "calls") {
    // custom-call lists its callees in called_computations=.
    if (instruction.opcode() == Opcode::kCustomCall) return "";
    return callee(0);
  }
  return "";
}

// A frontend attribute key as the parser reads it back: bare when it is a name, else quoted (the
// parser takes either, and a key may be any string, even an empty one).
std::string FrontendAttributeKey(const std::string& key) {
  return IsName(key) ? key : EscapeString(key);
}

void AppendCalls(const ir::Instruction& instruction, std::string& out) {
  // Conditional branches: the pair form for a pred selector with two branches, else the list.
  const auto& callees = instruction.called_computations();
  const bool pred_selector = instruction.operand_count() > 0 &&
                             !instruction.operand(0)->shape().IsTuple() &&
                             instruction.operand(0)->shape().dtype() == ir::DType::kPred;
  if (pred_selector && callees.size() == 2) {
    out += fmt::format(", true_computation=%{}, false_computation=%{}", callees[0]->name(),
                       callees[1]->name());
  } else {
    out += ", branch_computations=" + NameList(callees);
  }
}

}  // namespace

void AppendAttributes(const ir::Instruction& instruction, std::string& out) {
  const ir::Attributes& a = instruction.attributes();
  if (instruction.opcode() == Opcode::kConditional) {
    AppendCalls(instruction, out);
  } else {
    for (const AttributeRule& rule : RulesFor(instruction.opcode()).attributes) {
      std::string value = TypedValue(instruction, rule);
      if (!value.empty()) out += fmt::format(", {}={}", rule.name, value);
    }
  }
  for (const auto& [name, raw] : a.opaque) out += fmt::format(", {}={}", name, raw);
  if (!a.sharding.empty()) out += ", sharding=" + a.sharding;
  if (!a.frontend_attributes.empty()) {
    out += ", frontend_attributes={";
    for (size_t i = 0; i < a.frontend_attributes.size(); ++i) {
      if (i > 0) out += ",";
      out += FrontendAttributeKey(a.frontend_attributes[i].first) + "=" +
             EscapeString(a.frontend_attributes[i].second);
    }
    out += "}";
  }
  if (!instruction.control_predecessors().empty()) {
    out += ", control-predecessors={";
    for (size_t i = 0; i < instruction.control_predecessors().size(); ++i) {
      if (i > 0) out += ", ";
      out += "%" + instruction.control_predecessors()[i]->name();
    }
    out += "}";
  }
  if (!a.metadata.empty()) {
    out += ", metadata={";
    for (size_t i = 0; i < a.metadata.size(); ++i) {
      if (i > 0) out += " ";
      out += a.metadata[i].first + "=" + a.metadata[i].second;
    }
    out += "}";
  }
  if (!a.backend_config.empty()) out += ", backend_config=" + a.backend_config;
}

}  // namespace alpa::hlo::internal
