// Reading the text of an IOPDDL problem file (the format is in iopddl_json.h) into its fields,
// checking the document's structure on the way: keys, types, nesting. iopddl_json.cc turns the
// fields into a Request.
//
// The contest's files are large (instance A: 93 MB of JSON, 6 million integers), so no JSON
// document is built. The text goes through a schema-checking event handler, driven first by a
// small scanner for the JSON the contest's files use (objects, arrays, integers, strings without
// escapes), several times faster than a general parser. When the scanner meets anything else
// (an escape, a float, a syntax error) or the handler rejects the document, the text is read again
// by nlohmann::json's SAX parser, so every error is found and worded by the general parser: the
// JSON path of a structural error ("problem.nodes.costs[3][1]: must be an integer, found
// string"), the line and column of a syntax error.
#ifndef ALPA_SOLVER_IOPDDL_READER_H_
#define ALPA_SOLVER_IOPDDL_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace alpa::solver {

// The fields of a problem file as written; absent optional keys are empty.
struct IopddlDocument {
  using Matrix = std::vector<std::vector<int64_t>>;

  std::string name;
  std::optional<int64_t> usage_limit;
  Matrix intervals, node_costs, usages;  // problem.nodes.*
  Matrix edge_nodes, edge_costs;         // problem.edges.*
};

// Errors start with `source`.
Result<IopddlDocument> ReadIopddlDocument(std::string_view text, const std::string& source);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_IOPDDL_READER_H_
