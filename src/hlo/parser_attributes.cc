// Attribute values: `name=value` after an instruction's operands. Which names an opcode accepts
// comes from opcode_rules.h; this file knows how each value is spelled and where it is stored.
#include <algorithm>
#include <charconv>

#include "hlo/opcode_rules.h"
#include "hlo/parser_impl.h"

namespace alpa::hlo::internal {
namespace {

bool ParseIntText(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// One operand's labels of `dim_labels`: `b01f` for activations, `01io` for the kernel. `major`
// and `minor` are the two non-spatial letters; the digits give the spatial dimension order.
bool ParseConvLabels(std::string_view labels, char major, char minor, int64_t* major_pos,
                     int64_t* minor_pos, std::vector<int64_t>* spatial) {
  if (labels.size() < 2) return false;
  const size_t spatial_count = labels.size() - 2;
  spatial->assign(spatial_count, -1);
  *major_pos = -1;
  *minor_pos = -1;
  for (size_t pos = 0; pos < labels.size(); ++pos) {
    const char c = labels[pos];
    const auto position = static_cast<int64_t>(pos);
    if (c == major && *major_pos < 0) {
      *major_pos = position;
    } else if (c == minor && *minor_pos < 0) {
      *minor_pos = position;
    } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < spatial_count &&
               (*spatial)[static_cast<size_t>(c - '0')] < 0) {
      (*spatial)[static_cast<size_t>(c - '0')] = position;
    } else {
      return false;
    }
  }
  return *major_pos >= 0 && *minor_pos >= 0;
}

}  // namespace

Status HloParser::ParseAttributes(PendingInstruction& pending) {
  seen_attributes_.clear();
  while (Consume(TokenKind::kComma)) {
    if (token_.kind != TokenKind::kIdent) return Expected("an attribute name");
    const std::string_view name = token_.text;
    const size_t name_offset = token_.offset;
    Advance();
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kEqual, fmt::format("'=' after attribute '{}'", name)));
    ALPA_RETURN_IF_ERROR(ParseAttribute(name, name_offset, pending));
  }
  return Status::Ok();
}

Status HloParser::ParseAttribute(std::string_view name, size_t name_offset,
                                 PendingInstruction& pending) {
  const ir::Opcode opcode = pending.instruction->opcode();
  if (std::find(seen_attributes_.begin(), seen_attributes_.end(), name) != seen_attributes_.end()) {
    return ErrorAt(name_offset, fmt::format("attribute '{}' given twice on '{}', expected each "
                                            "attribute once",
                                            name, pending.instruction->name()));
  }
  seen_attributes_.push_back(name);
  if (RulesFor(opcode).Find(name) != nullptr || IsCommonAttribute(name)) {
    return ParseTypedAttribute(name, name_offset, pending);
  }
  if (IsOpaqueAttribute(name)) {
    ALPA_ASSIGN_OR_RETURN(std::string raw, ParseRawValue(fmt::format("a value for '{}'", name)));
    pending.instruction->mutable_attributes().opaque.emplace_back(std::string(name), std::move(raw));
    return Status::Ok();
  }
  return ErrorAt(name_offset, fmt::format("unknown attribute '{}' for opcode '{}'", name,
                                          ir::OpcodeName(opcode)));
}

