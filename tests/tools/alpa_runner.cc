#include "tests/tools/alpa_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace alpa::tools::testing {

RunResult RunAlpa(const std::vector<std::string>& args) { return RunProgram(ALPA_BINARY, args); }

RunResult RunAlpaUnderMpi(int ranks, const std::vector<std::string>& args) {
  std::vector<std::string> mpirun_args = {"-np", std::to_string(ranks), "--oversubscribe",
                                          "--allow-run-as-root", ALPA_BINARY};
  mpirun_args.insert(mpirun_args.end(), args.begin(), args.end());
  return RunProgram("mpirun", mpirun_args);
}

RunResult RunProgram(const std::string& program, const std::vector<std::string>& args) {
  // stdout and stderr go to two files rather than pipes: with pipes, a child that fills one while
  // the test reads the other would deadlock, and the outputs here are small enough for a file.
  std::string dir_template = ::testing::TempDir() + "alpa_cli_run_XXXXXX";
  const char* dir = mkdtemp(dir_template.data());
  if (dir == nullptr) {
    ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
    return {};
  }
  const std::string out_path = std::string(dir) + "/stdout";
  const std::string err_path = std::string(dir) + "/stderr";

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);

  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  RunResult result;
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "posix_spawnp " << program << ": " << std::strerror(spawned);
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
    result.out = ReadFile(out_path);
    result.err = ReadFile(err_path);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result;
}

std::string Describe(const RunResult& result) {
  return "exit code " + std::to_string(result.exit_code) + "\n--- stdout ---\n" +
         result.out.substr(0, 4000) + "\n--- stderr ---\n" + result.err.substr(0, 4000);
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void WriteFile(const std::filesystem::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

void WriteGzipFile(const std::filesystem::path& path, const std::string& contents) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << "gzopen " << path;
  const int written = gzwrite(file, contents.data(), static_cast<unsigned>(contents.size()));
  EXPECT_EQ(written, static_cast<int>(contents.size()));
  EXPECT_EQ(gzclose(file), Z_OK);
}

nlohmann::json ParseJson(const RunResult& result) {
  nlohmann::json json = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    ADD_FAILURE() << "stdout is not JSON\n" << Describe(result);
    return nullptr;
  }
  return json;
}

std::string TestdataPath(const std::string& relative) {
  return std::string(ALPA_TESTDATA_DIR) + "/" + relative;
}

std::string ExamplePath(const std::string& relative) {
  return std::string(ALPA_EXAMPLES_DIR) + "/" + relative;
}

void AlpaCliTest::SetUp() {
  std::string dir_template = ::testing::TempDir() + "alpa_cli_test_XXXXXX";
  const char* dir = mkdtemp(dir_template.data());
  ASSERT_NE(dir, nullptr) << "mkdtemp: " << std::strerror(errno);
  dir_ = dir;
}

void AlpaCliTest::TearDown() {
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

std::string AlpaCliTest::Write(const std::string& name, const std::string& contents) {
  const std::filesystem::path path = dir_ / name;
  WriteFile(path, contents);
  return path.string();
}

void ExpectBadInput(const RunResult& result, const std::string& expected_place) {
  EXPECT_EQ(result.exit_code, 2) << Describe(result);
  EXPECT_EQ(result.out, "") << "a failed command must not print a result\n" << Describe(result);
  const std::string first_line = result.err.substr(0, result.err.find('\n'));
  EXPECT_EQ(first_line.rfind("alpa: error: ", 0), 0u) << Describe(result);
  EXPECT_NE(first_line.find(expected_place), std::string::npos)
      << "expected the message to name " << expected_place << "\n"
      << Describe(result);
  EXPECT_EQ(first_line.find("error:", std::string("alpa: error: ").size()), std::string::npos)
      << "the word 'error' is repeated\n"
      << Describe(result);
}

}  // namespace alpa::tools::testing
