// Work that cannot be interrupted, run where it can be: in a child process that is killed at a
// deadline. For library code that does not read the clock often enough for a time limit (CBC's
// first LP runs for minutes on a problem of millions of columns, whatever its own limit says).
#ifndef ALPA_SUPPORT_CHILD_PROCESS_H_
#define ALPA_SUPPORT_CHILD_PROCESS_H_

#include <functional>
#include <string>

#include "support/status.h"

namespace alpa {

struct ChildOutcome {
  enum class Ending {
    kFinished,  // `work` returned; `output` is what it returned
    kKilled,    // still running at the deadline: killed, nothing kept
    kDied,      // ended without returning (a crash, an abort, an exception)
  };
  Ending ending = Ending::kDied;
  std::string output;
};

// Forks; the child runs `work` and sends its result back through a pipe, then leaves with
// _exit (no destructors, no atexit handlers: the parent's state stays the parent's). The parent
// waits at most `seconds` for it, then kills it (SIGKILL). The child has only the calling thread
// and copies of the parent's memory: `work` must not need another thread of the parent or a lock
// another thread may hold (glibc keeps malloc usable across fork). The parent flushes its stdio
// buffers first, so that what the child prints is not preceded by a second copy of them. An
// error only when the process or its pipe cannot be made (the caller may then run `work` itself).
Result<ChildOutcome> RunInChildProcess(const std::function<std::string()>& work, double seconds);

}  // namespace alpa

#endif  // ALPA_SUPPORT_CHILD_PROCESS_H_
