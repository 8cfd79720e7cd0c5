// The IOPDDL contest's problem files (shared/iopddl/README.md, github.com/google/iopddl): reading
// them into a Request and writing a Request back, e.g. to dump a problem of our planner.
//
//   {"problem": {"name": "...",
//                "nodes": {"intervals": [[start, end], ...],      one per node, half-open
//                          "costs":     [[c per strategy], ...],
//                          "usages":    [[u per strategy], ...]},
//                "edges": {"nodes": [[u, v], ...],
//                          "costs": [[c, ...], ...]},              row-major |S(u)| x |S(v)|
//                "usage_limit": L}}                               absent: unlimited
//
// "name", "edges" and "usage_limit" may be left out. Unknown keys are errors (a misspelt key would
// otherwise drop a constraint silently).
//
// The contest's files are large (instance A: 93 MB of JSON, 6 million edge costs): the text is
// read without building a JSON document (iopddl_reader.h).
#ifndef ALPA_SOLVER_IOPDDL_JSON_H_
#define ALPA_SOLVER_IOPDDL_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "solver/request.h"
#include "support/status.h"

namespace alpa::solver {

// Parses and validates (ValidateRequest) a problem. Errors start with `source` and name the JSON
// path ("B.json: problem.nodes.costs[3][1]: must be an integer, found string"), the line and
// column of a syntax error, or the node or edge a validation error is about.
Result<Request> ParseIopddlJson(std::string_view text, const std::string& source);

// Reads the file at `path` (plain files are mapped, .gz ones inflated: support/file.h) and
// parses it, once CheckMemoryToSolve with AvailableMemoryBytes (support/system_memory.h) says
// the problem fits in the memory left.
Result<Request> LoadIopddlFile(const std::string& path);

// The memory solving a problem takes beyond its text: 8 bytes per number of the file (the
// Request holds every cost and usage; the solver's working form stores equal edge matrices once)
// and the program's own. Measured on problems of bench/solver, 1.6 and 1.8 GB of text mapped:
// 778 and 840 MB of the process's own memory at the peak, against 814 and 889 MB estimated.
// Numbers are counted as commas plus one. An error naming `source`, the need and what is
// available when it does not fit; OK when it does or nothing is known.
inline constexpr int64_t kBytesPerNumber = 8;
inline constexpr int64_t kSolverBaseBytes = int64_t{128} << 20;
Status CheckMemoryToSolve(const std::string& source, std::string_view text,
                          std::optional<int64_t> available_bytes);

// The file form of `request`: compact, one line, ending in a newline.
// ParseIopddlJson(IopddlJson(r)) == r for every valid r.
std::string IopddlJson(const Request& request);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_IOPDDL_JSON_H_