Status HloParser::ParseTypedAttribute(std::string_view name, size_t name_offset,
                                      PendingInstruction& pending) {
  ir::Instruction& instruction = *pending.instruction;
  ir::Attributes& a = instruction.mutable_attributes();
  const std::string what = fmt::format("the value of '{}'", name);
  auto int_list = [&](std::vector<int64_t>& out) -> Status {
    ALPA_ASSIGN_OR_RETURN(out, ParseIntList(what));
    return Status::Ok();
  };
  auto integer = [&](int64_t& out) -> Status {
    ALPA_ASSIGN_OR_RETURN(out, ParseInt(fmt::format("an integer for '{}'", name)));
    return Status::Ok();
  };
  auto boolean = [&](bool& out) -> Status {
    ALPA_ASSIGN_OR_RETURN(out, ParseBool(fmt::format("true or false for '{}'", name)));
    return Status::Ok();
  };
  auto dot = [&]() -> ir::DotDimensionNumbers& {
    if (!a.dot_dims.has_value()) a.dot_dims.emplace();
    return *a.dot_dims;
  };
  auto gather = [&]() -> ir::GatherDimensionNumbers& {
    if (!a.gather_dims.has_value()) a.gather_dims.emplace();
    return *a.gather_dims;
  };
  auto scatter = [&]() -> ir::ScatterDimensionNumbers& {
    if (!a.scatter_dims.has_value()) a.scatter_dims.emplace();
    return *a.scatter_dims;
  };
  const size_t value_offset = token_.offset;

  // Kept as text.
  if (name == "sharding") {
    ALPA_ASSIGN_OR_RETURN(a.sharding, ParseRawValue(what));
    return Status::Ok();
  }
  if (name == "backend_config") {
    if (token_.kind == TokenKind::kString) {
      a.backend_config = std::string(token_.text);
      Advance();
      return Status::Ok();
    }
    ALPA_ASSIGN_OR_RETURN(a.backend_config, ParseRawValue(what));
    return Status::Ok();
  }
  if (name == "metadata") {
    ALPA_ASSIGN_OR_RETURN(a.metadata, ParseMetadata());
    return Status::Ok();
  }
  if (name == "frontend_attributes") {
    ALPA_ASSIGN_OR_RETURN(a.frontend_attributes, ParseFrontendAttributes());
    return Status::Ok();
  }
  // Names resolved later.
  if (name == "control-predecessors") {
    ALPA_ASSIGN_OR_RETURN(pending.control_predecessors, ParseNameList(what));
    return Status::Ok();
  }
  if (name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
      name == "select" || name == "scatter" || name == "true_computation" ||
      name == "false_computation") {
    ALPA_ASSIGN_OR_RETURN(std::string callee, ParseName(fmt::format("a computation name for "
                                                                    "'{}'", name)));
    pending.calls.push_back({std::string(name), {{std::move(callee), value_offset}}, name_offset});
    return Status::Ok();
  }
  if (name == "branch_computations" || name == "called_computations") {
    ALPA_ASSIGN_OR_RETURN(std::vector<NameRef> callees, ParseNameList(what));
    pending.calls.push_back({std::string(name), std::move(callees), name_offset});
    return Status::Ok();
  }
  // Integer lists.
  if (name == "dimensions") return int_list(a.dimensions);
  if (name == "dynamic_slice_sizes" || name == "slice_sizes") return int_list(a.slice_sizes);
  if (name == "lhs_batch_dims") return int_list(dot().lhs_batch_dims);
  if (name == "rhs_batch_dims") return int_list(dot().rhs_batch_dims);
  if (name == "lhs_contracting_dims") return int_list(dot().lhs_contracting_dims);
  if (name == "rhs_contracting_dims") return int_list(dot().rhs_contracting_dims);
  if (name == "offset_dims") return int_list(gather().offset_dims);
  if (name == "collapsed_slice_dims") return int_list(gather().collapsed_slice_dims);
  if (name == "start_index_map") return int_list(gather().start_index_map);
  if (name == "operand_batching_dims") return int_list(gather().operand_batching_dims);
  if (name == "start_indices_batching_dims") return int_list(gather().start_indices_batching_dims);
  if (name == "update_window_dims") return int_list(scatter().update_window_dims);
  if (name == "inserted_window_dims") return int_list(scatter().inserted_window_dims);
  if (name == "scatter_dims_to_operand_dims") {
    return int_list(scatter().scatter_dims_to_operand_dims);
  }
  if (name == "input_batching_dims") return int_list(scatter().input_batching_dims);
  if (name == "scatter_indices_batching_dims") {
    return int_list(scatter().scatter_indices_batching_dims);
  }
  if (name == "index_vector_dim") {
    return integer(instruction.opcode() == ir::Opcode::kGather ? gather().index_vector_dim
                                                               : scatter().index_vector_dim);
  }
  // Integers.
  if (name == "index") return integer(a.tuple_index);
  if (name == "iota_dimension") return integer(a.iota_dimension);
  if (name == "feature_group_count") return integer(a.feature_group_count);
  if (name == "batch_group_count") return integer(a.batch_group_count);
  if (name == "k") return integer(a.k);
  if (name == "exponent_bits") return integer(a.exponent_bits);
  if (name == "mantissa_bits") return integer(a.mantissa_bits);
  if (name == "feature_index") return integer(a.feature_index);
  if (name == "channel_id") {
    int64_t channel = 0;
    ALPA_RETURN_IF_ERROR(integer(channel));
    a.channel_id = channel;
    return Status::Ok();
  }
  // Booleans.
  if (name == "indices_are_sorted") return boolean(a.indices_are_sorted);
  if (name == "unique_indices") return boolean(a.unique_indices);
  if (name == "is_stable") return boolean(a.is_stable);
  if (name == "largest") return boolean(a.largest);
  if (name == "use_global_device_ids") return boolean(a.use_global_device_ids);
  if (name == "constrain_layout") return boolean(a.constrain_layout);
  if (name == "custom_call_has_side_effect") return boolean(a.custom_call_has_side_effect);
  // Scalars of other kinds.
  if (name == "epsilon") {
    ALPA_ASSIGN_OR_RETURN(a.epsilon, ParseDouble("a number for 'epsilon'"));
    return Status::Ok();
  }
  if (name == "custom_call_target") {
    ALPA_ASSIGN_OR_RETURN(a.custom_call_target, ParseString("a quoted custom-call target"));
    return Status::Ok();
  }
  if (name == "direction" || name == "type" || name == "kind" || name == "distribution" ||
      name == "algorithm") {
    ALPA_ASSIGN_OR_RETURN(std::string_view word, ParseWord(what));
    if (name == "algorithm") {
      a.rng_algorithm = std::string(word);
      return Status::Ok();
    }
    bool known = true;
    if (name == "direction") {
      auto direction = ir::ParseComparisonDirection(word);
      known = direction.has_value();
      if (known) a.comparison_direction = *direction;
    } else if (name == "type") {
      auto type = ir::ParseComparisonType(word);
      known = type.has_value();
      if (known) a.comparison_type = *type;
    } else if (name == "kind") {
      auto kind = ir::ParseFusionKind(word);
      known = kind.has_value();
      if (known) a.fusion_kind = *kind;
    } else if (word == "rng_uniform" || word == "rng_normal") {
      a.distribution = word == "rng_uniform" ? ir::RandomDistribution::kUniform
                                             : ir::RandomDistribution::kNormal;
    } else {
      known = false;
    }
    if (!known) {
      std::string_view choices = name == "direction" ? "EQ, NE, LT, LE, GT or GE"
                                 : name == "type"    ? "FLOAT, TOTALORDER, SIGNED or UNSIGNED"
                                 : name == "kind"    ? "kLoop, kInput, kOutput or kCustom"
                                                     : "rng_uniform or rng_normal";
      return ErrorAt(value_offset,
                     fmt::format("unknown {} '{}', expected {}", name, word, choices));
    }
    return Status::Ok();
  }
  // Structured values.
  if (name == "slice") {
    ALPA_ASSIGN_OR_RETURN(a.slice, ParseSlice());
    return Status::Ok();
  }
  if (name == "padding") {
    ALPA_ASSIGN_OR_RETURN(a.padding, ParsePadding());
    return Status::Ok();
  }
  if (name == "window") {
    ALPA_ASSIGN_OR_RETURN(a.window, ParseWindow());
    return Status::Ok();
  }
  if (name == "dim_labels") {
    ALPA_ASSIGN_OR_RETURN(a.conv_dims, ParseDimLabels());
    return Status::Ok();
  }
  if (name == "replica_groups") {
    ALPA_ASSIGN_OR_RETURN(a.replica_groups, ParseReplicaGroups());
    return Status::Ok();
  }
  if (name == "source_target_pairs") {
    ALPA_ASSIGN_OR_RETURN(a.source_target_pairs, ParseSourceTargetPairs());
    return Status::Ok();
  }
  return Internal("{}: attribute '{}' is in the rules of '{}' but has no parser",
                  Location(name_offset), name, ir::OpcodeName(instruction.opcode()));
}

