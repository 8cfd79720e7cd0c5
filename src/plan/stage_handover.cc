#include "plan/stage_handover.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "sharding/local_all_gather.h"

namespace alpa::plan {
namespace {

// Where the table holds the layout a layer of `stage` receives sent value `name` in: the layer
// and the value's position among that layer's received activations.
std::optional<std::pair<int64_t, size_t>> FirstReader(const LayerCostTable& table,
                                                      const StageChoice& stage,
                                                      const std::string& name) {
  for (int64_t layer = stage.first_layer; layer <= stage.last_layer; ++layer) {
    const size_t k = static_cast<size_t>(layer);
    if (k >= table.received_values.size() || k >= table.received_shapes.size()) break;
    const std::vector<std::string>& received = table.received_values[k];
    const auto it = std::find(received.begin(), received.end(), name);
    if (it == received.end()) continue;
    const size_t a = static_cast<size_t>(it - received.begin());
    if (a >= table.at(layer, stage.config).received_specs.size()) break;
    return std::make_pair(layer, a);
  }
  return std::nullopt;
}

// The layout `stage` sums `weight`'s gradient in: its first layer reading the weight's.
std::optional<sharding::ShardingSpec> GradientLayout(const LayerCostTable& table,
                                                     const StageChoice& stage, int64_t weight) {
  for (int64_t layer = stage.first_layer; layer <= stage.last_layer; ++layer) {
    const std::vector<int64_t>& read = table.weights[static_cast<size_t>(layer)];
    const auto it = std::find(read.begin(), read.end(), weight);
    if (it == read.end()) continue;
    const std::vector<sharding::ShardingSpec>& specs =
        table.at(layer, stage.config).weight_gradient_specs;
    const auto i = static_cast<size_t>(it - read.begin());
    if (i >= specs.size()) return std::nullopt;
    return specs[i];
  }
  return std::nullopt;
}

}  // namespace

StageEdgeLayouts EdgeLayoutsOf(const LayerCostTable& table, const StageChoice& choice) {
  StageEdgeLayouts edges;
  const auto layers = static_cast<int64_t>(std::min(
      {table.sent_values.size(), table.received_values.size(), table.received_shapes.size()}));
  if (choice.last_layer >= layers) return edges;
  std::set<std::string> before, after;  // sent by the layers before the stage, read after it
  for (int64_t k = 0; k < choice.first_layer; ++k) {
    const std::vector<std::string>& sent = table.sent_values[static_cast<size_t>(k)];
    before.insert(sent.begin(), sent.end());
  }
  for (int64_t k = choice.last_layer + 1; k < layers; ++k) {
    const std::vector<std::string>& received = table.received_values[static_cast<size_t>(k)];
    after.insert(received.begin(), received.end());
  }
  for (int64_t k = choice.first_layer; k <= choice.last_layer; ++k) {
    const LayerCost& cost = table.at(k, choice.config);
    const std::vector<std::string>& received = table.received_values[static_cast<size_t>(k)];
    for (size_t a = 0; a < received.size() && a < cost.received_specs.size(); ++a) {
      if (before.contains(received[a])) edges.received.emplace(received[a], cost.received_specs[a]);
    }
    const std::vector<std::string>& sent = table.sent_values[static_cast<size_t>(k)];
    for (size_t i = 0; i < sent.size() && i < cost.cotangent_specs.size(); ++i) {
      if (after.contains(sent[i])) edges.cotangents.emplace(sent[i], cost.cotangent_specs[i]);
    }
  }
  return edges;
}

double TransferSeconds(const cluster::ClusterSpec& cluster, const std::vector<int64_t>& from,
                       const std::vector<int64_t>& to, int64_t bytes) {
  if (bytes == 0) return 0;
  const std::vector<int64_t> host_of = cluster::HostOfDevices(cluster);
  std::set<int64_t> from_hosts, to_hosts;
  for (int64_t d : from) from_hosts.insert(host_of[static_cast<size_t>(d)]);
  for (int64_t d : to) to_hosts.insert(host_of[static_cast<size_t>(d)]);
  if (from_hosts.size() == 1 && from_hosts == to_hosts) {
    const cluster::Link& link = cluster.hosts[static_cast<size_t>(*from_hosts.begin())].intra_host;
    const double senders = static_cast<double>(std::min(from.size(), to.size()));
    return link.latency + static_cast<double>(bytes) / (link.bandwidth * senders);
  }
  const double hosts = static_cast<double>(std::min(from_hosts.size(), to_hosts.size()));
  return cluster.inter_host.latency +
         static_cast<double>(bytes) / (cluster.inter_host.bandwidth * hosts);
}

Result<StageHandover> PriceStageHandover(const LayerCostTable& table,
                                         const cluster::ClusterSpec& cluster,
                                         const StageChoice& from,
                                         const std::vector<int64_t>& from_devices,
                                         const StageChoice& to,
                                         const std::vector<int64_t>& to_devices) {
  const size_t last = static_cast<size_t>(from.last_layer);
  // What crosses at its bytes once: the values whose layouts are not known.
  int64_t plain_bytes = table.output_bytes[last];
  int64_t forward_bytes = 0, backward_bytes = 0;
  double forward_gathers_s = 0, backward_gathers_s = 0;
  StageHandover handover;
  if (last < table.sent_values.size()) {
    const LayerCost& sender = table.at(from.last_layer, from.config);
    ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh from_mesh,
                          LogicalMeshOf(cluster, table.configs[static_cast<size_t>(from.config)]));
    ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh to_mesh,
                          LogicalMeshOf(cluster, table.configs[static_cast<size_t>(to.config)]));
    const std::vector<std::string>& sent = table.sent_values[last];
    for (size_t i = 0; i < sent.size() && i < sender.cotangent_specs.size(); ++i) {
      const auto reader = FirstReader(table, to, sent[i]);
      if (!reader) continue;
      const auto [layer, a] = *reader;
      const ir::Shape& shape = table.received_shapes[static_cast<size_t>(layer)][a];
      ALPA_ASSIGN_OR_RETURN(
          sharding::ReceivedTransfer forward,
          sharding::PriceReceivedTransfer(shape, table.at(layer, to.config).received_specs[a],
                                          cluster, to_mesh));
      ALPA_ASSIGN_OR_RETURN(
          sharding::ReceivedTransfer backward,
          sharding::PriceReceivedTransfer(shape, sender.cotangent_specs[i], cluster, from_mesh));
      plain_bytes -= shape.ByteSize();
      forward_bytes += forward.between_meshes_bytes;
      backward_bytes += backward.between_meshes_bytes;
      forward_gathers_s += forward.gather_s;
      backward_gathers_s += backward.gather_s;
      handover.within_receiver_bytes +=
          forward.within_receiver_bytes + backward.within_receiver_bytes;
    }
  }
  forward_bytes += plain_bytes;
  backward_bytes += plain_bytes;
  handover.forward_s =
      TransferSeconds(cluster, from_devices, to_devices, forward_bytes) + forward_gathers_s;
  handover.backward_s =
      TransferSeconds(cluster, to_devices, from_devices, backward_bytes) + backward_gathers_s;
  handover.between_meshes_bytes = forward_bytes + backward_bytes;
  return handover;
}

