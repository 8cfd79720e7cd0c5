// JSON files: parsing, and reading fields with errors that name the place, in the project's form:
//   "SOURCE:LINE:COLUMN: malformed JSON: what"         (syntax)
//   "hosts[1].devices: must be an integer, found 1.5"  (a field; the caller adds the file name)
// Paths join keys with '.' and the caller spells array elements "name[i]".
#ifndef ALPA_SUPPORT_JSON_TEXT_H_
#define ALPA_SUPPORT_JSON_TEXT_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "support/status.h"

namespace alpa {

using Json = nlohmann::ordered_json;

// `source` names the text in messages (a file path). Keys keep their order.
Result<Json> ParseJsonText(std::string_view text, const std::string& source);

// "path.key", or "key" at the top (empty path).
std::string JsonPath(const std::string& path, std::string_view key);

// `object` (at `path`; `whole` names it when the path is empty, e.g. "the cluster") must be an
// object with no keys beyond `allowed`: an unknown key is an error listing the expected ones.
Status CheckJsonObject(const Json& object, const std::string& path,
                       std::initializer_list<std::string_view> allowed, std::string_view whole);

// Appends `key`: `value` to `object` without looking for `key` first, which the caller
// guarantees is not there (instruction names of one computation). An ordered object's operator[]
// searches its keys one by one, so filling one with n keys that way takes n^2 / 2 comparisons:
// seconds for the 20,000 instructions of a 1.4B GPT step.
void AppendNewKey(Json& object, std::string key, Json value);

// The value of `key` in `object`; missing: an error naming the path and the key.
Result<const Json*> JsonField(const Json& object, const std::string& path, const std::string& key);
Result<double> JsonNumber(const Json& object, const std::string& path, const std::string& key);
Result<int64_t> JsonInteger(const Json& object, const std::string& path, const std::string& key);
Result<std::string> JsonString(const Json& object, const std::string& path, const std::string& key);
Result<bool> JsonBool(const Json& object, const std::string& path, const std::string& key);

}  // namespace alpa

#endif  // ALPA_SUPPORT_JSON_TEXT_H_
