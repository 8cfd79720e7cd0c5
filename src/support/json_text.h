// Parsing JSON text with errors in the project's form: "SOURCE:LINE:COLUMN: malformed JSON: what".
#ifndef ALPA_SUPPORT_JSON_TEXT_H_
#define ALPA_SUPPORT_JSON_TEXT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "support/status.h"

namespace alpa {

// `source` names the text in messages (a file path). Keys keep their order.
Result<nlohmann::ordered_json> ParseJsonText(std::string_view text, const std::string& source);

}  // namespace alpa

#endif  // ALPA_SUPPORT_JSON_TEXT_H_
