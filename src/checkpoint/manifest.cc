#include "checkpoint/manifest.h"

#include <fmt/format.h>

#include "support/fingerprint.h"
#include "support/json_text.h"

namespace alpa::checkpoint {
namespace {

Result<std::vector<int64_t>> IntegerList(const Json& object, const std::string& path,
                                         const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* list, JsonField(object, path, key));
  const std::string where = JsonPath(path, key);
  if (!list->is_array()) return InvalidArgument("{}: must be a list of integers", where);
  std::vector<int64_t> values;
  for (const Json& value : *list) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      return InvalidArgument("{}: must be a list of integers >= 0, found {}", where, list->dump());
    }
    values.push_back(value.get<int64_t>());
  }
  return values;
}

Result<SavedTile> ParseTile(const Json& json, const std::string& path, size_t rank) {
  ALPA_RETURN_IF_ERROR(CheckJsonObject(
      json, path, {"device", "file", "offset", "extent", "bytes", "crc32"}, "a tile"));
  SavedTile tile;
  ALPA_ASSIGN_OR_RETURN(tile.device, JsonInteger(json, path, "device"));
  ALPA_ASSIGN_OR_RETURN(tile.file, JsonString(json, path, "file"));
  if (tile.file.empty() || tile.file.find('/') != std::string::npos || tile.file[0] == '.') {
    return InvalidArgument("{}: '{}' is not a file name inside the checkpoint",
                           JsonPath(path, "file"), tile.file);
  }
  ALPA_ASSIGN_OR_RETURN(tile.region.offset, IntegerList(json, path, "offset"));
  ALPA_ASSIGN_OR_RETURN(tile.region.extent, IntegerList(json, path, "extent"));
  if (tile.region.offset.size() != rank || tile.region.extent.size() != rank) {
    return InvalidArgument("{}: offset and extent need one entry per dimension ({})", path, rank);
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> bytes, IntegerList(json, path, "bytes"));
  if (bytes.size() != 2 || bytes[0] > bytes[1]) {
    return InvalidArgument("{}: must be [begin, end] with begin <= end", JsonPath(path, "bytes"));
  }
  tile.begin = bytes[0];
  tile.end = bytes[1];
  ALPA_ASSIGN_OR_RETURN(const int64_t crc, JsonInteger(json, path, "crc32"));
  if (crc < 0 || crc > 0xffffffffll) {
    return InvalidArgument("{}: must be a 32-bit checksum", JsonPath(path, "crc32"));
  }
  tile.crc32 = static_cast<uint32_t>(crc);
  return tile;
}

Result<SavedValue> ParseValue(const Json& json, const std::string& path) {
  ALPA_RETURN_IF_ERROR(
      CheckJsonObject(json, path, {"name", "dtype", "shape", "layout", "tiles"}, "a value"));
  SavedValue value;
  ALPA_ASSIGN_OR_RETURN(value.name, JsonString(json, path, "name"));
  ALPA_ASSIGN_OR_RETURN(const std::string dtype, JsonString(json, path, "dtype"));
  const std::optional<ir::DType> parsed = ir::ParseDType(dtype);
  if (!parsed) return InvalidArgument("{}: unknown dtype '{}'", JsonPath(path, "dtype"), dtype);
  value.dtype = *parsed;
  ALPA_ASSIGN_OR_RETURN(value.dims, IntegerList(json, path, "shape"));
  ALPA_ASSIGN_OR_RETURN(value.layout, JsonString(json, path, "layout"));
  ALPA_ASSIGN_OR_RETURN(const Json* tiles, JsonField(json, path, "tiles"));
  if (!tiles->is_array()) return InvalidArgument("{}: must be a list", JsonPath(path, "tiles"));
  const int64_t element_bytes = ir::DTypeByteSize(value.dtype);
  int64_t covered = 0;
  for (size_t i = 0; i < tiles->size(); ++i) {
    const std::string where = fmt::format("{}[{}]", JsonPath(path, "tiles"), i);
    ALPA_ASSIGN_OR_RETURN(SavedTile tile, ParseTile((*tiles)[i], where, value.dims.size()));
    for (size_t d = 0; d < value.dims.size(); ++d) {
      if (tile.region.offset[d] + tile.region.extent[d] > value.dims[d]) {
        return InvalidArgument("{}: the tile {} runs past dimension {} of size {}", where,
                               ToString(tile.region), d, value.dims[d]);
      }
    }
    if (tile.end - tile.begin != tile.region.ElementCount() * element_bytes) {
      return InvalidArgument("{}: bytes [{}, {}) do not hold the {} elements of {}", where,
                             tile.begin, tile.end, tile.region.ElementCount(),
                             ToString(tile.region));
    }
    covered += tile.region.ElementCount();
    value.tiles.push_back(std::move(tile));
  }
  int64_t elements = 1;
  for (int64_t n : value.dims) elements *= n;
  if (covered != elements) {
    return InvalidArgument("{}: its tiles hold {} elements of the value's {}", path, covered,
                           elements);
  }
  return value;
}

}  // namespace