Result<std::vector<ir::SliceDim>> HloParser::ParseSlice() {
  std::vector<ir::SliceDim> dims;
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to start slice={[start:limit], ...}"));
  if (Consume(TokenKind::kRBrace)) return dims;
  do {
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' to start a slice dimension"));
    ir::SliceDim dim;
    ALPA_ASSIGN_OR_RETURN(dim.start, ParseInt("the slice start"));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the slice start"));
    ALPA_ASSIGN_OR_RETURN(dim.limit, ParseInt("the slice limit"));
    if (Consume(TokenKind::kColon)) {
      ALPA_ASSIGN_OR_RETURN(dim.stride, ParseInt("the slice stride"));
    }
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']' after a slice dimension"));
    dims.push_back(dim);
  } while (Consume(TokenKind::kComma));
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "',' or '}' in slice={...}"));
  return dims;
}

Result<std::vector<ir::PaddingDim>> HloParser::ParsePadding() {
  const size_t offset = token_.offset;
  ALPA_ASSIGN_OR_RETURN(std::string_view word, ParseWord("padding such as 0_0x1_2 (low_high[_interior] per dimension)"));
  std::vector<ir::PaddingDim> dims;
  for (std::string_view dim_text : Split(word, 'x')) {
    std::vector<std::string_view> parts = Split(dim_text, '_');
    ir::PaddingDim dim;
    if ((parts.size() != 2 && parts.size() != 3) || !ParseIntText(parts[0], &dim.low) ||
        !ParseIntText(parts[1], &dim.high) ||
        (parts.size() == 3 && !ParseIntText(parts[2], &dim.interior))) {
      return ErrorAt(offset, fmt::format("bad padding '{}', expected low_high[_interior] per "
                                         "dimension joined by 'x' (e.g. 0_0x1_2_0)",
                                         word));
    }
    dims.push_back(dim);
  }
  return dims;
}

