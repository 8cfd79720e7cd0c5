// Token handling and error reporting of the HLO parser.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "hlo/parser_impl.h"

namespace alpa::hlo::internal {

HloParser::HloParser(std::string_view text, std::string_view source_name)
    : lexer_(text), source_name_(source_name) {
  Advance();
}

Token HloParser::Peek() {
  const size_t saved = lexer_.position();
  Token next = lexer_.Next();
  lexer_.Reset(saved);
  return next;
}

void HloParser::ResumeAt(size_t offset) {
  lexer_.Reset(offset);
  Advance();
}

std::pair<int, int> HloParser::LineColumn(size_t offset) const {
  std::string_view text = lexer_.text();
  offset = std::min(offset, text.size());
  if (offset < cursor_offset_) {  // behind the cursor: rescan from the start
    cursor_offset_ = 0;
    cursor_line_ = 1;
    cursor_line_start_ = 0;
  }
  for (size_t i = cursor_offset_; i < offset; ++i) {
    if (text[i] == '\n') {
      ++cursor_line_;
      cursor_line_start_ = i + 1;
    }
  }
  cursor_offset_ = offset;
  return {cursor_line_, static_cast<int>(offset - cursor_line_start_) + 1};
}

std::string HloParser::Location(size_t offset) const {
  auto [line, column] = LineColumn(offset);
  return fmt::format("{}:{}:{}", source_name_, line, column);
}

Status HloParser::ErrorAt(size_t offset, std::string_view message) const {
  std::string_view text = lexer_.text();
  offset = std::min(offset, text.size());
  const size_t newline = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  const size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  size_t line_end = text.find('\n', offset);
  if (line_end == std::string_view::npos) line_end = text.size();
  std::string_view line_text = text.substr(line_start, line_end - line_start);
  // Long lines (neuronx constants run to megabytes) are cut around the column.
  size_t column = offset - line_start;
  size_t shown_from = column > 120 ? column - 80 : 0;
  std::string shown(line_text.substr(shown_from, 200));
  // Control bytes would garble the terminal; '?' keeps the caret under the right column.
  for (char& c : shown) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == '\x7f') c = '?';
  }
  std::string caret(column - shown_from, ' ');
  for (size_t i = 0; i < caret.size() && i < shown.size(); ++i) {
    if (shown[i] == '\t') caret[i] = '\t';
  }
  return InvalidArgument("{}: {}\n{}\n{}^", Location(offset), message, shown, caret);
}

Status HloParser::Expected(std::string_view expected) const {
  std::string found = DescribeToken(token_);
  if (token_.kind == TokenKind::kError) found = fmt::format("{} {}", token_.error, found);
  return ErrorAt(token_.offset, fmt::format("found {}, expected {}", found, expected));
}

Status HloParser::Expect(TokenKind kind, std::string_view expected) {
  if (token_.kind != kind) return Expected(expected);
  Advance();
  return Status::Ok();
}

bool HloParser::Consume(TokenKind kind) {
  if (token_.kind != kind) return false;
  Advance();
  return true;
}

bool HloParser::IsIdent(std::string_view word) const {
  return token_.kind == TokenKind::kIdent && token_.text == word;
}

Result<int64_t> HloParser::ParseInt(std::string_view what) {
  if (token_.kind != TokenKind::kInt) return Expected(what);
  int64_t value = 0;
  std::string_view text = token_.text;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return ErrorAt(token_.offset,
                   fmt::format("integer {} is out of range, expected {}", text, what));
  }
  Advance();
  return value;
}

Result<double> HloParser::ParseDouble(std::string_view what) {
  if (token_.kind != TokenKind::kInt && token_.kind != TokenKind::kFloat) return Expected(what);
  std::string_view text = token_.text;
  const bool negative = !text.empty() && text.front() == '-';
  std::string_view magnitude = negative ? text.substr(1) : text;
  double value = 0;
  if (magnitude == "inf") {
    value = std::numeric_limits<double>::infinity();
  } else if (magnitude == "nan") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    auto [ptr, ec] = std::from_chars(magnitude.data(), magnitude.data() + magnitude.size(), value);
    if (ptr != magnitude.data() + magnitude.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      return ErrorAt(token_.offset, fmt::format("bad number {}, expected {}", text, what));
    }
    if (ec == std::errc::result_out_of_range) {
      // from_chars leaves `value` unset on overflow and underflow; strtod saturates to inf or 0.
      value = std::strtod(std::string(magnitude).c_str(), nullptr);
    }
  }
  Advance();
  return negative ? -value : value;
}

Result<bool> HloParser::ParseBool(std::string_view what) {
  if (IsIdent("true")) {
    Advance();
    return true;
  }
  if (IsIdent("false")) {
    Advance();
    return false;
  }
  return Expected(what);
}

Result<std::vector<int64_t>> HloParser::ParseIntList(std::string_view what) {
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, fmt::format("'{{' to start {}", what)));
  std::vector<int64_t> values;
  if (Consume(TokenKind::kRBrace)) return values;
  do {
    ALPA_ASSIGN_OR_RETURN(int64_t value, ParseInt(fmt::format("an integer in {}", what)));
    values.push_back(value);
  } while (Consume(TokenKind::kComma));
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, fmt::format("',' or '}}' in {}", what)));
  return values;
}

Result<std::string> HloParser::ParseName(std::string_view what) {
  if (token_.kind != TokenKind::kName && token_.kind != TokenKind::kIdent) return Expected(what);
  std::string name(token_.text);
  Advance();
  return name;
}

Result<std::string> HloParser::ParseString(std::string_view what) {
  if (token_.kind != TokenKind::kString) return Expected(what);
  std::string value = UnescapeString(token_.text);
  Advance();
  return value;
}

Result<std::string> HloParser::ParseRawValue(std::string_view what) {
  if (token_.kind == TokenKind::kEof || token_.kind == TokenKind::kComma ||
      token_.kind == TokenKind::kRBrace || token_.kind == TokenKind::kRParen) {
    return Expected(what);
  }
  size_t end = 0;
  Result<std::string_view> raw = lexer_.BalancedAt(token_.offset, &end);
  if (!raw.ok()) {
    return ErrorAt(token_.offset, fmt::format("{} in {}", raw.status().message(), what));
  }
  std::string value(*raw);
  ResumeAt(end);
  return value;
}

Result<std::string_view> HloParser::ParseWord(std::string_view what) {
  std::string_view word = lexer_.WordAt(token_.offset);
  if (word.empty()) return Expected(what);
  ResumeAt(token_.offset + word.size());
  return word;
}

}  // namespace alpa::hlo::internal
