// Constant literals. The literal's shape is the instruction's result shape; the text must hold
// exactly that many elements, so an absurd shape cannot make the parser allocate more than the
// text it has actually read.
#include <charconv>
#include <complex>
#include <limits>

#include "hlo/parser_impl.h"

namespace alpa::hlo::internal {
namespace {

// Elements as read, before they are stored in the element type.
struct Elements {
  std::vector<int64_t> ints;  // pred, s*, u* (u64 as its bit pattern)
  std::vector<double> reals;  // floating types
  std::vector<std::complex<double>> complexes;
  size_t size() const { return ints.size() + reals.size() + complexes.size(); }
};

// Inclusive range of an integer type; u64's upper bound is handled by the caller.
std::pair<int64_t, int64_t> IntegerRange(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kS4: return {-8, 7};
    case ir::DType::kS8: return {-128, 127};
    case ir::DType::kS16: return {-32768, 32767};
    case ir::DType::kS32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case ir::DType::kU4: return {0, 15};
    case ir::DType::kU8: return {0, 255};
    case ir::DType::kU16: return {0, 65535};
    case ir::DType::kU32: return {0, std::numeric_limits<uint32_t>::max()};
    case ir::DType::kU64: return {0, std::numeric_limits<int64_t>::max()};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

}  // namespace

Result<ir::Literal> HloParser::ParseLiteral(const ir::Shape& shape) {
  DepthGuard guard(depth_);
  if (!guard.ok()) {
    return ErrorAt(token_.offset,
                   fmt::format("literal nested deeper than {} levels", kMaxNestingDepth));
  }
  if (token_.kind == TokenKind::kLBrace && Peek().kind == TokenKind::kEllipsis) {
    Advance();
    Advance();
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}' after '{...'"));
    return ir::Literal::CreateElided(shape);
  }
  if (shape.IsTuple()) {
    ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLParen, fmt::format("'(' to start a tuple literal "
                                                                "of shape {}", shape.ToString())));
    std::vector<ir::Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      if (i > 0) ALPA_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between tuple elements"));
      ALPA_ASSIGN_OR_RETURN(ir::Literal element, ParseLiteral(shape.tuple_shape(i)));
      elements.push_back(std::move(element));
    }
    ALPA_RETURN_IF_ERROR(Expect(
        TokenKind::kRParen,
        fmt::format("')' after {} tuple elements (shape {})", shape.tuple_size(), shape.ToString())));
    ir::Literal literal = ir::Literal::CreateTuple(std::move(elements));
    return literal;
  }
  if (!shape.IsArray()) {
    return ErrorAt(token_.offset,
                   fmt::format("a constant of shape {} has no value", shape.ToString()));
  }
  return ParseArrayLiteral(shape);
}