Result<std::vector<ir::WindowDim>> HloParser::ParseWindow() {
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to start window={size=...}"));
  std::vector<ir::WindowDim> dims;
  bool have_size = false;
  while (token_.kind != TokenKind::kRBrace) {
    if (token_.kind != TokenKind::kIdent) return Expected("a window field (size, stride, pad, ...) or '}'");
    const std::string_view field = token_.text;
    const size_t field_offset = token_.offset;
    Advance();
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kEqual, fmt::format("'=' after window field '{}'", field)));
    const size_t value_offset = token_.offset;
    ALPA_ASSIGN_OR_RETURN(std::string_view value, ParseWord(fmt::format("a value for window field '{}'", field)));
    std::vector<std::string_view> parts = Split(value, 'x');
    if (!have_size && dims.empty()) dims.resize(parts.size());
    if (parts.size() != dims.size()) {
      return ErrorAt(value_offset, fmt::format("window field '{}' has {} dimensions, expected {}",
                                               field, parts.size(), dims.size()));
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      ir::WindowDim& dim = dims[i];
      bool ok = true;
      if (field == "size") {
        ok = ParseIntText(parts[i], &dim.size);
        have_size = true;
      } else if (field == "stride") {
        ok = ParseIntText(parts[i], &dim.stride);
      } else if (field == "lhs_dilate") {
        ok = ParseIntText(parts[i], &dim.lhs_dilation);
      } else if (field == "rhs_dilate") {
        ok = ParseIntText(parts[i], &dim.rhs_dilation);
      } else if (field == "rhs_reversal") {
        int64_t reversal = 0;
        ok = ParseIntText(parts[i], &reversal) && (reversal == 0 || reversal == 1);
        dim.reversal = reversal == 1;
      } else if (field == "pad") {
        std::vector<std::string_view> low_high = Split(parts[i], '_');
        ok = low_high.size() == 2 && ParseIntText(low_high[0], &dim.pad_low) &&
             ParseIntText(low_high[1], &dim.pad_high);
      } else {
        return ErrorAt(field_offset, fmt::format("unknown window field '{}', expected size, "
                                                 "stride, pad, lhs_dilate, rhs_dilate or "
                                                 "rhs_reversal",
                                                 field));
      }
      if (!ok) {
        return ErrorAt(value_offset, fmt::format("bad value '{}' for window field '{}', expected "
                                                 "integers joined by 'x'{}",
                                                 value, field, field == "pad" ? " (low_high)" : ""));
      }
    }
  }
  Advance();
  return dims;
}

