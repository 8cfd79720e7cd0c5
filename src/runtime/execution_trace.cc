#include "runtime/execution_trace.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "support/file.h"

namespace alpa::runtime {
namespace {

constexpr double kMicrosecondsPerSecond = 1e6;
constexpr int kStepsRow = -1;

nlohmann::json ThreadName(int64_t tid, const std::string& name) {
  return {
      {"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

void ExecutionTrace::Add(int64_t device, const std::vector<ExecutionEvent>& events) {
  std::vector<ExecutionEvent>& row = events_.at(static_cast<size_t>(device));
  row.insert(row.end(), events.begin(), events.end());
}

void ExecutionTrace::AddTasks(int64_t device, const std::vector<PipelineEvent>& events) {
  std::vector<PipelineEvent>& row = tasks_.at(static_cast<size_t>(device));
  row.insert(row.end(), events.begin(), events.end());
}

std::string ExecutionTrace::ToChromeTrace() const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "alpa run"}}}});
  if (!spans_.empty()) events.push_back(ThreadName(kStepsRow, "steps"));
  for (size_t d = 0; d < events_.size(); ++d) {
    events.push_back(ThreadName(static_cast<int64_t>(d), fmt::format("device {}", d)));
  }
  for (const TraceSpan& span : spans_) {
    events.push_back({{"name", span.name},
                      {"cat", "step"},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", kStepsRow},
                      {"ts", span.start_s * kMicrosecondsPerSecond},
                      {"dur", span.duration_s * kMicrosecondsPerSecond}});
  }
  int64_t kernels = 0, collectives = 0;
  for (size_t d = 0; d < events_.size(); ++d) {
    for (const ExecutionEvent& event : events_[d]) {
      (event.collective ? collectives : kernels) += 1;
      nlohmann::json args = {{"opcode", ir::OpcodeName(event.instruction->opcode())},
                             {"shape", event.instruction->shape().ToString(false)}};
      if (event.fused_values > 0) args["fused_values"] = event.fused_values;
      events.push_back({{"name", event.instruction->name()},
                        {"cat", event.collective         ? "collective"
                                : event.interpreted      ? "interpreter"
                                : event.fused_values > 0 ? "loop"
                                                         : "kernel"},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", d},
                        {"ts", event.start_s * kMicrosecondsPerSecond},
                        {"dur", event.duration_s * kMicrosecondsPerSecond},
                        {"args", std::move(args)}});
    }
  }
  int64_t tasks = 0;
  for (size_t d = 0; d < tasks_.size(); ++d) {
    for (const PipelineEvent& event : tasks_[d]) {
      ++tasks;
      events.push_back({{"name", event.label},
                        {"cat", event.transfer ? "transfer" : "task"},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", d},
                        {"ts", event.start_s * kMicrosecondsPerSecond},
                        {"dur", event.duration_s * kMicrosecondsPerSecond}});
    }
  }
  nlohmann::json trace = {{"traceEvents", events},
                          {"displayTimeUnit", "ms"},
                          {"otherData",
                           {{"devices", events_.size()},
                            {"kernels", kernels},
                            {"collectives", collectives},
                            {"interpreted", InterpretedOpcodes()},
                            {"tasks", tasks}}}};
  return trace.dump(1);
}

std::map<std::string, int64_t> ExecutionTrace::InterpretedOpcodes() const {
  std::map<std::string, int64_t> opcodes;
  for (const std::vector<ExecutionEvent>& device : events_) {
    for (const ExecutionEvent& event : device) {
      if (!event.interpreted) continue;
      const ir::Shape& shape = event.instruction->shape();
      ++opcodes[fmt::format("{} {}", shape.IsArray() ? ir::DTypeName(shape.dtype()) : "tuple",
                            ir::OpcodeName(event.instruction->opcode()))];
    }
  }
  return opcodes;
}

Status ExecutionTrace::Write(const std::string& path) const {
  return WriteStringToFile(path, ToChromeTrace());
}

}  // namespace alpa::runtime
