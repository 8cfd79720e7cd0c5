#include "cluster/cluster_json.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "support/file.h"
#include "support/json_text.h"

namespace alpa::cluster {
namespace {

using Json = nlohmann::ordered_json;

// "path.key", or "key" at the top level (empty path).
std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

// Checks that `object` (at `path`) is an object with no keys beyond `allowed`.
Status CheckObject(const Json& object, const std::string& path,
                   std::initializer_list<std::string_view> allowed) {
  if (!object.is_object()) {
    return InvalidArgument("{}: must be an object, found {}", path.empty() ? "the cluster" : path,
                           object.type_name());
  }
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || key == name;
    if (!known) {
      std::string names;
      for (std::string_view name : allowed)
        names += fmt::format("{}'{}'", names.empty() ? "" : ", ", name);
      return InvalidArgument("{}: unknown key; expected {}", Join(path, key), names);
    }
  }
  return Status::Ok();
}

Result<const Json*> Field(const Json& object, const std::string& path, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (path.empty()) return InvalidArgument("missing key '{}'", key);
    return InvalidArgument("{}: missing key '{}'", path, key);
  }
  return &*it;
}

Result<double> NumberField(const Json& object, const std::string& path, const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* value, Field(object, path, key));
  if (!value->is_number()) {
    return InvalidArgument("{}: must be a number, found {}", Join(path, key), value->type_name());
  }
  return value->get<double>();
}

Result<int64_t> IntegerField(const Json& object, const std::string& path, const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* value, Field(object, path, key));
  if (value->is_number_unsigned() && value->get<uint64_t>() > uint64_t{INT64_MAX}) {
    return InvalidArgument("{}: {} is too large", Join(path, key), value->dump());
  }
  if (!value->is_number_integer()) {
    return InvalidArgument("{}: must be an integer, found {}", Join(path, key),
                           value->is_number() ? value->dump() : value->type_name());
  }
  return value->get<int64_t>();
}

Result<std::string> StringField(const Json& object, const std::string& path,
                                const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* value, Field(object, path, key));
  if (!value->is_string()) {
    return InvalidArgument("{}: must be a string, found {}", Join(path, key), value->type_name());
  }
  return value->get<std::string>();
}

// A link: {"bandwidth", "latency"} and, inside a host, "topology".
Result<Link> ReadLink(const Json& json, const std::string& path, bool with_topology) {
  if (with_topology) {
    ALPA_RETURN_IF_ERROR(CheckObject(json, path, {"topology", "bandwidth", "latency"}));
  } else {
    ALPA_RETURN_IF_ERROR(CheckObject(json, path, {"bandwidth", "latency"}));
  }
  Link link;
  ALPA_ASSIGN_OR_RETURN(link.bandwidth, NumberField(json, path, "bandwidth"));
  ALPA_ASSIGN_OR_RETURN(link.latency, NumberField(json, path, "latency"));
  if (with_topology) {
    ALPA_ASSIGN_OR_RETURN(std::string name, StringField(json, path, "topology"));
    std::optional<Topology> topology = ParseTopology(name);
    if (!topology.has_value()) {
      return InvalidArgument(
          "{}.topology: unknown topology '{}'; expected all_to_all, switch, cube_mesh, ring or "
          "pcie",
          path, name);
    }
    link.topology = *topology;
  }
  ALPA_RETURN_IF_ERROR(ValidateLink(link, path));
  return link;
}

Result<DeviceSpec> ReadDevice(const Json& json, const std::string& name) {
  const std::string path = "device_types." + name;
  ALPA_RETURN_IF_ERROR(CheckObject(json, path, {"peak_flops", "memory_bytes", "memory_bandwidth"}));
  DeviceSpec device;
  device.name = name;
  ALPA_ASSIGN_OR_RETURN(const Json* flops, Field(json, path, "peak_flops"));
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
  ALPA_ASSIGN_OR_RETURN(device.memory_bytes, IntegerField(json, path, "memory_bytes"));
  ALPA_ASSIGN_OR_RETURN(device.memory_bandwidth, NumberField(json, path, "memory_bandwidth"));
  ALPA_RETURN_IF_ERROR(ValidateDeviceSpec(device));
  return device;
}

