// The recursive-descent HLO text parser (internal to the hlo layer).
//
// One class, its member functions split by concept over several files:
//   parser_base.cc        token handling, error messages with line:column and a caret
//   parser_shape.cc       shapes and layouts
//   parser_literal.cc     constant literals
//   parser_attributes.cc  attribute values (table-driven per opcode, see opcode_rules.h)
//   parser_module.cc      instructions, computations, the module, name resolution
#ifndef ALPA_HLO_PARSER_IMPL_H_
#define ALPA_HLO_PARSER_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hlo/lexer.h"
#include "ir/module.h"
#include "support/status.h"

namespace alpa::hlo::internal {

// Nesting deeper than this (tuple shapes, literals, brackets) is rejected with an error, so that
// malformed input cannot exhaust the stack.
inline constexpr int kMaxNestingDepth = 256;
// An iota replica-group list is expanded into explicit groups; more devices than this is an
// input error, not an allocation.
inline constexpr int64_t kMaxIotaDevices = int64_t{1} << 20;

// A name used before the whole computation (operands) or module (callees) is read.
struct NameRef {
  std::string name;
  size_t offset = 0;
};
// `to_apply=%f`, `branch_computations={%a, %b}`: attribute name and the computations named.
struct CallRef {
  std::string role;
  std::vector<NameRef> computations;
  size_t offset = 0;
};
struct PendingInstruction {
  ir::Instruction* instruction = nullptr;
  size_t offset = 0;  // of the instruction's name
  std::vector<NameRef> operands;
  std::vector<NameRef> control_predecessors;
  std::vector<CallRef> calls;
};

class HloParser {
 public:
  HloParser(std::string_view text, std::string_view source_name);

  Result<std::unique_ptr<ir::Module>> ParseModule();
  // A single shape filling the whole text.
  Result<ir::Shape> ParseShapeOnly();

 private:
  // --- parser_base.cc ---
  void Advance() { token_ = lexer_.Next(); }
  // The token after the current one, without consuming anything.
  Token Peek();
  // Re-lexes from `offset` (after a raw read ending there).
  void ResumeAt(size_t offset);
  // "<source>:<line>:<col>: error: <message>" + the source line + a caret under the column.
  Status ErrorAt(size_t offset, std::string_view message) const;
  // Error at the current token: "found <token>, expected <expected>".
  Status Expected(std::string_view expected) const;
  Status Expect(TokenKind kind, std::string_view expected);
  bool Consume(TokenKind kind);
  bool IsIdent(std::string_view word) const;
  Result<int64_t> ParseInt(std::string_view what);
  Result<double> ParseDouble(std::string_view what);
  Result<bool> ParseBool(std::string_view what);
  // `{1, 2, 3}` (possibly empty).
  Result<std::vector<int64_t>> ParseIntList(std::string_view what);
  // `%name` or `name`.
  Result<std::string> ParseName(std::string_view what);
  Result<std::string> ParseString(std::string_view what);  // unescaped
  // Raw text of one attribute value (see Lexer::BalancedAt); leaves the lexer after it.
  Result<std::string> ParseRawValue(std::string_view what);
  // Raw word (see Lexer::WordAt) at the current token; leaves the lexer after it.
  Result<std::string_view> ParseWord(std::string_view what);
  // Line and column (1-based) of a byte offset. Offsets asked in increasing order (one per
  // instruction) cost a scan of the text between them, so a whole module is located in one pass.
  std::pair<int, int> LineColumn(size_t offset) const;
  std::string Location(size_t offset) const;  // "<source>:<line>:<col>"

  // --- parser_shape.cc ---
  Result<ir::Shape> ParseShape();
  bool AtShapeStart();  // a dtype identifier followed by '[', or '('
  Result<ir::Layout> ParseLayout();
  Result<ir::ProgramShape> ParseProgramShape();  // `(shapes)->shape`

  // --- parser_literal.cc ---
  Result<ir::Literal> ParseLiteral(const ir::Shape& shape);
  Result<ir::Literal> ParseArrayLiteral(const ir::Shape& shape);

  // --- parser_attributes.cc ---
  Status ParseAttributes(PendingInstruction& pending);
  Status ParseAttribute(std::string_view name, size_t name_offset, PendingInstruction& pending);
  Status ParseTypedAttribute(std::string_view name, size_t name_offset,
                             PendingInstruction& pending);
  Result<std::vector<ir::SliceDim>> ParseSlice();
  Result<std::vector<ir::PaddingDim>> ParsePadding();
  Result<std::vector<ir::WindowDim>> ParseWindow();
  Result<ir::ConvolutionDimensionNumbers> ParseDimLabels();
  Result<ir::ReplicaGroups> ParseReplicaGroups();
  Result<std::vector<std::pair<int64_t, int64_t>>> ParseSourceTargetPairs();
  Result<std::vector<std::pair<std::string, std::string>>> ParseMetadata();
  Result<std::vector<std::pair<std::string, std::string>>> ParseFrontendAttributes();
  Result<std::vector<NameRef>> ParseNameList(std::string_view what);  // `{%a, %b}`

  // --- parser_module.cc ---
  Status ParseHeader(ir::Module& module);
  Status ParseComputation(ir::Module& module);
  // Parses one instruction into `computation`; sets `is_root` when it is marked ROOT.
  Status ParseInstruction(ir::Computation& computation, std::vector<PendingInstruction>& pending,
                          bool& is_root);
  Status ParseSignature();  // `(p: shape, ...) -> shape`, checked for syntax only
  Status ParseOperands(PendingInstruction& pending);
  Status ResolveOperands(ir::Computation& computation, std::vector<PendingInstruction>& pending);
  Status ResolveCalls();
  Status CheckRequiredAttributes(const PendingInstruction& pending);

  Lexer lexer_;
  std::string source_name_;
  // LineColumn's cursor: the last offset it was asked for, its line and the offset that line
  // starts.
  mutable size_t cursor_offset_ = 0;
  mutable int cursor_line_ = 1;
  mutable size_t cursor_line_start_ = 0;
  Token token_;
  int depth_ = 0;
  // Attribute names already seen on the instruction being parsed.
  std::vector<std::string_view> seen_attributes_;
  // Call references of every instruction of the module, resolved once all computations are read.
  std::vector<PendingInstruction> pending_calls_;
  // Instructions of the computation being parsed, by name.
  std::unordered_map<std::string, ir::Instruction*> instructions_by_name_;
  std::unordered_map<std::string, ir::Computation*> computations_by_name_;
  std::unordered_map<const ir::Computation*, size_t> computation_offsets_;
  ir::Computation* entry_ = nullptr;
  size_t entry_offset_ = 0;
};

// RAII nesting counter: construct, then check ok().
class DepthGuard {
 public:
  explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  bool ok() const { return depth_ <= kMaxNestingDepth; }

 private:
  int& depth_;
};

}  // namespace alpa::hlo::internal

#endif  // ALPA_HLO_PARSER_IMPL_H_
