#include "hlo/lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace alpa::hlo {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c) || c == '.' || c == '-'; }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

bool IsName(std::string_view text) {
  return !text.empty() && IsIdentStart(text[0]) &&
         std::all_of(text.begin(), text.end(), IsIdentChar);
}

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEof:
      return "end of input";
    case TokenKind::kIdent:
      return fmt::format("identifier '{}'", token.text);
    case TokenKind::kName:
      return fmt::format("name '%{}'", token.text);
    case TokenKind::kInt:
      return fmt::format("integer {}", token.text);
    case TokenKind::kFloat:
      return fmt::format("number {}", token.text);
    case TokenKind::kString:
      return "a string";
    default:
      if (token.text.size() == 1 && !std::isprint(static_cast<unsigned char>(token.text[0]))) {
        return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(token.text[0]));
      }
      return fmt::format("'{}'", token.text);
  }
}

bool Lexer::SkipWhitespaceAndComments(std::string_view* error) {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        *error = "unterminated /* comment";
        return false;  // pos_ stays at the comment's start
      }
      pos_ = end + 2;
    } else {
      break;
    }
  }
  return true;
}

Token Lexer::Next() {
  std::string_view comment_error;
  if (!SkipWhitespaceAndComments(&comment_error)) {
    const size_t comment_start = pos_;
    pos_ = text_.size();
    return Token{TokenKind::kError, text_.substr(comment_start, 2), comment_start, comment_error};
  }
  const size_t start = pos_;
  if (pos_ >= text_.size()) return Token{TokenKind::kEof, "", start, ""};
  const char c = text_[pos_];
  auto single = [&](TokenKind kind) {
    ++pos_;
    return Token{kind, text_.substr(start, 1), start, ""};
  };
  switch (c) {
    case '{':
      return single(TokenKind::kLBrace);
    case '}':
      return single(TokenKind::kRBrace);
    case '(':
      return single(TokenKind::kLParen);
    case ')':
      return single(TokenKind::kRParen);
    case '[':
      return single(TokenKind::kLSquare);
    case ']':
      return single(TokenKind::kRSquare);
    case ',':
      return single(TokenKind::kComma);
    case ':':
      return single(TokenKind::kColon);
    case '=':
      return single(TokenKind::kEqual);
    case '"':
      return LexString(start);
    default:
      break;
  }
  if (text_.substr(start, 3) == "...") {
    pos_ += 3;
    return Token{TokenKind::kEllipsis, text_.substr(start, 3), start, ""};
  }
  if (text_.substr(start, 2) == "->") {
    pos_ += 2;
    return Token{TokenKind::kArrow, text_.substr(start, 2), start, ""};
  }
  if (text_.substr(start, 2) == "<=") {
    pos_ += 2;
    return Token{TokenKind::kLeq, text_.substr(start, 2), start, ""};
  }
  if (c == '%') {
    // XLA's grammar: name ::= [a-zA-Z_][a-zA-Z0-9_.-]*. A digit first would print as a bare
    // parameter name in a signature, where it lexes as a number.
    ++pos_;
    if (pos_ == text_.size() || !IsIdentStart(text_[pos_])) {
      return Token{TokenKind::kError, text_.substr(start, 1), start,
                   "'%' must start a name (a letter or '_', then letters, digits, '_', '.', '-')"};
    }
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    return Token{TokenKind::kName, text_.substr(start + 1, pos_ - start - 1), start, ""};
  }
  if (IsDigit(c) || c == '-' || c == '.') return LexNumberOrSpecial(start);
  if (IsIdentStart(c)) {
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    std::string_view word = text_.substr(start, pos_ - start);
    if (word == "inf" || word == "nan") return Token{TokenKind::kFloat, word, start, ""};
    return Token{TokenKind::kIdent, word, start, ""};
  }
  ++pos_;
  return Token{TokenKind::kError, text_.substr(start, 1), start, "unexpected character"};
}