Result<ir::ConvolutionDimensionNumbers> HloParser::ParseDimLabels() {
  const size_t offset = token_.offset;
  ALPA_ASSIGN_OR_RETURN(std::string_view word, ParseWord("dim_labels such as b01f_01io->b01f"));
  ir::ConvolutionDimensionNumbers dims;
  const size_t arrow = word.find("->");
  const size_t underscore = word.find('_');
  bool ok = arrow != std::string_view::npos && underscore != std::string_view::npos &&
            underscore < arrow;
  if (ok) {
    std::string_view input = word.substr(0, underscore);
    std::string_view kernel = word.substr(underscore + 1, arrow - underscore - 1);
    std::string_view output = word.substr(arrow + 2);
    ok = ParseConvLabels(input, 'b', 'f', &dims.input_batch, &dims.input_feature,
                         &dims.input_spatial) &&
         ParseConvLabels(kernel, 'i', 'o', &dims.kernel_input_feature,
                         &dims.kernel_output_feature, &dims.kernel_spatial) &&
         ParseConvLabels(output, 'b', 'f', &dims.output_batch, &dims.output_feature,
                         &dims.output_spatial) &&
         input.size() == kernel.size() && input.size() == output.size();
  }
  if (!ok) {
    return ErrorAt(offset, fmt::format("bad dim_labels '{}', expected <input>_<kernel>-><output> "
                                       "with b/f, i/o and spatial digits 0..n-1 (e.g. "
                                       "b01f_01io->b01f)",
                                       word));
  }
  return dims;
}

Result<ir::ReplicaGroups> HloParser::ParseReplicaGroups() {
  ir::ReplicaGroups groups;
  if (token_.kind == TokenKind::kLBrace) {
    Advance();
    if (Consume(TokenKind::kRBrace)) return groups;
    do {
      ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> group, ParseIntList("a replica group"));
      groups.groups.push_back(std::move(group));
    } while (Consume(TokenKind::kComma));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "',' or '}' in replica_groups"));
    return groups;
  }
  // Iota form: [num_groups,group_size]<=[reshape_dims]T(perm), meaning
  // arange(N).reshape(reshape_dims).transpose(perm).reshape(num_groups, group_size).
  const size_t offset = token_.offset;
  auto square_list = [&](std::string_view what) -> Result<std::vector<int64_t>> {
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, fmt::format("'[' to start {}", what)));
    std::vector<int64_t> values;
    do {
      ALPA_ASSIGN_OR_RETURN(int64_t value, ParseInt(fmt::format("an integer in {}", what)));
      values.push_back(value);
    } while (Consume(TokenKind::kComma));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, fmt::format("',' or ']' in {}", what)));
    return values;
  };
  ir::IotaReplicaGroups iota;
  ALPA_ASSIGN_OR_RETURN(iota.group_dims,
                        square_list("replica_groups={{...}} or [groups,size]<=[dims]"));
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLeq, "'<=' in iota replica groups"));
  ALPA_ASSIGN_OR_RETURN(iota.reshape_dims, square_list("the iota reshape dimensions"));
  if (IsIdent("T")) {
    Advance();
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after T"));
    do {
      ALPA_ASSIGN_OR_RETURN(int64_t axis, ParseInt("a transpose axis"));
      iota.transpose_perm.push_back(axis);
    } while (Consume(TokenKind::kComma));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in T(...)"));
  }
  auto product = [](const std::vector<int64_t>& dims, int64_t* out) {
    *out = 1;
    for (int64_t d : dims) {
      if (d < 1 || __builtin_mul_overflow(*out, d, out) || *out > kMaxIotaDevices) return false;
    }
    return true;
  };
  int64_t devices = 0;
  int64_t grouped = 0;
  if (iota.group_dims.size() != 2 || !product(iota.reshape_dims, &devices) ||
      !product(iota.group_dims, &grouped) || devices != grouped) {
    return ErrorAt(offset, fmt::format("bad iota replica groups, expected [groups,size]<=[dims] "
                                       "with positive sizes, groups*size == prod(dims) <= {}",
                                       kMaxIotaDevices));
  }
  const size_t rank = iota.reshape_dims.size();
  std::vector<int64_t> perm = iota.transpose_perm;
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted.size() != rank || sorted[i] != static_cast<int64_t>(i)) {
      return ErrorAt(offset, fmt::format("transpose T(...) must be a permutation of 0..{}", rank - 1));
    }
  }
  // Walk the transposed array in row-major order; each position's value is the row-major index
  // of the corresponding element of the untransposed iota array.
  std::vector<int64_t> transposed_dims(rank);
  for (size_t i = 0; i < rank; ++i) transposed_dims[i] = iota.reshape_dims[perm[i]];
  std::vector<int64_t> source_strides = ir::RowMajorStrides(iota.reshape_dims);
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> flat;
  flat.reserve(static_cast<size_t>(devices));
  for (int64_t n = 0; n < devices; ++n) {
    int64_t value = 0;
    for (size_t i = 0; i < rank; ++i) value += index[i] * source_strides[perm[i]];
    flat.push_back(value);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < transposed_dims[i]) break;
      index[i] = 0;
    }
  }
  const int64_t group_size = iota.group_dims[1];
  for (int64_t g = 0; g < iota.group_dims[0]; ++g) {
    groups.groups.emplace_back(flat.begin() + g * group_size, flat.begin() + (g + 1) * group_size);
  }
  groups.iota = std::move(iota);
  return groups;
}

