// IOPDDL files: what the reader takes from the text, the round trip through the writer, and an
// error naming the JSON path (or line and column) for every way a file can be wrong.
#include "solver/iopddl_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "support/system_memory.h"
#include "tests/solver/test_problems.h"

namespace alpa::solver {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kSmall[] = R"({"problem": {
  "name": "small",
  "nodes": {"intervals": [[0, 2], [1, 1]], "costs": [[1, 2], [3]], "usages": [[4, 5], [6]]},
  "edges": {"nodes": [[0, 1]], "costs": [[7, 1000000000000000000]]},
  "usage_limit": 9}})";

TEST(IopddlJson, ReadsEveryField) {
  Result<Request> request = ParseIopddlJson(kSmall, "small.json");
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->name, "small");
  ASSERT_EQ(request->nodes.size(), 2u);
  EXPECT_EQ(request->nodes[0].interval, (Interval{0, 2}));
  EXPECT_TRUE(request->nodes[1].interval.empty());
  EXPECT_EQ(request->nodes[0].costs, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(request->nodes[1].usages, (std::vector<int64_t>{6}));
  ASSERT_EQ(request->edges.size(), 1u);
  EXPECT_EQ(request->edges[0].from, 0);
  EXPECT_EQ(request->edges[0].to, 1);
  EXPECT_EQ(request->edges[0].costs, (std::vector<int64_t>{7, kForbiddenCost}));
  EXPECT_EQ(request->usage_limit, 9);
}

TEST(IopddlJson, OptionalKeys) {
  Result<Request> request = ParseIopddlJson(
      R"({"problem": {"nodes": {"intervals": [[0, 1]], "costs": [[1]], "usages": [[1]]}}})", "x");
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->name, "");
  EXPECT_TRUE(request->edges.empty());
  EXPECT_FALSE(request->usage_limit.has_value());
}

TEST(IopddlJson, RoundTrip) {
  Result<Request> small = ParseIopddlJson(kSmall, "small.json");
  ASSERT_TRUE(small.ok());
  std::vector<Request> requests = {*small, Request{}};
  for (uint64_t seed = 0; seed < 5; ++seed) {
    requests.push_back(testing::RandomRequest(seed, 6, 4, 0.1));
  }
  requests[2].name = "quote \" backslash \\ newline \n unicode \xc3\xa9";
  requests[3].usage_limit.reset();
  for (const Request& request : requests) {
    const std::string text = IopddlJson(request);
    EXPECT_EQ(text.back(), '\n');
    Result<Request> back = ParseIopddlJson(text, "round-trip");
    ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
    EXPECT_EQ(*back, request) << text;
  }
}

TEST(IopddlJson, LoadsTheVendoredFile) {
  Result<Request> request = LoadIopddlFile(std::string(ALPA_TESTDATA_DIR) + "/iopddl/tiny.json");
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->name, "tiny");
  EXPECT_EQ(request->nodes.size(), 3u);
  EXPECT_EQ(request->edges.size(), 2u);
  EXPECT_EQ(request->usage_limit, 9);
}

TEST(IopddlJson, MissingFileNamesThePath) {
  Result<Request> request = LoadIopddlFile("/nonexistent/problem.json");
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(request.status().message(), StartsWith("/nonexistent/problem.json: "));
}

TEST(IopddlJson, AProblemTooLargeForMemorySaysHowMuchItNeeds) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  // 2^20 numbers: 8 MiB of them, plus the program's 128 MiB.
  std::string text = "[0";
  for (int i = 1; i < (1 << 20); ++i) text += ",0";
  text += "]";
  EXPECT_TRUE(CheckMemoryToSolve("p.json", text, 136 * kMiB).ok());
  EXPECT_TRUE(CheckMemoryToSolve("p.json", text, std::nullopt).ok());  // nothing known
  const Status refused = CheckMemoryToSolve("p.json", text, 100 * kMiB);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(),
            "p.json: solving this problem needs about 136 MiB of memory (1048576 numbers of 8 "
            "bytes, plus the program), and only 100 MiB is available; free memory, or solve it on "
            "a machine with at least 36.0 MiB more");
}

TEST(IopddlJson, LoadingChecksTheMemoryThisMachineHas) {
  // Whatever this machine has, the vendored problem fits; the check reads a real figure here.
  ASSERT_TRUE(AvailableMemoryBytes().has_value()) << "Linux reports MemAvailable";
  EXPECT_GT(*AvailableMemoryBytes(), 0);
  EXPECT_TRUE(LoadIopddlFile(std::string(ALPA_TESTDATA_DIR) + "/iopddl/tiny.json").ok());
}

std::string ErrorOf(const std::string& text) {
  Result<Request> request = ParseIopddlJson(text, "p.json");
  EXPECT_FALSE(request.ok()) << text;
  if (request.ok()) return "";
  EXPECT_EQ(request.status().code(), StatusCode::kInvalidArgument);
  return request.status().message();
}