Token Lexer::LexNumberOrSpecial(size_t start) {
  size_t p = start;
  if (text_[p] == '-') {
    ++p;
    for (std::string_view special : {"inf", "nan"}) {
      if (text_.substr(p, 3) == special && (p + 3 >= text_.size() || !IsIdentChar(text_[p + 3]))) {
        pos_ = p + 3;
        return Token{TokenKind::kFloat, text_.substr(start, pos_ - start), start, ""};
      }
    }
  }
  const size_t digits_start = p;
  while (p < text_.size() && IsDigit(text_[p])) ++p;
  bool is_float = false;
  if (p < text_.size() && text_[p] == '.') {
    is_float = true;
    ++p;
    while (p < text_.size() && IsDigit(text_[p])) ++p;
  }
  if (p == digits_start || (p == digits_start + 1 && is_float)) {
    pos_ = start + 1;
    return Token{TokenKind::kError, text_.substr(start, 1), start, "unexpected character"};
  }
  if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
    size_t q = p + 1;
    if (q < text_.size() && (text_[q] == '+' || text_[q] == '-')) ++q;
    if (q < text_.size() && IsDigit(text_[q])) {
      while (q < text_.size() && IsDigit(text_[q])) ++q;
      p = q;
      is_float = true;
    }
  }
  pos_ = p;
  return Token{is_float ? TokenKind::kFloat : TokenKind::kInt, text_.substr(start, p - start),
               start, ""};
}

Token Lexer::LexString(size_t start) {
  size_t p = start + 1;
  while (p < text_.size() && text_[p] != '"') {
    if (text_[p] == '\\') ++p;
    ++p;
  }
  if (p >= text_.size()) {
    pos_ = text_.size();
    return Token{TokenKind::kError, text_.substr(start, 1), start, "unterminated string"};
  }
  pos_ = p + 1;
  return Token{TokenKind::kString, text_.substr(start, pos_ - start), start, ""};
}

std::string_view Lexer::WordAt(size_t offset) const {
  size_t p = offset;
  while (p < text_.size()) {
    char c = text_[p];
    if (IsSpace(c) || c == ',' || c == '"' || c == '=' || c == '{' || c == '}' || c == '(' ||
        c == ')' || c == '[' || c == ']') {
      break;
    }
    ++p;
  }
  return text_.substr(offset, p - offset);
}

Result<std::string_view> Lexer::BalancedAt(size_t offset, size_t* end) const {
  // An explicit stack of open brackets: no recursion, so nesting depth costs memory only.
  std::vector<char> open;
  size_t p = offset;
  size_t last_non_space = offset;
  while (p < text_.size()) {
    const char c = text_[p];
    if (open.empty() && (c == ',' || c == '\n' || c == ')' || c == '}' || c == ']')) break;
    const bool comment =
        c == '/' && p + 1 < text_.size() && (text_[p + 1] == '/' || text_[p + 1] == '*');
    if (comment && open.empty()) break;  // the value ends where a comment starts
    if (comment && text_[p + 1] == '/') {
      // Printed on one line, the value would swallow the rest of the instruction.
      return InvalidArgument("'//' comment inside a bracketed value");
    }
    if (c == '"') {
      ++p;
      while (p < text_.size() && text_[p] != '"') {
        if (text_[p] == '\\') ++p;
        ++p;
      }
      if (p >= text_.size()) return InvalidArgument("unterminated string");
    } else if (c == '{' || c == '(' || c == '[') {
      open.push_back(c == '{' ? '}' : c == '(' ? ')' : ']');
    } else if (c == '}' || c == ')' || c == ']') {
      if (open.back() != c) {
        return InvalidArgument("mismatched '{}', expected '{}'", c, open.back());
      }
      open.pop_back();
    }
    ++p;
    if (!IsSpace(c)) last_non_space = p;
  }
  if (!open.empty()) return InvalidArgument("unbalanced brackets, expected '{}'", open.back());
  *end = last_non_space;
  return text_.substr(offset, last_non_space - offset);
}

std::string UnescapeString(std::string_view quoted) {
  std::string out;
  std::string_view body = quoted.substr(1, quoted.size() >= 2 ? quoted.size() - 2 : 0);
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      default:
        out += e;
        break;  // \" \\ \' and anything else: the character itself
    }
  }
  return out;
}

std::string EscapeString(std::string_view raw) {
  std::string out = "\"";
  for (char c : raw) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
        break;
    }
  }
  return out + "\"";
}

}  // namespace alpa::hlo
