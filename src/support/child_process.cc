#include "support/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace alpa {
namespace {

using Clock = std::chrono::steady_clock;

// Writes all of `bytes`; false when the reader has gone.
bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void RunChild(int fd, const std::function<std::string()>& work) {
  // A parent that stopped reading must not kill the child with SIGPIPE before _exit.
  signal(SIGPIPE, SIG_IGN);
  const std::string output = work();
  std::fflush(nullptr);
  _exit(WriteAll(fd, output) ? 0 : 1);
}

// Reads from `fd` until end of file or `deadline`; says whether the end was reached.
bool ReadUntil(int fd, Clock::time_point deadline, std::string& output) {
  char buffer[1 << 16];
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd ready{fd, POLLIN, 0};
    const int polled = poll(&ready, 1, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
    if (polled < 0 && errno != EINTR) return false;
    if (polled <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0;
    output.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

Result<ChildOutcome> RunInChildProcess(const std::function<std::string()>& work, double seconds) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Internal("cannot make a pipe for a child process: {}", std::strerror(errno));
  }
  std::fflush(nullptr);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::isfinite(seconds) ? seconds : 1e9));
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    return Internal("cannot start a child process: {}", std::strerror(error));
  }
  if (pid == 0) {
    close(fds[0]);
    RunChild(fds[1], work);
  }
  close(fds[1]);
  ChildOutcome outcome;
  const bool ended = ReadUntil(fds[0], deadline, outcome.output);
  close(fds[0]);
  if (!ended) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!ended) {
    outcome.ending = ChildOutcome::Ending::kKilled;
    outcome.output.clear();
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    outcome.ending = ChildOutcome::Ending::kFinished;
  } else {
    outcome.ending = ChildOutcome::Ending::kDied;
    outcome.output.clear();
  }
  return outcome;
}

}  // namespace alpa
