// The timeline of an SPMD run, for people to look at: the Chrome trace JSON object format that
// chrome://tracing and Perfetto open,
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}
// pid 0, one thread (tid) per device, one complete event ("ph": "X", ts/dur in microseconds) per
// instruction the device ran, cat "kernel", "loop" (a fused loop rooted there: args add the
// number of values computed inside it, "fused_values"), "interpreter" (no fast kernel) or
// "collective", args the opcode and shape (or, for a pipelined run, one per task and transfer,
// cat "task" or "transfer"); plus one event per spanned interval on a "steps" row (tid -1),
// such as each training step.
#ifndef ALPA_RUNTIME_EXECUTION_TRACE_H_
#define ALPA_RUNTIME_EXECUTION_TRACE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/device_executor.h"
#include "runtime/pipeline_executor.h"
#include "support/status.h"

namespace alpa::runtime {

// A named interval of the run, such as "step 3"; times as in ExecutionEvent.
struct TraceSpan {
  std::string name;
  double start_s = 0;
  double duration_s = 0;
};

class ExecutionTrace {
 public:
  explicit ExecutionTrace(int64_t devices) : events_(static_cast<size_t>(devices)) {}

  // Appends device `device`'s events (its ExecutionProfile::events).
  void Add(int64_t device, const std::vector<ExecutionEvent>& events);
  void AddSpan(TraceSpan span) { spans_.push_back(std::move(span)); }
  // Appends a pipelined run's events of device `device` (PipelineProfile::events): its
  // forwards, backwards and updates (cat "task") and its sends and receives (cat "transfer").
  void AddTasks(int64_t device, const std::vector<PipelineEvent>& events);

  std::string ToChromeTrace() const;
  // The instructions the interpreter ran for want of a fast kernel (ExecutionEvent::interpreted)
  // on any device, as "f32 reduce-window" style opcodes with their counts over the trace, in
  // name order; empty when every computation ran on a fast kernel.
  std::map<std::string, int64_t> InterpretedOpcodes() const;
  // Writes ToChromeTrace() to `path`; the error names the path.
  Status Write(const std::string& path) const;

 private:
  std::vector<std::vector<ExecutionEvent>> events_;  // by device
  std::vector<TraceSpan> spans_;
  std::vector<std::vector<PipelineEvent>> tasks_ =
      std::vector<std::vector<PipelineEvent>>(events_.size());  // by device
};

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_EXECUTION_TRACE_H_
