#include "cluster/cluster_json.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "support/file.h"
#include "support/json_text.h"

namespace alpa::cluster {
namespace {

// A link: {"bandwidth", "latency"} and, inside a host, "topology" and optionally "collectives":
// {name: {"bandwidth", "latency"}}.
Result<Link> ReadLink(const Json& json, const std::string& path, bool inside_host) {
  if (inside_host) {
    ALPA_RETURN_IF_ERROR(CheckJsonObject(
        json, path, {"topology", "bandwidth", "latency", "collectives"}, "the cluster"));
  } else {
    ALPA_RETURN_IF_ERROR(CheckJsonObject(json, path, {"bandwidth", "latency"}, "the cluster"));
  }
  Link link;
  ALPA_ASSIGN_OR_RETURN(link.bandwidth, JsonNumber(json, path, "bandwidth"));
  ALPA_ASSIGN_OR_RETURN(link.latency, JsonNumber(json, path, "latency"));
  if (inside_host) {
    ALPA_ASSIGN_OR_RETURN(std::string name, JsonString(json, path, "topology"));
    std::optional<Topology> topology = ParseTopology(name);
    if (!topology.has_value()) {
      return InvalidArgument(
          "{}.topology: unknown topology '{}'; expected all_to_all, switch, cube_mesh, ring or "
          "pcie",
          path, name);
    }
    link.topology = *topology;
  }
  if (json.contains("collectives")) {
    const Json& collectives = json["collectives"];
    const std::string at = path + ".collectives";
    if (!collectives.is_object()) {
      return InvalidArgument("{}: must be an object of figures by collective, found {}", at,
                             collectives.type_name());
    }
    for (const auto& [name, figures] : collectives.items()) {
      const std::string entry = at + "." + name;
      ALPA_RETURN_IF_ERROR(
          CheckJsonObject(figures, entry, {"bandwidth", "latency"}, "the cluster"));
      LinkFigures& read = link.collectives[name];
      ALPA_ASSIGN_OR_RETURN(read.bandwidth, JsonNumber(figures, entry, "bandwidth"));
      ALPA_ASSIGN_OR_RETURN(read.latency, JsonNumber(figures, entry, "latency"));
    }
  }
  ALPA_RETURN_IF_ERROR(ValidateLink(link, path));
  return link;
}

Result<DeviceSpec> ReadDevice(const Json& json, const std::string& name) {
  const std::string path = "device_types." + name;
  ALPA_RETURN_IF_ERROR(CheckJsonObject(
      json, path,
      {"peak_flops", "memory_bytes", "memory_bandwidth", "fuses_kernels", "kernel_launch"},
      "the cluster"));
  DeviceSpec device;
  device.name = name;
  ALPA_ASSIGN_OR_RETURN(const Json* flops, JsonField(json, path, "peak_flops"));
  if (!flops->is_object()) {
    return InvalidArgument("{}.peak_flops: must be an object of FLOP/s by dtype, found {}", path,
                           flops->type_name());
  }
  for (const auto& [dtype, value] : flops->items()) {
    if (!value.is_number()) {
      return InvalidArgument("{}.peak_flops.{}: must be a number, found {}", path, dtype,
                             value.type_name());
    }
    device.peak_flops[dtype] = value.get<double>();
  }
  ALPA_ASSIGN_OR_RETURN(device.memory_bytes, JsonInteger(json, path, "memory_bytes"));
  ALPA_ASSIGN_OR_RETURN(device.memory_bandwidth, JsonNumber(json, path, "memory_bandwidth"));
  if (json.contains("fuses_kernels")) {
    ALPA_ASSIGN_OR_RETURN(device.fuses_kernels, JsonBool(json, path, "fuses_kernels"));
  }
  if (json.contains("kernel_launch")) {
    ALPA_ASSIGN_OR_RETURN(device.kernel_launch_s, JsonNumber(json, path, "kernel_launch"));
  }
  ALPA_RETURN_IF_ERROR(ValidateDeviceSpec(device));
  return device;
}

Result<ClusterSpec> ReadCluster(const Json& json) {
  ALPA_RETURN_IF_ERROR(CheckJsonObject(
      json, "", {"name", "note", "device_types", "hosts", "inter_host", "racks"}, "the cluster"));
  ClusterSpec spec;
  if (json.contains("name")) {
    ALPA_ASSIGN_OR_RETURN(spec.name, JsonString(json, "", "name"));
  }
  if (json.contains("note")) {
    ALPA_ASSIGN_OR_RETURN(spec.note, JsonString(json, "", "note"));
  }

  std::map<std::string, DeviceSpec> devices;
  ALPA_ASSIGN_OR_RETURN(const Json* types, JsonField(json, "", "device_types"));
  if (!types->is_object()) {
    return InvalidArgument("device_types: must be an object of device types by name, found {}",
                           types->type_name());
  }
  for (const auto& [name, value] : types->items()) {
    ALPA_ASSIGN_OR_RETURN(DeviceSpec device, ReadDevice(value, name));
    devices.emplace(name, std::move(device));
  }

  ALPA_ASSIGN_OR_RETURN(const Json* hosts, JsonField(json, "", "hosts"));
  if (!hosts->is_array() || hosts->empty()) {
    return InvalidArgument("hosts: must be a non-empty list of hosts, found {}",
                           hosts->is_array() ? "an empty list" : hosts->type_name());
  }
  std::set<std::string> used;
  for (size_t i = 0; i < hosts->size(); ++i) {
    const Json& entry = (*hosts)[i];
    const std::string path = fmt::format("hosts[{}]", i);
    ALPA_RETURN_IF_ERROR(CheckJsonObject(
        entry, path, {"count", "device_type", "devices", "intra_host"}, "the cluster"));
    int64_t count = 1;
    if (entry.contains("count")) {
      ALPA_ASSIGN_OR_RETURN(count, JsonInteger(entry, path, "count"));
      if (count < 1) return InvalidArgument("{}.count: must be at least 1, found {}", path, count);
      if (count > (int64_t{1} << 20)) {
        return InvalidArgument("{}.count: {} hosts is more than this tool supports", path, count);
      }
    }
    HostSpec host;
    ALPA_ASSIGN_OR_RETURN(std::string type, JsonString(entry, path, "device_type"));
    auto device = devices.find(type);
    if (device == devices.end()) {
      return InvalidArgument("{}.device_type: '{}' is not one of the device_types", path, type);
    }
    host.device = device->second;
    used.insert(type);
    ALPA_ASSIGN_OR_RETURN(host.devices, JsonInteger(entry, path, "devices"));
    if (host.devices < 1) {
      return InvalidArgument("{}.devices: must be at least 1, found {}", path, host.devices);
    }
    ALPA_ASSIGN_OR_RETURN(const Json* intra, JsonField(entry, path, "intra_host"));
    ALPA_ASSIGN_OR_RETURN(host.intra_host, ReadLink(*intra, path + ".intra_host", true));
    spec.hosts.insert(spec.hosts.end(), count, host);
  }
  for (const auto& [name, device] : devices) {
    if (!used.contains(name)) {
      return InvalidArgument("device_types.{}: no host uses this device type", name);
    }
  }

  ALPA_ASSIGN_OR_RETURN(const Json* inter, JsonField(json, "", "inter_host"));
  ALPA_ASSIGN_OR_RETURN(spec.inter_host, ReadLink(*inter, "inter_host", false));
  if (json.contains("racks")) {
    const Json& racks = json["racks"];
    ALPA_RETURN_IF_ERROR(
        CheckJsonObject(racks, "racks", {"hosts_per_rack", "inter_rack"}, "the cluster"));
    RackSpec rack;
    ALPA_ASSIGN_OR_RETURN(rack.hosts_per_rack, JsonInteger(racks, "racks", "hosts_per_rack"));
    ALPA_ASSIGN_OR_RETURN(const Json* link, JsonField(racks, "racks", "inter_rack"));
    ALPA_ASSIGN_OR_RETURN(rack.inter_rack, ReadLink(*link, "racks.inter_rack", false));
    spec.racks = rack;
  }
  ALPA_RETURN_IF_ERROR(ValidateClusterSpec(spec));
  return spec;
}

Json LinkJson(const Link& link, bool inside_host) {
  Json json = Json::object();
  if (inside_host) json["topology"] = std::string(TopologyName(link.topology));
  json["bandwidth"] = link.bandwidth;
  json["latency"] = link.latency;
  for (const auto& [name, figures] : link.collectives) {
    json["collectives"][name] = {{"bandwidth", figures.bandwidth}, {"latency", figures.latency}};
  }
  return json;
}

}  // namespace

Result<ClusterSpec> ParseClusterJson(std::string_view text, const std::string& source) {
  ALPA_ASSIGN_OR_RETURN(Json json, ParseJsonText(text, source));
  Result<ClusterSpec> spec = ReadCluster(json);
  if (!spec.ok()) return spec.status().WithContext(source);
  return spec;
}

Result<ClusterSpec> LoadClusterFile(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseClusterJson(text, path);
}

std::string ClusterJson(const ClusterSpec& spec) {
  Json json = Json::object();
  if (!spec.name.empty()) json["name"] = spec.name;
  if (!spec.note.empty()) json["note"] = spec.note;
  Json types = Json::object();
  for (const HostSpec& host : spec.hosts) {
    if (types.contains(host.device.name)) continue;
    Json flops = Json::object();
    for (const auto& [dtype, value] : host.device.peak_flops) flops[dtype] = value;
    types[host.device.name] = {{"peak_flops", flops},
                               {"memory_bytes", host.device.memory_bytes},
                               {"memory_bandwidth", host.device.memory_bandwidth},
                               {"fuses_kernels", host.device.fuses_kernels},
                               {"kernel_launch", host.device.kernel_launch_s}};
  }
  json["device_types"] = types;
  Json hosts = Json::array();
  for (size_t i = 0; i < spec.hosts.size();) {
    size_t end = i + 1;
    while (end < spec.hosts.size() && spec.hosts[end] == spec.hosts[i]) ++end;
    Json entry = Json::object();
    if (end - i > 1) entry["count"] = end - i;
    entry["device_type"] = spec.hosts[i].device.name;
    entry["devices"] = spec.hosts[i].devices;
    entry["intra_host"] = LinkJson(spec.hosts[i].intra_host, true);
    hosts.push_back(entry);
    i = end;
  }
  json["hosts"] = hosts;
  json["inter_host"] = LinkJson(spec.inter_host, false);
  if (spec.racks.has_value()) {
    json["racks"] = {{"hosts_per_rack", spec.racks->hosts_per_rack},
                     {"inter_rack", LinkJson(spec.racks->inter_rack, false)}};
  }
  return json.dump(2) + "\n";
}

}  // namespace alpa::cluster
