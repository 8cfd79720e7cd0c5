#include "ir/attributes.h"

#include <array>

namespace alpa::ir {
namespace {

template <typename Enum, size_t N>
std::optional<Enum> Find(const std::array<std::pair<Enum, std::string_view>, N>& table,
                         std::string_view text) {
  for (const auto& [value, name] : table) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
std::string_view Name(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "";
}

constexpr std::array<std::pair<ComparisonDirection, std::string_view>, 6> kDirections = {{
    {ComparisonDirection::kEq, "EQ"},
    {ComparisonDirection::kNe, "NE"},
    {ComparisonDirection::kLt, "LT"},
    {ComparisonDirection::kLe, "LE"},
    {ComparisonDirection::kGt, "GT"},
    {ComparisonDirection::kGe, "GE"},
}};

constexpr std::array<std::pair<ComparisonType, std::string_view>, 4> kComparisonTypes = {{
    {ComparisonType::kFloat, "FLOAT"},
    {ComparisonType::kTotalOrder, "TOTALORDER"},
    {ComparisonType::kSigned, "SIGNED"},
    {ComparisonType::kUnsigned, "UNSIGNED"},
}};

constexpr std::array<std::pair<FusionKind, std::string_view>, 4> kFusionKinds = {{
    {FusionKind::kLoop, "kLoop"},
    {FusionKind::kInput, "kInput"},
    {FusionKind::kOutput, "kOutput"},
    {FusionKind::kCustom, "kCustom"},
}};

}  // namespace

std::string_view ComparisonDirectionName(ComparisonDirection direction) {
  return Name(kDirections, direction);
}
std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view text) {
  return Find(kDirections, text);
}
std::string_view ComparisonTypeName(ComparisonType type) { return Name(kComparisonTypes, type); }
std::optional<ComparisonType> ParseComparisonType(std::string_view text) {
  return Find(kComparisonTypes, text);
}
std::string_view FusionKindName(FusionKind kind) { return Name(kFusionKinds, kind); }
std::optional<FusionKind> ParseFusionKind(std::string_view text) {
  return Find(kFusionKinds, text);
}

std::string MetadataField(const Attributes& attributes, std::string_view key) {
  for (const auto& [field, value] : attributes.metadata) {
    if (field != key) continue;
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      return value.substr(1, value.size() - 2);
    }
    return value;
  }
  return "";
}

std::string MetadataOpName(const Attributes& attributes) {
  return MetadataField(attributes, "op_name");
}

}  // namespace alpa::ir
