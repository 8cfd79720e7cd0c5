// Instructions, computations and the module; name resolution once everything is read.
#include <algorithm>

#include "hlo/opcode_rules.h"
#include "hlo/parser.h"
#include "hlo/parser_impl.h"

namespace alpa::hlo::internal {
namespace {

bool IsTrailingTable(const Token& token) {
  return token.kind == TokenKind::kIdent &&
         (token.text == "FileNames" || token.text == "FunctionNames" ||
          token.text == "FileLocations" || token.text == "StackFrames");
}

}  // namespace

Result<std::unique_ptr<ir::Module>> HloParser::ParseModule() {
  // HLO text never holds a NUL byte; a file that does is most likely a binary HloProto dump.
  if (const size_t nul = lexer_.text().find('\0'); nul != std::string_view::npos) {
    const auto [line, column] = LineColumn(nul);
    return InvalidArgument(
        "{}:{}:{}: not HLO text (a NUL byte); binary HloProto dumps (.pb) are not read, pass the "
        "text dump (XLA_FLAGS=--xla_dump_hlo_as_text)",
        source_name_, line, column);
  }
  auto module = std::make_unique<ir::Module>("");
  module->set_source_file(source_name_);
  bool has_header = false;
  if (IsIdent("HloModule")) {
    has_header = true;
    ALPA_RETURN_IF_ERROR(ParseHeader(*module));
  }
  // Recent dumps end with FileNames/FunctionNames/FileLocations/StackFrames tables, which only
  // feed metadata stack frames; everything from the first of them on is skipped.
  while (token_.kind != TokenKind::kEof && !IsTrailingTable(token_)) {
    ALPA_RETURN_IF_ERROR(ParseComputation(*module));
  }
  if (module->computations().empty()) {
    return Expected("a computation ('ENTRY %main { ... }')");
  }
  ALPA_RETURN_IF_ERROR(ResolveCalls());
  module->set_entry(entry_ != nullptr ? entry_ : module->computations().back().get());
  if (!has_header) module->set_name(module->entry()->name());
  return module;
}

Status HloParser::ParseHeader(ir::Module& module) {
  Advance();  // HloModule
  ALPA_ASSIGN_OR_RETURN(std::string name, ParseName("the module name after HloModule"));
  module.set_name(std::move(name));
  ir::ModuleConfig& config = module.mutable_config();
  while (Consume(TokenKind::kComma)) {
    if (token_.kind != TokenKind::kIdent) return Expected("a module attribute name");
    const std::string key(token_.text);
    Advance();
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kEqual, fmt::format("'=' after '{}'", key)));
    if (key == "entry_computation_layout") {
      ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to start entry_computation_layout"));
      ALPA_ASSIGN_OR_RETURN(config.entry_computation_layout, ParseProgramShape());
      ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}' to end entry_computation_layout"));
    } else if (key == "is_scheduled") {
      ALPA_ASSIGN_OR_RETURN(config.is_scheduled, ParseBool("true or false for is_scheduled"));
    } else if (key == "num_partitions" || key == "replica_count") {
      ALPA_ASSIGN_OR_RETURN(int64_t value, ParseInt(fmt::format("an integer for {}", key)));
      (key == "num_partitions" ? config.num_partitions : config.replica_count) = value;
    } else {
      ALPA_ASSIGN_OR_RETURN(std::string raw, ParseRawValue(fmt::format("a value for '{}'", key)));
      config.opaque.emplace_back(key, std::move(raw));
    }
  }
  return Status::Ok();
}

Status HloParser::ParseSignature() {
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' to start the parameter list"));
  if (!Consume(TokenKind::kRParen)) {
    do {
      ALPA_RETURN_IF_ERROR(ParseName("a parameter name"));
      ALPA_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the parameter name"));
      ALPA_RETURN_IF_ERROR(ParseShape());
    } while (Consume(TokenKind::kComma));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the parameter list"));
  }
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' before the result shape"));
  return ParseShape().status();
}

