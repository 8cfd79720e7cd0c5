// Tokens of XLA's HLO text (the lexical rules of xla/hlo/parser/hlo_lexer.cc, re-implemented).
//
// The lexer is pulled one token at a time by the parser. A few attribute values have a syntax of
// their own that does not split into ordinary tokens (`padding=0_0x1_2`,
// `dim_labels=b01f_01io->b01f`, raw JSON in `backend_config={...}`); for those the parser asks for
// the raw text at an offset (WordAt, BalancedAt) and then re-positions the lexer after it.
#ifndef ALPA_HLO_LEXER_H_
#define ALPA_HLO_LEXER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "support/status.h"

namespace alpa::hlo {

enum class TokenKind {
  kEof,
  kError,   // text is the offending character(s); message() says why
  kIdent,   // [A-Za-z_][A-Za-z0-9_.-]*: keywords, opcodes, dtypes, attribute names, bare names
  kName,    // %[A-Za-z0-9_.-]+ ; text excludes the '%'
  kInt,     // -?[0-9]+
  kFloat,   // -?[0-9]+.[0-9]*(e[+-]?[0-9]+)?, -?[0-9]+e[+-]?[0-9]+, inf, -inf, nan, -nan
  kString,  // "..." with C escapes; text includes the quotes
  kLBrace,
  kRBrace,
  kLParen,
  kRParen,
  kLSquare,
  kRSquare,
  kComma,
  kColon,
  kEqual,
  kArrow,     // ->
  kLeq,       // <=
  kEllipsis,  // ...
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;
  size_t offset = 0;  // byte offset of the first character in the source
  // Only for kError: what is wrong.
  std::string_view error;
};

// "'{'", "end of input", "identifier 'add'": how a token is named in error messages.
std::string DescribeToken(const Token& token);

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // Skips whitespace and comments (`// ...`, `/* ... */`) and returns the next token.
  Token Next();
  // Moves the read position (to re-lex after a raw read, or to back-track after a peek).
  void Reset(size_t offset) { pos_ = offset; }
  size_t position() const { return pos_; }
  std::string_view text() const { return text_; }

  // The maximal run of characters at `offset` that are not whitespace, a comma, a quote, `=` or
  // a bracket. Used for `0_0x1_2`, `3x3`, `b01f_01io->b01f`, `kLoop`.
  std::string_view WordAt(size_t offset) const;
  // The raw text of one attribute value starting at `offset`: everything up to the first comma,
  // newline, comment or unmatched closing bracket at nesting depth 0, with brackets balanced and
  // strings (with escapes) skipped whole. Trailing whitespace is dropped. Fails on unbalanced
  // brackets, an unterminated string or a `//` comment inside brackets; `end` receives the offset
  // just after the value.
  Result<std::string_view> BalancedAt(size_t offset, size_t* end) const;

 private:
  // Returns false (and sets `error`) for an unterminated block comment.
  bool SkipWhitespaceAndComments(std::string_view* error);
  Token LexNumberOrSpecial(size_t start);
  Token LexString(size_t start);

  std::string_view text_;
  size_t pos_ = 0;
};

// Undoes the C escapes of a string token (`"a\"b"` -> `a"b`). `quoted` includes the quotes.
std::string UnescapeString(std::string_view quoted);
// The inverse: `a"b` -> `"a\"b"`.
std::string EscapeString(std::string_view raw);
// True when `text` lexes as one name: [a-zA-Z_][a-zA-Z0-9_.-]*, XLA's grammar.
bool IsName(std::string_view text);

}  // namespace alpa::hlo

#endif  // ALPA_HLO_LEXER_H_
