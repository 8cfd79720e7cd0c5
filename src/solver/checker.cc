#include "solver/checker.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace alpa::solver {
namespace {

Status CheckChoiceShape(const Request& request, std::span<const int64_t> choice) {
  if (choice.size() != request.nodes.size()) {
    return InvalidArgument("the choice has {} entries for {} nodes; give one strategy per node",
                           choice.size(), request.nodes.size());
  }
  for (size_t v = 0; v < choice.size(); ++v) {
    const int64_t strategies = request.nodes[v].num_strategies();
    if (choice[v] < 0 || choice[v] >= strategies) {
      return InvalidArgument("node {}: strategy {} does not exist (the node has {}: 0 to {})", v,
                             choice[v], strategies, strategies - 1);
    }
  }
  return Status::Ok();
}

// usage(t) over time by a sweep: +usage at start, -usage at end; at equal times the ends come
// first (an interval [s, t) is no longer live at t). The peak is the largest running sum after all
// events at one time point.
void SweepMemory(const Request& request, std::span<const int64_t> choice, Evaluation& evaluation) {
  struct Event {
    int64_t time;
    bool arrives;  // false sorts first: leaving before arriving at the same time
    int64_t usage;
  };
  std::vector<Event> events;
  events.reserve(2 * request.nodes.size());
  for (size_t v = 0; v < request.nodes.size(); ++v) {
    const Node& node = request.nodes[v];
    const int64_t usage = node.usages[choice[v]];
    if (node.interval.empty() || usage == 0) continue;
    events.push_back({node.interval.start, true, usage});
    events.push_back({node.interval.end, false, usage});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::pair(a.time, a.arrives) < std::pair(b.time, b.arrives);
  });
  TotalCost usage = 0;
  for (size_t k = 0; k < events.size(); ++k) {
    usage += events[k].arrives ? events[k].usage : -events[k].usage;
    const bool last_at_time = k + 1 == events.size() || events[k + 1].time != events[k].time;
    if (last_at_time && usage > evaluation.peak_usage) {
      evaluation.peak_usage = usage;
      evaluation.peak_time = events[k].time;
    }
  }
  evaluation.fits_memory =
      !request.usage_limit.has_value() || evaluation.peak_usage <= *request.usage_limit;
}

}  // namespace

Result<Evaluation> EvaluateChoice(const Request& request, std::span<const int64_t> choice) {
  ALPA_RETURN_IF_ERROR(CheckChoiceShape(request, choice));
  Evaluation evaluation;
  auto note_forbidden = [&](int64_t cost, auto describe) {
    if (cost < kForbiddenCost) return;
    if (evaluation.num_forbidden++ == 0) evaluation.first_forbidden = describe();
  };
  for (size_t v = 0; v < request.nodes.size(); ++v) {
    const int64_t cost = request.nodes[v].costs[choice[v]];
    evaluation.cost += cost;
    note_forbidden(cost,
                   [&] { return fmt::format("node {} strategy {} costs {}", v, choice[v], cost); });
  }
  for (size_t e = 0; e < request.edges.size(); ++e) {
    const Edge& edge = request.edges[e];
    ALPA_CHECK(edge.from >= 0 && edge.from < static_cast<int64_t>(request.nodes.size()) &&
                   edge.to >= 0 && edge.to < static_cast<int64_t>(request.nodes.size()),
               "edge {} names a node out of range: validate the request first", e);
    const int64_t i = choice[edge.from];
    const int64_t j = choice[edge.to];
    const int64_t cost = edge.costs[i * request.nodes[edge.to].num_strategies() + j];
    evaluation.cost += cost;
    note_forbidden(cost, [&] {
      return fmt::format("edge {} ({} -> {}) entry [{}][{}] costs {}", e, edge.from, edge.to, i, j,
                         cost);
    });
  }
  SweepMemory(request, choice, evaluation);
  return evaluation;
}

}  // namespace alpa::solver