Result<GradientExchange> PriceGradientExchange(const LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster, int64_t weight,
                                               const StageChoice& from,
                                               const std::vector<int64_t>& from_devices,
                                               const StageChoice& to,
                                               const std::vector<int64_t>& to_devices) {
  GradientExchange exchange;
  exchange.between_meshes_bytes = table.weight_bytes.at(weight);
  const auto shape = table.weight_shapes.find(weight);
  const std::optional<sharding::ShardingSpec> sent = GradientLayout(table, from, weight);
  const std::optional<sharding::ShardingSpec> received = GradientLayout(table, to, weight);
  if (shape != table.weight_shapes.end() && sent && received) {
    const MeshConfig& from_config = table.configs[static_cast<size_t>(from.config)];
    int64_t terms = 1;
    for (int64_t axis : sent->partial_axes) {
      terms *= from_config.logical_shape[static_cast<size_t>(axis)];
    }
    ALPA_ASSIGN_OR_RETURN(cluster::LogicalMesh to_mesh,
                          LogicalMeshOf(cluster, table.configs[static_cast<size_t>(to.config)]));
    ALPA_ASSIGN_OR_RETURN(
        sharding::ReceivedTransfer transfer,
        sharding::PriceReceivedTransfer(shape->second, *received, cluster, to_mesh, terms));
    exchange.between_meshes_bytes = transfer.between_meshes_bytes;
    exchange.within_receiver_bytes = transfer.within_receiver_bytes;
    exchange.seconds = transfer.gather_s;
  }
  exchange.seconds +=
      TransferSeconds(cluster, from_devices, to_devices, exchange.between_meshes_bytes);
  return exchange;
}

}  // namespace alpa::plan