Status HloParser::ParseComputation(ir::Module& module) {
  const bool is_entry = IsIdent("ENTRY");
  if (is_entry) Advance();
  const size_t offset = token_.offset;
  ALPA_ASSIGN_OR_RETURN(std::string name, ParseName(is_entry ? "the entry computation's name"
                                                             : "a computation name or ENTRY"));
  if (computations_by_name_.count(name) > 0) {
    return ErrorAt(offset,
                   fmt::format("computation '{}' is defined twice (first at {}), expected "
                               "unique computation names",
                               name, Location(computation_offsets_[computations_by_name_[name]])));
  }
  if (is_entry && entry_ != nullptr) {
    return ErrorAt(offset, fmt::format("second ENTRY computation '{}' (the entry is already '{}' "
                                       "at {}), expected exactly one ENTRY",
                                       name, entry_->name(), Location(entry_offset_)));
  }
  if (token_.kind == TokenKind::kLParen) ALPA_RETURN_IF_ERROR(ParseSignature());
  const size_t open_offset = token_.offset;
  ALPA_RETURN_IF_ERROR(
      Expect(TokenKind::kLBrace, fmt::format("'{{' to start the body of computation '{}'", name)));
  auto computation = std::make_unique<ir::Computation>(name);
  instructions_by_name_.clear();
  std::vector<PendingInstruction> pending;
  ir::Instruction* root = nullptr;
  size_t root_offset = 0;
  while (token_.kind != TokenKind::kRBrace) {
    if (token_.kind == TokenKind::kEof) {
      return Expected(
          fmt::format("'}}' to close computation '{}' opened at {}", name, Location(open_offset)));
    }
    bool is_root = false;
    const size_t instruction_offset = token_.offset;
    ALPA_RETURN_IF_ERROR(ParseInstruction(*computation, pending, is_root));
    if (is_root) {
      if (root != nullptr) {
        return ErrorAt(instruction_offset,
                       fmt::format("second ROOT in computation '{}' (the first is '{}' at {}), "
                                   "expected exactly one ROOT",
                                   name, root->name(), Location(root_offset)));
      }
      root = pending.back().instruction;
      root_offset = instruction_offset;
    }
  }
  Advance();  // '}'
  if (pending.empty()) {
    return ErrorAt(open_offset, fmt::format("computation '{}' has no instructions, expected at "
                                            "least one",
                                            name));
  }
  if (Consume(TokenKind::kComma)) {
    if (!IsIdent("execution_thread")) return Expected("execution_thread after the computation");
    Advance();
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after execution_thread"));
    ALPA_ASSIGN_OR_RETURN(std::string thread, ParseString("a quoted execution thread name"));
    computation->set_execution_thread(std::move(thread));
  }
  ALPA_RETURN_IF_ERROR(ResolveOperands(*computation, pending));
  computation->set_root(root != nullptr ? root : pending.back().instruction);
  ir::Computation* added = module.AddComputation(std::move(computation));
  computations_by_name_[name] = added;
  computation_offsets_[added] = offset;
  if (is_entry) {
    entry_ = added;
    entry_offset_ = offset;
  }
  for (PendingInstruction& instruction : pending) {
    if (instruction.calls.empty()) continue;
    PendingInstruction calls;
    calls.instruction = instruction.instruction;
    calls.offset = instruction.offset;
    calls.calls = std::move(instruction.calls);
    pending_calls_.push_back(std::move(calls));
  }
  return Status::Ok();
}

