// Runs the built `alpa` binary as a user would, and a scratch directory for the files a test
// writes. The tests in this folder check the program's contract (stdout, stderr, exit code), so
// they go through a real process rather than calling the command functions.
#ifndef ALPA_TESTS_TOOLS_ALPA_RUNNER_H_
#define ALPA_TESTS_TOOLS_ALPA_RUNNER_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#ifndef ALPA_BINARY
#error "ALPA_BINARY is defined by tests/tools/CMakeLists.txt"
#endif

namespace alpa::tools::testing {

struct RunResult {
  // The exit status; 128 + N when the process died of signal N (as a shell reports it), so a crash
  // never looks like success or like the bad-input code 2.
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `alpa args...` with stdin from /dev/null, capturing stdout and stderr separately.
RunResult RunAlpa(const std::vector<std::string>& args);
// Runs `mpirun -np RANKS alpa args...` (as root, oversubscribed: the test machines are small).
RunResult RunAlpaUnderMpi(int ranks, const std::vector<std::string>& args);
// Runs `program args...` (found on PATH) the same way.
RunResult RunProgram(const std::string& program, const std::vector<std::string>& args);

// Prints a run for a failed assertion: `EXPECT_EQ(r.exit_code, 0) << Describe(r)`.
std::string Describe(const RunResult& result);

std::string ReadFile(const std::filesystem::path& path);
void WriteFile(const std::filesystem::path& path, const std::string& contents);

// Writes `contents` gzip-compressed (through zlib, as the `gzip` tool would).
void WriteGzipFile(const std::filesystem::path& path, const std::string& contents);

// Parses stdout as JSON; a failure to parse is a test failure (and returns null).
nlohmann::json ParseJson(const RunResult& result);

// Vendored inputs.
std::string TestdataPath(const std::string& relative);  // testdata/<relative>
std::string ExamplePath(const std::string& relative);   // examples/<relative>

// A fixture with a fresh scratch directory per test, removed afterwards.
class AlpaCliTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Writes `contents` to <scratch>/<name> and returns the path.
  std::string Write(const std::string& name, const std::string& contents);

  std::filesystem::path dir_;
};

// Checks the bad-input contract: exit code 2, nothing on stdout, and a message on stderr that
// starts "alpa: error: " and contains `expected_place` (a file:line:col or a name). The word
// "error" appears only once: the parser's own "error:" is not repeated after the location.
void ExpectBadInput(const RunResult& result, const std::string& expected_place);

// A dot of f32[2,3] x f32[3,4]. By hand: 3 instructions (2 parameters, 1 dot); parameters hold
// 6 + 12 = 18 elements = 72 bytes; the dot costs 2 * |result| * contracted = 2 * 8 * 3 = 48 FLOPs
// (src/cost/flop_count.cc); the naive peak is both parameters plus the 8-float result,
// 72 + 32 = 104 bytes.
inline constexpr char kTinyDot[] = R"(HloModule tiny_dot

ENTRY %main (a: f32[2,3], b: f32[3,4]) -> f32[2,4] {
  %a = f32[2,3]{1,0} parameter(0)
  %b = f32[3,4]{1,0} parameter(1)
  ROOT %dot = f32[2,4]{1,0} dot(f32[2,3]{1,0} %a, f32[3,4]{1,0} %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

}  // namespace alpa::tools::testing

#endif  // ALPA_TESTS_TOOLS_ALPA_RUNNER_H_
