#include "support/json_text.h"

#include <cstdio>

namespace alpa {

Result<nlohmann::ordered_json> ParseJsonText(std::string_view text, const std::string& source) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::ordered_json::parse_error& e) {
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
  }
}

}  // namespace alpa
