#include "support/json_text.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace alpa {

void AppendNewKey(Json& object, std::string key, Json value) {
  // ordered_map is a vector of (key, value) pairs underneath; append to it directly.
  using Entries = std::vector<Json::object_t::value_type>;
  static_cast<Entries&>(object.get_ref<Json::object_t&>())
      .emplace_back(std::move(key), std::move(value));
}

Result<Json> ParseJsonText(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: what";
    // it becomes "SOURCE:3:5: malformed JSON: what".
    std::string what = e.what();
    int line = 0;
    int column = 0;
    int consumed = 0;
    const size_t at = what.find("at line ");
    if (at != std::string::npos &&
        std::sscanf(what.c_str() + at, "at line %d, column %d: %n", &line, &column, &consumed) ==
            2 &&
        consumed > 0) {
      return InvalidArgument("{}:{}:{}: malformed JSON: {}", source, line, column,
                             what.substr(at + consumed));
    }
    const size_t start = what.find("] ");
    if (start != std::string::npos) what = what.substr(start + 2);
    return InvalidArgument("{}: malformed JSON: {}", source, what);
  } catch (const Json::out_of_range& e) {
    // A number beyond a double's range ("1e400"): the parser names the number but not where.
    std::string what = e.what();
    const size_t start = what.find("] ");
    if (start != std::string::npos) what = what.substr(start + 2);
    return InvalidArgument("{}: malformed JSON: {}", source, what);
  }
}

std::string JsonPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

Status CheckJsonObject(const Json& object, const std::string& path,
                       std::initializer_list<std::string_view> allowed, std::string_view whole) {
  if (!object.is_object()) {
    return InvalidArgument("{}: must be an object, found {}", path.empty() ? whole : path,
                           object.type_name());
  }
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string names;
    for (std::string_view name : allowed) {
      names += fmt::format("{}'{}'", names.empty() ? "" : ", ", name);
    }
    return InvalidArgument("{}: unknown key; expected {}", JsonPath(path, key), names);
  }
  return Status::Ok();
}

Result<const Json*> JsonField(const Json& object, const std::string& path, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (path.empty()) return InvalidArgument("missing key '{}'", key);
    return InvalidArgument("{}: missing key '{}'", path, key);
  }
  return &*it;
}

Result<double> JsonNumber(const Json& object, const std::string& path, const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* value, JsonField(object, path, key));
  if (!value->is_number()) {
    return InvalidArgument("{}: must be a number, found {}", JsonPath(path, key),
                           value->type_name());
  }
  return value->get<double>();
}

Result<int64_t> JsonInteger(const Json& object, const std::string& path, const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* value, JsonField(object, path, key));
  if (value->is_number_unsigned() && value->get<uint64_t>() > uint64_t{INT64_MAX}) {
    return InvalidArgument("{}: {} is too large", JsonPath(path, key), value->dump());
  }
  if (!value->is_number_integer()) {
    return InvalidArgument("{}: must be an integer, found {}", JsonPath(path, key),
                           value->is_number() ? value->dump() : value->type_name());
  }
  return value->get<int64_t>();
}

Result<std::string> JsonString(const Json& object, const std::string& path,
                               const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* value, JsonField(object, path, key));
  if (!value->is_string()) {
    return InvalidArgument("{}: must be a string, found {}", JsonPath(path, key),
                           value->type_name());
  }
  return value->get<std::string>();
}

Result<bool> JsonBool(const Json& object, const std::string& path, const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* value, JsonField(object, path, key));
  if (!value->is_boolean()) {
    return InvalidArgument("{}: must be true or false, found {}", JsonPath(path, key),
                           value->type_name());
  }
  return value->get<bool>();
}

}  // namespace alpa
