#include "solver/iopddl_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <vector>

#include "solver/iopddl_reader.h"
#include "support/file.h"
#include "support/json_text.h"
#include "support/system_memory.h"
#include "support/units.h"

namespace alpa::solver {
namespace {

// The document's fields as nodes and edges; errors name the JSON path.
Result<Request> ToRequest(IopddlDocument document) {
  if (document.intervals.size() != document.node_costs.size() ||
      document.usages.size() != document.node_costs.size()) {
    return InvalidArgument(
        "problem.nodes: {} intervals, {} costs and {} usages; give one of each per node",
        document.intervals.size(), document.node_costs.size(), document.usages.size());
  }
  if (document.edge_nodes.size() != document.edge_costs.size()) {
    return InvalidArgument("problem.edges: {} nodes and {} costs; give one of each per edge",
                           document.edge_nodes.size(), document.edge_costs.size());
  }
  Request request;
  request.name = std::move(document.name);
  request.usage_limit = document.usage_limit;
  request.nodes.resize(document.node_costs.size());
  for (size_t v = 0; v < request.nodes.size(); ++v) {
    const std::vector<int64_t>& interval = document.intervals[v];
    if (interval.size() != 2) {
      return InvalidArgument("problem.nodes.intervals[{}]: must be [start, end], found {} values",
                             v, interval.size());
    }
    Node& node = request.nodes[v];
    node.interval = Interval{interval[0], interval[1]};
    node.costs = std::move(document.node_costs[v]);
    node.usages = std::move(document.usages[v]);
  }
  request.edges.resize(document.edge_costs.size());
  for (size_t e = 0; e < request.edges.size(); ++e) {
    const std::vector<int64_t>& ends = document.edge_nodes[e];
    if (ends.size() != 2) {
      return InvalidArgument("problem.edges.nodes[{}]: must be [from, to], found {} values", e,
                             ends.size());
    }
    request.edges[e] = Edge{ends[0], ends[1], std::move(document.edge_costs[e])};
  }
  return request;
}

void AppendMatrix(fmt::memory_buffer& out, std::string_view key, const auto& rows,
                  const auto& row_of) {
  fmt::format_to(std::back_inserter(out), "\"{}\":[", key);
  for (size_t k = 0; k < rows.size(); ++k) {
    fmt::format_to(std::back_inserter(out), "{}[{}]", k == 0 ? "" : ",",
                   fmt::join(row_of(rows[k]), ","));
  }
  out.push_back(']');
}

}  // namespace

Result<Request> ParseIopddlJson(std::string_view text, const std::string& source) {
  ALPA_ASSIGN_OR_RETURN(IopddlDocument document, ReadIopddlDocument(text, source));
  Result<Request> request = ToRequest(std::move(document));
  if (!request.ok()) return request.status().WithContext(source);
  Status valid = ValidateRequest(*request);
  if (!valid.ok()) return valid.WithContext(source);
  return request;
}

Status CheckMemoryToSolve(const std::string& source, std::string_view text,
                          std::optional<int64_t> available_bytes) {
  const int64_t numbers = std::count(text.begin(), text.end(), ',') + 1;
  const int64_t need = kBytesPerNumber * numbers + kSolverBaseBytes;
  if (!available_bytes.has_value() || need <= *available_bytes) return Status::Ok();
  return Status(StatusCode::kResourceExhausted,
                fmt::format("{}: solving this problem needs about {} of memory ({} numbers of "
                            "8 bytes, plus the program), and only {} is available; free memory, "
                            "or solve it on a machine with at least {} more",
                            source, FormatBytes(need), numbers, FormatBytes(*available_bytes),
                            FormatBytes(need - *available_bytes)));
}

Result<Request> LoadIopddlFile(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(const FileBytes bytes, FileBytes::Open(path));
  ALPA_RETURN_IF_ERROR(CheckMemoryToSolve(path, bytes.view(), AvailableMemoryBytes()));
  return ParseIopddlJson(bytes.view(), path);
}

std::string IopddlJson(const Request& request) {
  fmt::memory_buffer out;
  auto append = [&](std::string_view text) { out.append(text.data(), text.data() + text.size()); };
  append("{\"problem\":{\"name\":");
  append(Json(request.name).dump(-1, ' ', false, Json::error_handler_t::replace));
  append(",\"nodes\":{");
  AppendMatrix(out, "intervals", request.nodes, [](const Node& node) {
    return std::array{node.interval.start, node.interval.end};
  });
  append(",");
  AppendMatrix(
      out, "costs", request.nodes, [](const Node& node) -> const auto& { return node.costs; });
  append(",");
  AppendMatrix(
      out, "usages", request.nodes, [](const Node& node) -> const auto& { return node.usages; });
  append("},\"edges\":{");
  AppendMatrix(out, "nodes", request.edges, [](const Edge& edge) {
    return std::array{edge.from, edge.to};
  });
  append(",");
  AppendMatrix(
      out, "costs", request.edges, [](const Edge& edge) -> const auto& { return edge.costs; });
  append("}");
  if (request.usage_limit.has_value()) {
    fmt::format_to(std::back_inserter(out), ",\"usage_limit\":{}", *request.usage_limit);
  }
  append("}}\n");
  return fmt::to_string(out);
}

}  // namespace alpa::solver
