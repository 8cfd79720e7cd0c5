// RunInChildProcess: the child's result comes back, work that outlives the deadline is killed,
// a child that dies is told apart from one that returned, and the parent's state is untouched.
#include "support/child_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace alpa {
namespace {

TEST(RunInChildProcess, ReturnsWhatTheWorkReturned) {
  // More than a pipe's buffer, so that the parent must read while the child writes.
  const std::string large(1 << 20, 'x');
  Result<ChildOutcome> outcome = RunInChildProcess([&] { return large + "end"; }, 60);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->ending, ChildOutcome::Ending::kFinished);
  EXPECT_EQ(outcome->output, large + "end");
}

TEST(RunInChildProcess, KillsWorkThatOutlivesTheDeadline) {
  // Killed, not waited for (the work would sleep ten minutes, past the test's own timeout).
  Result<ChildOutcome> outcome = RunInChildProcess(
      [] {
        sleep(600);
        return std::string("too late");
      },
      0.2);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->ending, ChildOutcome::Ending::kKilled);
  EXPECT_TRUE(outcome->output.empty());
}

TEST(RunInChildProcess, TellsADeadChildFromAFinishedOne) {
  // Killed from outside (as by the kernel's out-of-memory killer; no core file).
  Result<ChildOutcome> killed = RunInChildProcess(
      []() -> std::string {
        raise(SIGKILL);
        return "unreachable";
      },
      60);
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->ending, ChildOutcome::Ending::kDied);
  EXPECT_TRUE(killed->output.empty());
  // Work that returns nothing still finished.
  Result<ChildOutcome> empty = RunInChildProcess([] { return std::string(); }, 60);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->ending, ChildOutcome::Ending::kFinished);
  EXPECT_TRUE(empty->output.empty());
}

TEST(RunInChildProcess, TheChildChangesOnlyItsOwnCopyOfMemory) {
  int counter = 1;
  Result<ChildOutcome> outcome = RunInChildProcess(
      [&] {
        counter = 2;
        return std::to_string(counter);
      },
      60);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->output, "2");
  EXPECT_EQ(counter, 1);
}

}  // namespace
}  // namespace alpa