Result<std::vector<std::pair<int64_t, int64_t>>> HloParser::ParseSourceTargetPairs() {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to start source_target_pairs"));
  if (Consume(TokenKind::kRBrace)) return pairs;
  do {
    const size_t offset = token_.offset;
    ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> pair, ParseIntList("a {source,target} pair"));
    if (pair.size() != 2) {
      return ErrorAt(offset, fmt::format("{} numbers in a source-target pair, expected 2",
                                         pair.size()));
    }
    pairs.emplace_back(pair[0], pair[1]);
  } while (Consume(TokenKind::kComma));
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "',' or '}' in source_target_pairs"));
  return pairs;
}

Result<std::vector<std::pair<std::string, std::string>>> HloParser::ParseMetadata() {
  // {op_type="..." op_name="..." source_line=114}: space-separated, values kept as written.
  std::vector<std::pair<std::string, std::string>> entries;
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to start metadata"));
  while (!Consume(TokenKind::kRBrace)) {
    if (token_.kind != TokenKind::kIdent) return Expected("a metadata key or '}'");
    std::string key(token_.text);
    Advance();
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kEqual, fmt::format("'=' after metadata key '{}'", key)));
    std::string value;
    if (token_.kind == TokenKind::kString) {
      value = std::string(token_.text);
      Advance();
    } else {
      ALPA_ASSIGN_OR_RETURN(std::string_view word,
                            ParseWord(fmt::format("a value for metadata key '{}'", key)));
      value = std::string(word);
    }
    entries.emplace_back(std::move(key), std::move(value));
    Consume(TokenKind::kComma);
  }
  return entries;
}

Result<std::vector<std::pair<std::string, std::string>>> HloParser::ParseFrontendAttributes() {
  // {key="value", key2="a,b"}: comma-separated; values stored unquoted.
  std::vector<std::pair<std::string, std::string>> entries;
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to start frontend_attributes"));
  if (Consume(TokenKind::kRBrace)) return entries;
  do {
    std::string key;
    if (token_.kind == TokenKind::kString) {
      key = UnescapeString(token_.text);
      Advance();
    } else {
      ALPA_ASSIGN_OR_RETURN(key, ParseName("a frontend attribute key"));
    }
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kEqual, fmt::format("'=' after '{}'", key)));
    std::string value;
    if (token_.kind == TokenKind::kString) {
      value = UnescapeString(token_.text);
      Advance();
    } else {
      ALPA_ASSIGN_OR_RETURN(value, ParseRawValue(fmt::format("a value for '{}'", key)));
    }
    entries.emplace_back(std::move(key), std::move(value));
  } while (Consume(TokenKind::kComma));
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "',' or '}' in frontend_attributes"));
  return entries;
}

Result<std::vector<NameRef>> HloParser::ParseNameList(std::string_view what) {
  std::vector<NameRef> names;
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, fmt::format("'{{' to start {}", what)));
  if (Consume(TokenKind::kRBrace)) return names;
  do {
    const size_t offset = token_.offset;
    ALPA_ASSIGN_OR_RETURN(std::string name, ParseName(fmt::format("a name in {}", what)));
    names.push_back({std::move(name), offset});
  } while (Consume(TokenKind::kComma));
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, fmt::format("',' or '}}' in {}", what)));
  return names;
}

}  // namespace alpa::hlo::internal