Result<ClusterSpec> ReadCluster(const Json& json) {
  ALPA_RETURN_IF_ERROR(
      CheckObject(json, "", {"name", "note", "device_types", "hosts", "inter_host", "racks"}));
  ClusterSpec spec;
  if (json.contains("name")) {
    ALPA_ASSIGN_OR_RETURN(spec.name, StringField(json, "", "name"));
  }
  if (json.contains("note")) {
    ALPA_ASSIGN_OR_RETURN(spec.note, StringField(json, "", "note"));
  }

  std::map<std::string, DeviceSpec> devices;
  ALPA_ASSIGN_OR_RETURN(const Json* types, Field(json, "", "device_types"));
  if (!types->is_object()) {
    return InvalidArgument("device_types: must be an object of device types by name, found {}",
                           types->type_name());
  }
  for (const auto& [name, value] : types->items()) {
    ALPA_ASSIGN_OR_RETURN(DeviceSpec device, ReadDevice(value, name));
    devices.emplace(name, std::move(device));
  }

  ALPA_ASSIGN_OR_RETURN(const Json* hosts, Field(json, "", "hosts"));
  if (!hosts->is_array() || hosts->empty()) {
    return InvalidArgument("hosts: must be a non-empty list of hosts, found {}",
                           hosts->is_array() ? "an empty list" : hosts->type_name());
  }
  std::set<std::string> used;
  for (size_t i = 0; i < hosts->size(); ++i) {
    const Json& entry = (*hosts)[i];
    const std::string path = fmt::format("hosts[{}]", i);
    ALPA_RETURN_IF_ERROR(
        CheckObject(entry, path, {"count", "device_type", "devices", "intra_host"}));
    int64_t count = 1;
    if (entry.contains("count")) {
      ALPA_ASSIGN_OR_RETURN(count, IntegerField(entry, path, "count"));
      if (count < 1) return InvalidArgument("{}.count: must be at least 1, found {}", path, count);
      if (count > (int64_t{1} << 20)) {
        return InvalidArgument("{}.count: {} hosts is more than this tool supports", path, count);
      }
    }
    HostSpec host;
    ALPA_ASSIGN_OR_RETURN(std::string type, StringField(entry, path, "device_type"));
    auto device = devices.find(type);
    if (device == devices.end()) {
      return InvalidArgument("{}.device_type: '{}' is not one of the device_types", path, type);
    }
    host.device = device->second;
    used.insert(type);
    ALPA_ASSIGN_OR_RETURN(host.devices, IntegerField(entry, path, "devices"));
    if (host.devices < 1) {
      return InvalidArgument("{}.devices: must be at least 1, found {}", path, host.devices);
    }
    ALPA_ASSIGN_OR_RETURN(const Json* intra, Field(entry, path, "intra_host"));
    ALPA_ASSIGN_OR_RETURN(host.intra_host, ReadLink(*intra, path + ".intra_host", true));
    spec.hosts.insert(spec.hosts.end(), count, host);
  }
  for (const auto& [name, device] : devices) {
    if (!used.contains(name)) {
      return InvalidArgument("device_types.{}: no host uses this device type", name);
    }
  }

  ALPA_ASSIGN_OR_RETURN(const Json* inter, Field(json, "", "inter_host"));
  ALPA_ASSIGN_OR_RETURN(spec.inter_host, ReadLink(*inter, "inter_host", false));
  if (json.contains("racks")) {
    const Json& racks = json["racks"];
    ALPA_RETURN_IF_ERROR(CheckObject(racks, "racks", {"hosts_per_rack", "inter_rack"}));
    RackSpec rack;
    ALPA_ASSIGN_OR_RETURN(rack.hosts_per_rack, IntegerField(racks, "racks", "hosts_per_rack"));
    ALPA_ASSIGN_OR_RETURN(const Json* link, Field(racks, "racks", "inter_rack"));
    ALPA_ASSIGN_OR_RETURN(rack.inter_rack, ReadLink(*link, "racks.inter_rack", false));
    spec.racks = rack;
  }
  ALPA_RETURN_IF_ERROR(ValidateClusterSpec(spec));
  return spec;
}

Json LinkJson(const Link& link, bool with_topology) {
  Json json = Json::object();
  if (with_topology) json["topology"] = std::string(TopologyName(link.topology));
  json["bandwidth"] = link.bandwidth;
  json["latency"] = link.latency;
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
                               {"memory_bandwidth", host.device.memory_bandwidth}};
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
