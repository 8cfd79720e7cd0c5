// Shapes: `f32[8,16]{1,0}`, `f32[<=10]`, `s64[]{:T(128)}`, `(f32[], (s32[4]))`, `token[]`.
#include <cctype>

#include "hlo/parser_impl.h"

namespace alpa::hlo::internal {

bool HloParser::AtShapeStart() {
  if (token_.kind == TokenKind::kLParen) return true;
  if (token_.kind != TokenKind::kIdent || !ir::ParseDType(token_.text).has_value()) return false;
  std::string_view text = lexer_.text();
  return lexer_.position() < text.size() && text[lexer_.position()] == '[';
}

Result<ir::Shape> HloParser::ParseShape() {
  DepthGuard guard(depth_);
  if (!guard.ok()) {
    return ErrorAt(token_.offset, fmt::format("shape nested deeper than {} levels", kMaxNestingDepth));
  }
  if (Consume(TokenKind::kLParen)) {
    std::vector<ir::Shape> elements;
    if (!Consume(TokenKind::kRParen)) {
      do {
        ALPA_ASSIGN_OR_RETURN(ir::Shape element, ParseShape());
        elements.push_back(std::move(element));
      } while (Consume(TokenKind::kComma));
      ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in a tuple shape"));
    }
    return ir::Shape::Tuple(std::move(elements));
  }
  if (token_.kind != TokenKind::kIdent) return Expected("a shape such as f32[8,16] or (f32[], s32[])");
  std::optional<ir::DType> dtype = ir::ParseDType(token_.text);
  if (!dtype.has_value()) {
    return ErrorAt(token_.offset,
                   fmt::format("unknown element type '{}', expected one of pred, s8..s64, u8..u64, "
                               "f16, bf16, f32, f64, c64, c128, f8*, token, opaque",
                               token_.text));
  }
  const size_t shape_offset = token_.offset;
  Advance();
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' after the element type"));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  if (!Consume(TokenKind::kRSquare)) {
    do {
      bool is_dynamic = Consume(TokenKind::kLeq);
      if (!is_dynamic && token_.kind == TokenKind::kError && token_.text == "?") {
        return Status(StatusCode::kUnimplemented,
                      ErrorAt(token_.offset, "unbounded dynamic dimension '?' is not supported, "
                                             "expected a size or a bound '<=N'")
                          .message());
      }
      const size_t dim_offset = token_.offset;
      ALPA_ASSIGN_OR_RETURN(int64_t dim, ParseInt("a dimension size"));
      if (dim < 0) {
        return ErrorAt(dim_offset, fmt::format("dimension size {} is negative, expected a size "
                                               ">= 0", dim));
      }
      dims.push_back(dim);
      dynamic.push_back(is_dynamic);
    } while (Consume(TokenKind::kComma));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in the dimensions"));
  }
  int64_t elements = 1;
  for (int64_t dim : dims) {
    if (__builtin_mul_overflow(elements, dim, &elements)) {
      return ErrorAt(shape_offset, "shape has more than 2^63 elements, expected a smaller shape");
    }
  }
  ir::Shape shape = ir::Shape::Array(*dtype, std::move(dims));
  for (size_t i = 0; i < dynamic.size(); ++i) {
    if (dynamic[i]) shape.set_dynamic_dim(static_cast<int64_t>(i), true);
  }
  // A layout is written right after ']' and holds digits, ':' or nothing (`f32[2]{0}`,
  // `f32[]{:T(128)}`); a '{' after a space starts a computation body (`-> f32[] {`).
  std::string_view text = lexer_.text();
  const size_t brace = token_.offset;
  if (token_.kind == TokenKind::kLBrace && brace > 0 && text[brace - 1] == ']' &&
      brace + 1 < text.size() &&
      (std::isdigit(static_cast<unsigned char>(text[brace + 1])) || text[brace + 1] == ':' ||
       text[brace + 1] == '}')) {
    ALPA_ASSIGN_OR_RETURN(ir::Layout layout, ParseLayout());
    shape.set_layout(std::move(layout));
  }
  return shape;
}

Result<ir::Layout> HloParser::ParseLayout() {
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to start a layout"));
  ir::Layout layout;
  if (token_.kind == TokenKind::kInt) {
    do {
      ALPA_ASSIGN_OR_RETURN(int64_t dim, ParseInt("a dimension number in the layout"));
      layout.minor_to_major.push_back(dim);
    } while (Consume(TokenKind::kComma));
  }
  if (token_.kind == TokenKind::kColon) {
    // Tiling, element size, memory space, ...: kept verbatim up to the closing brace.
    std::string_view text = lexer_.text();
    const size_t start = token_.offset + 1;
    size_t p = start;
    int depth = 0;
    while (p < text.size() && text[p] != '\n' && !(depth == 0 && text[p] == '}')) {
      if (text[p] == '(' || text[p] == '[') ++depth;
      if ((text[p] == ')' || text[p] == ']') && --depth < 0) break;
      ++p;
    }
    if (p >= text.size() || text[p] != '}') {
      return ErrorAt(p, "unterminated layout, expected '}'");
    }
    layout.extra = std::string(text.substr(start, p - start));
    ResumeAt(p);
  }
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "',' or '}' in the layout"));
  return layout;
}

Result<ir::ProgramShape> HloParser::ParseProgramShape() {
  ir::ProgramShape program_shape;
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' to start the parameter shapes"));
  if (!Consume(TokenKind::kRParen)) {
    do {
      ALPA_ASSIGN_OR_RETURN(ir::Shape shape, ParseShape());
      program_shape.parameters.push_back(std::move(shape));
    } while (Consume(TokenKind::kComma));
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' after the parameter shapes"));
  }
  ALPA_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' before the result shape"));
  ALPA_ASSIGN_OR_RETURN(program_shape.result, ParseShape());
  return program_shape;
}

Result<ir::Shape> HloParser::ParseShapeOnly() {
  ALPA_ASSIGN_OR_RETURN(ir::Shape shape, ParseShape());
  if (token_.kind != TokenKind::kEof) return Expected("end of input after the shape");
  return shape;
}

}  // namespace alpa::hlo::internal