Status HloParser::ParseInstruction(ir::Computation& computation,
                                   std::vector<PendingInstruction>& pending, bool& is_root) {
  is_root = IsIdent("ROOT") && Peek().kind != TokenKind::kEqual;
  if (is_root) Advance();
  const size_t offset = token_.offset;
  ALPA_ASSIGN_OR_RETURN(std::string name, ParseName("an instruction name or '}'"));
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kEqual, fmt::format("'=' after '{}'", name)));
  if (!AtShapeStart()) return Expected(fmt::format("the result shape of '{}'", name));
  ALPA_ASSIGN_OR_RETURN(ir::Shape shape, ParseShape());
  if (token_.kind != TokenKind::kIdent) return Expected(fmt::format("the opcode of '{}'", name));
  std::optional<ir::Opcode> opcode = ir::ParseOpcode(token_.text);
  if (!opcode.has_value()) {
    return ErrorAt(token_.offset, fmt::format("unknown opcode '{}' in '{}', expected an XLA HLO "
                                              "opcode such as add, dot, custom-call",
                                              token_.text, name));
  }
  Advance();
  if (instructions_by_name_.count(name) > 0) {
    return ErrorAt(offset, fmt::format("instruction '{}' is defined twice in computation '{}', "
                                       "expected unique names within a computation",
                                       name, computation.name()));
  }
  ir::Instruction* instruction = computation.AddInstruction(
      std::make_unique<ir::Instruction>(name, *opcode, std::move(shape)));
  const auto [line, column] = LineColumn(offset);
  instruction->set_location({line, column});
  instructions_by_name_.emplace(std::move(name), instruction);
  pending.push_back({instruction, offset, {}, {}, {}});
  PendingInstruction& current = pending.back();

  ALPA_RETURN_IF_ERROR(
      Expect(TokenKind::kLParen, fmt::format("'(' after the opcode of '{}'", instruction->name())));
  if (*opcode == ir::Opcode::kParameter) {
    const size_t number_offset = token_.offset;
    ALPA_ASSIGN_OR_RETURN(int64_t number, ParseInt("the parameter number"));
    if (number < 0) {
      return ErrorAt(number_offset,
                     fmt::format("parameter number {} is negative, expected >= 0", number));
    }
    instruction->mutable_attributes().parameter_number = number;
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the parameter number"));
  } else if (*opcode == ir::Opcode::kConstant) {
    ALPA_ASSIGN_OR_RETURN(instruction->mutable_attributes().literal,
                          ParseLiteral(instruction->shape()));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the constant's value"));
  } else {
    ALPA_RETURN_IF_ERROR(ParseOperands(current));
    const OpcodeRules& rules = RulesFor(*opcode);
    const auto count = static_cast<int>(current.operands.size());
    if (count < rules.min_operands || (rules.max_operands >= 0 && count > rules.max_operands)) {
      std::string expected = rules.max_operands == rules.min_operands
                                 ? fmt::format("{}", rules.min_operands)
                             : rules.max_operands < 0
                                 ? fmt::format("at least {}", rules.min_operands)
                                 : fmt::format("{} to {}", rules.min_operands, rules.max_operands);
      return ErrorAt(offset,
                     fmt::format("'{}' ({}) has {} operands, expected {}", instruction->name(),
                                 ir::OpcodeName(*opcode), count, expected));
    }
  }
  ALPA_RETURN_IF_ERROR(ParseAttributes(current));
  ALPA_RETURN_IF_ERROR(CheckRequiredAttributes(current));
  if (*opcode == ir::Opcode::kDot && !instruction->attributes().dot_dims.has_value()) {
    instruction->mutable_attributes().dot_dims.emplace();
  }
  return Status::Ok();
}

Status HloParser::ParseOperands(PendingInstruction& pending) {
  if (Consume(TokenKind::kRParen)) return Status::Ok();
  do {
    // Typed operands (`f32[4]{0} %a`) repeat the operand's shape; it is read and dropped.
    if (AtShapeStart()) ALPA_RETURN_IF_ERROR(ParseShape());
    const size_t offset = token_.offset;
    ALPA_ASSIGN_OR_RETURN(std::string name, ParseName("an operand name"));
    pending.operands.push_back({std::move(name), offset});
  } while (Consume(TokenKind::kComma));
  return Expect(TokenKind::kRParen,
                fmt::format("',' or ')' after the operands of '{}'", pending.instruction->name()));
}

Status HloParser::CheckRequiredAttributes(const PendingInstruction& pending) {
  const ir::Opcode opcode = pending.instruction->opcode();
  for (const AttributeRule& rule : RulesFor(opcode).attributes) {
    if (!rule.required) continue;
    if (std::find(seen_attributes_.begin(), seen_attributes_.end(), rule.name) !=
        seen_attributes_.end()) {
      continue;
    }
    return ErrorAt(pending.offset, fmt::format("'{}' ({}) is missing attribute '{}', expected "
                                               "{}=...",
                                               pending.instruction->name(), ir::OpcodeName(opcode),
                                               rule.name, rule.name));
  }
  return Status::Ok();
}

