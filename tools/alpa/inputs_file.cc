#include "tools/alpa/inputs_file.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "hlo/parser.h"
#include "support/file.h"

namespace alpa::tools {
namespace {

using Json = nlohmann::json;

// Appends the scalars of a (possibly nested) JSON array to `leaves`, depth first.
void Flatten(const Json& value, std::vector<const Json*>& leaves) {
  if (!value.is_array()) {
    leaves.push_back(&value);
    return;
  }
  for (const Json& element : value) Flatten(element, leaves);
}

Result<double> ToDouble(const Json& value, const std::string& where) {
  if (value.is_boolean()) return value.get<bool>() ? 1.0 : 0.0;
  if (value.is_number()) return value.get<double>();
  return InvalidArgument("{}: expected a number, found {}", where, value.dump());
}

// The values an element of an integer dtype (or pred) can hold; u64 above 2^63-1 is handled
// apart, as SetInt takes its bits through an int64_t.
std::pair<int64_t, int64_t> IntegerRange(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kPred:
      return {0, 1};
    case ir::DType::kS4:
      return {-8, 7};
    case ir::DType::kS8:
      return {-128, 127};
    case ir::DType::kS16:
      return {-32768, 32767};
    case ir::DType::kS32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case ir::DType::kU4:
      return {0, 15};
    case ir::DType::kU8:
      return {0, 255};
    case ir::DType::kU16:
      return {0, 65535};
    case ir::DType::kU32:
      return {0, std::numeric_limits<uint32_t>::max()};
    case ir::DType::kU64:
      return {0, std::numeric_limits<int64_t>::max()};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// An integer (or boolean) element checked against the dtype's range: storing it would otherwise
// wrap silently (300 in an s8 becomes 44), as the HLO parser refuses for literals.
Result<int64_t> ToInteger(const Json& value, ir::DType dtype, const std::string& where) {
  if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
  if (value.is_number_unsigned()) {
    const uint64_t number = value.get<uint64_t>();
    if (dtype == ir::DType::kU64) return static_cast<int64_t>(number);  // its bits, stored back
    if (number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return InvalidArgument("{}: value {} is out of range for {}", where, number,
                             ir::DTypeName(dtype));
    }
  }
  const int64_t number = value.get<int64_t>();
  auto [low, high] = IntegerRange(dtype);
  if (number < low || number > high) {
    return InvalidArgument("{}: value {} is out of range for {}, expected {}..{}", where, number,
                           ir::DTypeName(dtype), low, high);
  }
  return number;
}

Result<ir::Literal> ArrayFromJson(const Json& json, const ir::Shape& shape,
                                  const std::string& where) {
  if (!json.contains("values")) return InvalidArgument("{}: missing \"values\"", where);
  const std::string values_where = where + ".values";
  ir::Literal literal = ir::Literal::CreateZeros(shape);
  const bool complex = ir::IsComplex(shape.dtype());
  std::vector<const Json*> leaves;
  if (complex) {
    // Each element is one [real, imaginary] pair, so flatten only down to the pairs.
    if (!json["values"].is_array()) return InvalidArgument("{}: expected an array", values_where);
    for (const Json& pair : json["values"]) leaves.push_back(&pair);
  } else {
    Flatten(json["values"], leaves);
  }
  if (static_cast<int64_t>(leaves.size()) != shape.ElementCount()) {
    return InvalidArgument("{}: {} values for shape {}, which has {} elements", values_where,
                           leaves.size(), shape.ToString(false), shape.ElementCount());
  }
  for (int64_t i = 0; i < shape.ElementCount(); ++i) {
    const Json& value = *leaves[static_cast<size_t>(i)];
    const std::string element_where = fmt::format("{}[{}]", values_where, i);
    if (complex) {
      if (!value.is_array() || value.size() != 2) {
        return InvalidArgument("{}: expected [real, imaginary], found {}", element_where,
                               value.dump());
      }
      ALPA_ASSIGN_OR_RETURN(double re, ToDouble(value[0], element_where));
      ALPA_ASSIGN_OR_RETURN(double im, ToDouble(value[1], element_where));
      literal.SetComplex(i, {re, im});
    } else if (ir::IsInteger(shape.dtype()) || shape.dtype() == ir::DType::kPred) {
      if (!value.is_boolean() && !value.is_number_integer()) {
        return InvalidArgument("{}: expected an integer for {}, found {}", element_where,
                               ir::DTypeName(shape.dtype()), value.dump());
      }
      ALPA_ASSIGN_OR_RETURN(int64_t number, ToInteger(value, shape.dtype(), element_where));
      literal.SetInt(i, number);
    } else {
      ALPA_ASSIGN_OR_RETURN(double number, ToDouble(value, element_where));
      literal.SetDouble(i, number);
      // JSON numbers are finite; one that rounds to infinity in the element type is a typo or the
      // wrong dtype, not a value to compute with.
      if (std::isinf(literal.GetDouble(i))) {
        return InvalidArgument("{}: {} is out of range for {}", element_where, value.dump(),
                               ir::DTypeName(shape.dtype()));
      }
    }
  }
  return literal;
}

// One argument for a parameter of shape `expected`.
Result<ir::Literal> ArgumentFromJson(const Json& json, const ir::Shape& expected,
                                     const std::string& where) {
  if (!json.is_object()) return InvalidArgument("{}: expected an object", where);
  if (json.contains("tuple")) {
    if (!expected.IsTuple() || !json["tuple"].is_array() ||
        static_cast<int64_t>(json["tuple"].size()) != expected.tuple_size()) {
      return InvalidArgument("{}: a tuple argument does not match the parameter's shape {}", where,
                             expected.ToString(false));
    }
    std::vector<ir::Literal> elements;
    for (int64_t i = 0; i < expected.tuple_size(); ++i) {
      ALPA_ASSIGN_OR_RETURN(
          ir::Literal element,
          ArgumentFromJson(json["tuple"][static_cast<size_t>(i)], expected.tuple_shape(i),
                           fmt::format("{}.tuple[{}]", where, i)));
      elements.push_back(std::move(element));
    }
    return ir::Literal::CreateTuple(std::move(elements));
  }
  if (!json.contains("shape") || !json["shape"].is_string()) {
    return InvalidArgument("{}: expected \"shape\" (e.g. \"f32[2,3]\") or \"tuple\"", where);
  }
  Result<ir::Shape> shape = hlo::ParseShape(json["shape"].get<std::string>());
  if (!shape.ok()) {
    return InvalidArgument("{}.shape: {}", where, shape.status().message());
  }
  shape->ClearLayouts();
  ir::Shape expected_without_layout = expected;
  expected_without_layout.ClearLayouts();
  if (!(*shape == expected_without_layout)) {
    return InvalidArgument("{}.shape: {} does not match the parameter's shape {}", where,
                           shape->ToString(false), expected.ToString(false));
  }
  return ArrayFromJson(json, *shape, where);
}

}  // namespace

Result<std::vector<ir::Literal>> ReadInputsFile(const std::string& path,
                                                const ir::Computation& entry) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  Json json = Json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return InvalidArgument("{}: not valid JSON", path);
  if (!json.is_object() || !json.contains("arguments") || !json["arguments"].is_array()) {
    return InvalidArgument("{}: expected {{\"arguments\": [...]}} (see alpa eval --help)", path);
  }
  const std::vector<ir::Instruction*> parameters = entry.parameters();
  if (json["arguments"].size() != parameters.size()) {
    return InvalidArgument("{}: {} arguments, but the entry %{} takes {} parameters", path,
                           json["arguments"].size(), entry.name(), parameters.size());
  }
  std::vector<ir::Literal> arguments;
  for (size_t i = 0; i < parameters.size(); ++i) {
    Result<ir::Literal> argument = ArgumentFromJson(json["arguments"][i], parameters[i]->shape(),
                                                    fmt::format("arguments[{}]", i));
    if (!argument.ok()) {
      return InvalidArgument("{}: {} (parameter {}, %{})", path, argument.status().message(), i,
                             parameters[i]->name());
    }
    arguments.push_back(std::move(argument).value());
  }
  return arguments;
}

}  // namespace alpa::tools