std::string StateFingerprint(const std::string& model, const std::vector<ValueSignature>& values) {
  std::string text = model;
  for (const ValueSignature& value : values) {
    text += fmt::format("\n{} {}[{}]", value.name, ir::DTypeName(value.dtype),
                        fmt::join(value.dims, ","));
  }
  return FingerprintHex(text);
}

// One field, a value or a tile per line: a manifest of thousands of tiles stays readable.
std::string ManifestText(const Manifest& manifest) {
  const Json head = {{"format", "alpa-checkpoint"},
                     {"version", manifest.version},
                     {"model", manifest.model},
                     {"fingerprint", manifest.fingerprint},
                     {"step", manifest.step},
                     {"plan", {{"method", manifest.method}, {"mesh", manifest.mesh_shape}}}};
  std::string text = "{\n";
  for (const auto& [key, value] : head.items()) {
    text += fmt::format(" {}: {},\n", Json(key).dump(), value.dump());
  }
  text += " \"values\": [";
  for (size_t v = 0; v < manifest.values.size(); ++v) {
    const SavedValue& value = manifest.values[v];
    const Json fields = {{"name", value.name},
                         {"dtype", ir::DTypeName(value.dtype)},
                         {"shape", value.dims},
                         {"layout", value.layout}};
    std::string line = fields.dump();
    line.pop_back();  // the closing brace: the tiles follow
    text += fmt::format("{}\n  {}, \"tiles\": [", v == 0 ? "" : ",", line);
    for (size_t t = 0; t < value.tiles.size(); ++t) {
      const SavedTile& tile = value.tiles[t];
      const Json entry = {{"device", tile.device},           {"file", tile.file},
                          {"offset", tile.region.offset},    {"extent", tile.region.extent},
                          {"bytes", {tile.begin, tile.end}}, {"crc32", tile.crc32}};
      text += fmt::format("{}\n   {}", t == 0 ? "" : ",", entry.dump());
    }
    text += "]}";
  }
  return text + "]\n}\n";
}

Result<Manifest> ParseManifest(std::string_view text, const std::string& source) {
  ALPA_ASSIGN_OR_RETURN(const Json json, ParseJsonText(text, source));
  auto in_source = [&](const Status& status) { return status.WithContext(source); };
  if (!json.is_object() || !json.contains("format") || json["format"] != "alpa-checkpoint") {
    return InvalidArgument(
        "{}: not a checkpoint manifest (its \"format\" is not "
        "\"alpa-checkpoint\")",
        source);
  }
  Manifest manifest;
  Result<int64_t> version = JsonInteger(json, "", "version");
  if (!version.ok()) return in_source(version.status());
  manifest.version = *version;
  if (manifest.version > kManifestVersion || manifest.version < 1) {
    return InvalidArgument(
        "{}: manifest version {} was written by a newer alpa (this one reads version {}); "
        "resume with that alpa or a later one",
        source, manifest.version, kManifestVersion);
  }
  const Status fields = CheckJsonObject(
      json, "", {"format", "version", "model", "fingerprint", "step", "plan", "values"},
      "the manifest");
  if (!fields.ok()) return in_source(fields);
  Result<Manifest> parsed = [&]() -> Result<Manifest> {
    ALPA_ASSIGN_OR_RETURN(manifest.model, JsonString(json, "", "model"));
    ALPA_ASSIGN_OR_RETURN(manifest.fingerprint, JsonString(json, "", "fingerprint"));
    ALPA_ASSIGN_OR_RETURN(manifest.step, JsonInteger(json, "", "step"));
    ALPA_ASSIGN_OR_RETURN(const Json* plan, JsonField(json, "", "plan"));
    ALPA_RETURN_IF_ERROR(CheckJsonObject(*plan, "plan", {"method", "mesh"}, "the plan"));
    ALPA_ASSIGN_OR_RETURN(manifest.method, JsonString(*plan, "plan", "method"));
    ALPA_ASSIGN_OR_RETURN(manifest.mesh_shape, IntegerList(*plan, "plan", "mesh"));
    ALPA_ASSIGN_OR_RETURN(const Json* values, JsonField(json, "", "values"));
    if (!values->is_array()) return InvalidArgument("values: must be a list");
    for (size_t i = 0; i < values->size(); ++i) {
      ALPA_ASSIGN_OR_RETURN(SavedValue value,
                            ParseValue((*values)[i], fmt::format("values[{}]", i)));
      manifest.values.push_back(std::move(value));
    }
    return manifest;
  }();
  if (!parsed.ok()) return in_source(parsed.status());
  return parsed;
}

}  // namespace alpa::checkpoint
