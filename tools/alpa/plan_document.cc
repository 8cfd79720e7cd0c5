#include "tools/alpa/plan_document.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace alpa::tools::plan_document {

// `object[key]`, or null when absent: hand-written and older documents may lack any field.
const Json& Field(const Json& object, const char* key) {
  static const Json kMissing;
  if (!object.is_object()) return kMissing;
  const auto it = object.find(key);
  return it == object.end() ? kMissing : *it;
}

std::optional<double> Number(const Json& object, const char* key) {
  const Json& value = Field(object, key);
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

std::string Text(const Json& object, const char* key) {
  const Json& value = Field(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}

// The array `object[key]`, empty when absent or not an array.
const Json& Items(const Json& object, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& value = Field(object, key);
  return value.is_array() ? value : kEmpty;
}

// "a..b" (or "a") from the stage's [first, last] layers.
std::string LayerRange(const Json& stage) {
  const Json& layers = Items(stage, "layers");
  if (layers.size() != 2 || !layers[0].is_number() || !layers[1].is_number()) return "-";
  const auto first = layers[0].get<int64_t>(), last = layers[1].get<int64_t>();
  return first == last ? fmt::format("{}", first) : fmt::format("{}..{}", first, last);
}

std::vector<int64_t> Integers(const Json& object, const char* key) {
  std::vector<int64_t> integers;
  for (const Json& item : Items(object, key)) {
    if (item.is_number_integer()) integers.push_back(item.get<int64_t>());
  }
  return integers;
}

std::vector<int64_t> Devices(const Json& stage) { return Integers(stage, "devices"); }

// "4..7" for consecutive ids (the usual sub-mesh), else the list.
std::string DeviceRange(const std::vector<int64_t>& devices) {
  if (devices.empty()) return "-";
  bool consecutive = true;
  for (size_t i = 1; i < devices.size(); ++i) consecutive &= devices[i] == devices[i - 1] + 1;
  if (consecutive) {
    return devices.size() == 1 ? fmt::format("{}", devices[0])
                               : fmt::format("{}..{}", devices.front(), devices.back());
  }
  return fmt::format("{}", fmt::join(devices, ", "));
}

std::string ChunksNote(int64_t num_chunks, int64_t num_stages) {
  if (num_chunks <= 1) return "";
  return fmt::format(" ({} chunks per device: stage j runs on stage j % {}'s devices)", num_chunks,
                     num_stages / num_chunks);
}

}  // namespace alpa::tools::plan_document
