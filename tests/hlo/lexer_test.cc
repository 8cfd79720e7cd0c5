#include "hlo/lexer.h"

#include <gtest/gtest.h>

#include <vector>

namespace alpa::hlo {
namespace {

struct Lexed {
  TokenKind kind;
  std::string text;
  bool operator==(const Lexed&) const = default;
};

std::vector<Lexed> LexAll(std::string_view text) {
  Lexer lexer(text);
  std::vector<Lexed> tokens;
  for (Token token = lexer.Next(); token.kind != TokenKind::kEof; token = lexer.Next()) {
    tokens.push_back({token.kind, std::string(token.text)});
    if (token.kind == TokenKind::kError) break;
  }
  return tokens;
}

TEST(LexerTest, InstructionLine) {
  using K = TokenKind;
  std::vector<Lexed> expected = {
      {K::kIdent, "ROOT"},    {K::kName, "get-tuple-element.5"},
      {K::kEqual, "="},       {K::kIdent, "f32"},
      {K::kLSquare, "["},     {K::kInt, "8"},
      {K::kComma, ","},       {K::kInt, "16"},
      {K::kRSquare, "]"},     {K::kLBrace, "{"},
      {K::kInt, "1"},         {K::kComma, ","},
      {K::kInt, "0"},         {K::kRBrace, "}"},
      {K::kIdent, "get-tuple-element"}, {K::kLParen, "("},
      {K::kIdent, "t"},       {K::kRParen, ")"},
      {K::kComma, ","},       {K::kIdent, "index"},
      {K::kEqual, "="},       {K::kInt, "0"},
  };
  EXPECT_EQ(LexAll("ROOT %get-tuple-element.5 = f32[8,16]{1,0} get-tuple-element(t), index=0"),
            expected);
}

TEST(LexerTest, NumbersAndSpecials) {
  using K = TokenKind;
  std::vector<Lexed> expected = {{K::kInt, "-1"},     {K::kFloat, "1e-05"},
                                 {K::kFloat, "-3.4028235e+38"}, {K::kFloat, "0.1001"},
                                 {K::kFloat, "inf"},  {K::kFloat, "-inf"},
                                 {K::kFloat, "nan"},  {K::kFloat, "-nan"},
                                 {K::kIdent, "true"}, {K::kIdent, "infinity"}};
  EXPECT_EQ(LexAll("-1 1e-05 -3.4028235e+38 0.1001 inf -inf nan -nan true infinity"), expected);
}

TEST(LexerTest, PunctuationCommentsAndStrings) {
  using K = TokenKind;
  std::vector<Lexed> expected = {
      {K::kLParen, "("},  {K::kRParen, ")"},   {K::kArrow, "->"},
      {K::kLeq, "<="},    {K::kLBrace, "{"},   {K::kEllipsis, "..."},
      {K::kRBrace, "}"},  {K::kColon, ":"},    {K::kString, R"("a\"b")"},
      {K::kName, "x.1"},
  };
  EXPECT_EQ(LexAll("() /*index=5*/ -> <= // CHECK: ignored\n {...} : \"a\\\"b\" %x.1"), expected);
  EXPECT_EQ(UnescapeString(R"("a\"b\\c\n")"), "a\"b\\c\n");
  EXPECT_EQ(EscapeString("a\"b\\c\n"), R"("a\"b\\c\n")");
}

TEST(LexerTest, ErrorTokens) {
  Lexer unterminated("\"abc");
  Token token = unterminated.Next();
  EXPECT_EQ(token.kind, TokenKind::kError);
  EXPECT_EQ(token.error, "unterminated string");
  Lexer comment("a /* never closed");
  EXPECT_EQ(comment.Next().kind, TokenKind::kIdent);
  token = comment.Next();
  EXPECT_EQ(token.kind, TokenKind::kError);
  EXPECT_EQ(token.offset, 2u);
  EXPECT_EQ(LexAll("@").front().kind, TokenKind::kError);
  EXPECT_EQ(LexAll("% x").front().kind, TokenKind::kError);
}

TEST(LexerTest, RawWordsAndBalancedValues) {
  Lexer lexer("padding=0_0x1_-2_1, dim_labels=b01f_01io->b01f}");
  EXPECT_EQ(lexer.WordAt(8), "0_0x1_-2_1");
  EXPECT_EQ(lexer.WordAt(31), "b01f_01io->b01f");

  std::string_view text = R"(x={"a": "}", "b": [1, {2}]}, next=1)";
  Lexer json(text);
  size_t end = 0;
  auto raw = json.BalancedAt(2, &end);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, R"({"a": "}", "b": [1, {2}]})");
  EXPECT_EQ(text.substr(end, 2), ", ");

  Lexer word("api_version=API_VERSION_TYPED_FFI  \n%next");
  auto bare = word.BalancedAt(12, &end);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(*bare, "API_VERSION_TYPED_FFI");

  Lexer commented("{replicated} // note\n");
  auto before_comment = commented.BalancedAt(0, &end);
  ASSERT_TRUE(before_comment.ok());
  EXPECT_EQ(*before_comment, "{replicated}");
  Lexer line_comment_inside("{a, // note\n b}");
  EXPECT_FALSE(line_comment_inside.BalancedAt(0, &end).ok());

  Lexer unbalanced("{{1}, (2]}");
  auto bad = unbalanced.BalancedAt(0, &end);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "mismatched ']', expected ')'");
}

}  // namespace
}  // namespace alpa::hlo