Status HloParser::ResolveOperands(ir::Computation& computation,
                                  std::vector<PendingInstruction>& pending) {
  auto lookup = [&](const NameRef& ref, const PendingInstruction& user,
                    std::string_view role) -> Result<ir::Instruction*> {
    auto it = instructions_by_name_.find(ref.name);
    if (it != instructions_by_name_.end()) return it->second;
    return ErrorAt(ref.offset,
                   fmt::format("use of undefined instruction '%{}' as {} of '{}' in "
                               "computation '{}', expected an instruction of the "
                               "same computation",
                               ref.name, role, user.instruction->name(), computation.name()));
  };
  for (PendingInstruction& user : pending) {
    for (size_t i = 0; i < user.operands.size(); ++i) {
      ALPA_ASSIGN_OR_RETURN(ir::Instruction * operand,
                            lookup(user.operands[i], user, fmt::format("operand {}", i)));
      user.instruction->AppendOperand(operand);
    }
    for (const NameRef& ref : user.control_predecessors) {
      ALPA_ASSIGN_OR_RETURN(ir::Instruction * predecessor,
                            lookup(ref, user, "a control predecessor"));
      user.instruction->AddControlPredecessor(predecessor);
    }
  }
  return Status::Ok();
}

Status HloParser::ResolveCalls() {
  for (const PendingInstruction& pending : pending_calls_) {
    ir::Instruction& instruction = *pending.instruction;
    auto find_role = [&](std::string_view role) -> const CallRef* {
      for (const CallRef& call : pending.calls) {
        if (call.role == role) return &call;
      }
      return nullptr;
    };
    // The order of called_computations() is the role order of ir/instruction.h.
    std::vector<const CallRef*> ordered;
    switch (instruction.opcode()) {
      case ir::Opcode::kWhile:
        ordered = {find_role("condition"), find_role("body")};
        break;
      case ir::Opcode::kSelectAndScatter:
        ordered = {find_role("select"), find_role("scatter")};
        break;
      case ir::Opcode::kConditional: {
        const CallRef* on_true = find_role("true_computation");
        const CallRef* on_false = find_role("false_computation");
        const CallRef* branches = find_role("branch_computations");
        const bool pair_form = on_true != nullptr || on_false != nullptr;
        if ((pair_form && branches != nullptr) || (pair_form && (!on_true || !on_false)) ||
            (branches != nullptr && branches->computations.empty())) {
          return ErrorAt(pending.offset,
                         fmt::format("conditional '{}' has an invalid set of branches, expected "
                                     "true_computation and false_computation, or a non-empty "
                                     "branch_computations",
                                     instruction.name()));
        }
        ordered = pair_form ? std::vector<const CallRef*>{on_true, on_false}
                            : std::vector<const CallRef*>{branches};
        break;
      }
      default:
        for (const CallRef& call : pending.calls) ordered.push_back(&call);
        break;
    }
    for (const CallRef* call : ordered) {
      if (call == nullptr) continue;
      for (const NameRef& ref : call->computations) {
        auto it = computations_by_name_.find(ref.name);
        if (it == computations_by_name_.end()) {
          return ErrorAt(ref.offset,
                         fmt::format("computation '{}' called by '{}' ({}) is not defined, "
                                     "expected the name of a computation in this module",
                                     ref.name, instruction.name(), call->role));
        }
        instruction.AppendCalledComputation(it->second);
      }
    }
  }
  return Status::Ok();
}

}  // namespace alpa::hlo::internal

namespace alpa::hlo {

Result<std::unique_ptr<ir::Module>> ParseHloModule(std::string_view text,
                                                   std::string_view source_name) {
  internal::HloParser parser(text, source_name);
  return parser.ParseModule();
}

Result<ir::Shape> ParseShape(std::string_view text) {
  internal::HloParser parser(text, "<shape>");
  return parser.ParseShapeOnly();
}

}  // namespace alpa::hlo