// kSmall with `from` replaced by `to`.
std::string Small(const std::string& from, const std::string& to) {
  std::string text = kSmall;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(IopddlJson, SyntaxErrorsNameLineAndColumn) {
  const std::string trailing_comma = "{\"problem\": {\n  \"nodes\": {\"costs\": [[1,]]}}}";
  EXPECT_THAT(ErrorOf(trailing_comma), StartsWith("p.json:2:"));
  EXPECT_THAT(ErrorOf(trailing_comma), HasSubstr("malformed JSON"));
  EXPECT_THAT(ErrorOf(""), StartsWith("p.json:1:1: malformed JSON"));
  EXPECT_THAT(ErrorOf(std::string(kSmall) + " x"), StartsWith("p.json:5:"));
}

TEST(IopddlJson, StructureErrorsNameThePath) {
  EXPECT_EQ(ErrorOf("[]"), "p.json: the problem file must be an object, found array");
  EXPECT_EQ(ErrorOf("{}"), "p.json: missing key 'problem'");
  EXPECT_EQ(ErrorOf(R"({"problem": 1})"), "p.json: problem: must be an object, found number");
  EXPECT_EQ(ErrorOf(Small("\"usage_limit\"", "\"limit\"")),
            "p.json: problem.limit: unknown key; expected 'name', 'nodes', 'edges', "
            "'usage_limit'");
  EXPECT_EQ(ErrorOf(Small(", \"usages\": [[4, 5], [6]]", "")),
            "p.json: problem.nodes: missing key 'usages'");
  EXPECT_EQ(ErrorOf(Small("\"name\": \"small\",", "\"name\": \"a\", \"name\": \"b\",")),
            "p.json: problem.name: duplicate key");
  EXPECT_EQ(ErrorOf(Small("\"small\"", "3")),
            "p.json: problem.name: must be a string, found number");
  EXPECT_EQ(ErrorOf(Small("9}}", "\"9\"}}")),
            "p.json: problem.usage_limit: must be an integer, found string");
  EXPECT_EQ(ErrorOf(Small("9}}", "9.5}}")),
            "p.json: problem.usage_limit: must be an integer, found 9.5");
  EXPECT_EQ(ErrorOf(Small("[[1, 2], [3]]", "[[1, 2], [3, \"x\"]]")),
            "p.json: problem.nodes.costs[1][1]: must be an integer, found string");
  EXPECT_EQ(ErrorOf(Small("[[1, 2], [3]]", "[[1, 2], 3]")),
            "p.json: problem.nodes.costs[1]: must be an array of integers, found number");
  EXPECT_EQ(ErrorOf(Small("[[1, 2], [3]]", "{}")),
            "p.json: problem.nodes.costs: must be an array of arrays of integers, found object");
  EXPECT_EQ(ErrorOf(Small("[[7, 1000000000000000000]]", "[[7, 18446744073709551615]]")),
            "p.json: problem.edges.costs[0][1]: 18446744073709551615 is too large");
  EXPECT_EQ(ErrorOf(Small("[[7, 1000000000000000000]]", "[[7, null]]")),
            "p.json: problem.edges.costs[0][1]: must be an integer, found null");
  EXPECT_EQ(ErrorOf(Small("[[7, 1000000000000000000]]", "[[7, true]]")),
            "p.json: problem.edges.costs[0][1]: must be an integer, found boolean");
}

TEST(IopddlJson, ShapeErrorsNameThePath) {
  EXPECT_EQ(ErrorOf(Small("[[0, 2], [1, 1]]", "[[0, 2, 3], [1, 1]]")),
            "p.json: problem.nodes.intervals[0]: must be [start, end], found 3 values");
  EXPECT_EQ(ErrorOf(Small("[[0, 2], [1, 1]]", "[[0, 2]]")),
            "p.json: problem.nodes: 1 intervals, 2 costs and 2 usages; give one of each per node");
  EXPECT_EQ(ErrorOf(Small("[[0, 1]]", "[[0]]")),
            "p.json: problem.edges.nodes[0]: must be [from, to], found 1 values");
  EXPECT_EQ(ErrorOf(Small("[[0, 1]]", "[[0, 1], [1, 0]]")),
            "p.json: problem.edges: 2 nodes and 1 costs; give one of each per edge");
}

TEST(IopddlJson, ValidationErrorsNameTheNodeOrEdge) {
  EXPECT_EQ(ErrorOf(Small("[[0, 1]]", "[[0, 5]]")),
            "p.json: edge 0: node 5 does not exist (the problem has 2 nodes)");
  EXPECT_EQ(ErrorOf(Small("[[4, 5], [6]]", "[[4, 5], [6, 7]]")),
            "p.json: node 1: 1 costs but 2 usages; give one of each per strategy");
  EXPECT_EQ(ErrorOf(Small("[[7, 1000000000000000000]]", "[[7, -1]]")),
            "p.json: edge 0 (0 -> 1): cost [1][0] is -1; costs must be >= 0");  // 2 x 1
}

}  // namespace
}  // namespace alpa::solver