Result<ir::Literal> HloParser::ParseArrayLiteral(const ir::Shape& shape) {
  const ir::DType dtype = shape.dtype();
  if (ir::IsFloating(dtype) && ir::DTypeByteSize(dtype) == 1) {
    // ir::Literal has no storage conversion for the 8-bit float types.
    return Status(StatusCode::kUnimplemented,
                  ErrorAt(token_.offset, fmt::format("constants of type {} are not supported, "
                                                     "expected an elided value {{...}}",
                                                     ir::DTypeName(dtype)))
                      .message());
  }
  Elements elements;
  auto parse_element = [&]() -> Status {
    const size_t offset = token_.offset;
    if (dtype == ir::DType::kPred) {
      if (token_.kind == TokenKind::kInt && (token_.text == "0" || token_.text == "1")) {
        elements.ints.push_back(token_.text == "1");
        Advance();
        return Status::Ok();
      }
      ALPA_ASSIGN_OR_RETURN(bool value, ParseBool("true or false for a pred element"));
      elements.ints.push_back(value);
      return Status::Ok();
    }
    if (ir::IsComplex(dtype)) {
      ALPA_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' to start a complex (real, imag)"));
      ALPA_ASSIGN_OR_RETURN(double re, ParseDouble("the real part"));
      ALPA_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between real and imaginary part"));
      ALPA_ASSIGN_OR_RETURN(double im, ParseDouble("the imaginary part"));
      ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the imaginary part"));
      elements.complexes.emplace_back(re, im);
      return Status::Ok();
    }
    if (ir::IsFloating(dtype)) {
      const bool is_nan = token_.kind == TokenKind::kFloat && token_.text.ends_with("nan");
      ALPA_ASSIGN_OR_RETURN(double value,
                            ParseDouble(fmt::format("a number for a {} element", ir::DTypeName(dtype))));
      if (is_nan && token_.kind == TokenKind::kLParen) {
        // `nan(0x7fc00001)`: the payload is not kept (NaNs print as `nan`).
        Advance();
        ALPA_RETURN_IF_ERROR(ParseWord("a NaN payload"));
        ALPA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the NaN payload"));
      }
      elements.reals.push_back(value);
      return Status::Ok();
    }
    if (token_.kind != TokenKind::kInt) {
      return Expected(fmt::format("an integer for a {} element", ir::DTypeName(dtype)));
    }
    std::string_view text = token_.text;
    int64_t value = 0;
    if (dtype == ir::DType::kU64 && !text.starts_with("-")) {
      uint64_t unsigned_value = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), unsigned_value);
      if (ec != std::errc() || ptr != text.data() + text.size()) {
        return ErrorAt(offset, fmt::format("value {} is out of range for u64", text));
      }
      value = static_cast<int64_t>(unsigned_value);
    } else {
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      auto [low, high] = IntegerRange(dtype);
      if (ec != std::errc() || ptr != text.data() + text.size() || value < low || value > high) {
        return ErrorAt(offset, fmt::format("value {} is out of range for {}, expected {}..{}",
                                           text, ir::DTypeName(dtype), low, high));
      }
    }
    elements.ints.push_back(value);
    Advance();
    return Status::Ok();
  };

  const int64_t rank = shape.rank();
  if (rank == 0) {
    ALPA_RETURN_IF_ERROR(parse_element());
  } else {
    // One brace level per dimension; each level must hold exactly dim(d) entries.
    auto parse_level = [&](auto& self, int64_t d) -> Status {
      DepthGuard guard(depth_);
      if (!guard.ok()) {
        return ErrorAt(token_.offset,
                       fmt::format("literal nested deeper than {} levels", kMaxNestingDepth));
      }
      const size_t open_offset = token_.offset;
      ALPA_RETURN_IF_ERROR(Expect(
          TokenKind::kLBrace, fmt::format("'{{' for dimension {} of a {} literal", d,
                                          shape.ToString(false))));
      int64_t count = 0;
      if (token_.kind != TokenKind::kRBrace) {
        do {
          if (count == shape.dim(d)) {
            return ErrorAt(token_.offset,
                           fmt::format("too many elements in dimension {} of a {} literal, "
                                       "expected {}",
                                       d, shape.ToString(false), shape.dim(d)));
          }
          ALPA_RETURN_IF_ERROR(d + 1 == rank ? parse_element() : self(self, d + 1));
          ++count;
        } while (Consume(TokenKind::kComma));
      }
      if (token_.kind != TokenKind::kRBrace) {
        return Expected(fmt::format("',' or '}}' in dimension {} of a {} literal", d,
                                    shape.ToString(false)));
      }
      if (count != shape.dim(d)) {
        return ErrorAt(open_offset,
                       fmt::format("found {} elements in dimension {} of a {} literal, expected {}",
                                   count, d, shape.ToString(false), shape.dim(d)));
      }
      Advance();
      return Status::Ok();
    };
    ALPA_RETURN_IF_ERROR(parse_level(parse_level, 0));
  }

  ir::Literal literal = ir::Literal::CreateZeros(shape);
  ALPA_CHECK(static_cast<int64_t>(elements.size()) == shape.ElementCount(),
             "literal element count");
  for (size_t i = 0; i < elements.ints.size(); ++i) {
    literal.SetInt(static_cast<int64_t>(i), elements.ints[i]);
  }
  for (size_t i = 0; i < elements.reals.size(); ++i) {
    literal.SetDouble(static_cast<int64_t>(i), elements.reals[i]);
  }
  for (size_t i = 0; i < elements.complexes.size(); ++i) {
    literal.SetComplex(static_cast<int64_t>(i), elements.complexes[i]);
  }
  return literal;
}

}  // namespace alpa::hlo::internal
