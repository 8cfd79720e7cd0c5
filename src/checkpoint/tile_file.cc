#include "checkpoint/tile_file.h"

#include <zlib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "checkpoint/durable_file.h"

namespace alpa::checkpoint {
namespace {

using ir::DType;

constexpr std::pair<std::string_view, DType> kSafetensorsTypes[] = {
    {"F16", DType::kF16},  {"BF16", DType::kBF16}, {"F32", DType::kF32}, {"F64", DType::kF64},
    {"I8", DType::kS8},    {"I16", DType::kS16},   {"I32", DType::kS32}, {"I64", DType::kS64},
    {"U8", DType::kU8},    {"U16", DType::kU16},   {"U32", DType::kU32}, {"U64", DType::kU64},
    {"BOOL", DType::kPred}};

}  // namespace

std::string_view SafetensorsDTypeName(DType dtype) {
  for (const auto& [name, type] : kSafetensorsTypes) {
    if (type == dtype) return name;
  }
  return {};
}

std::optional<DType> DTypeOfSafetensorsName(std::string_view name) {
  for (const auto& [text, type] : kSafetensorsTypes) {
    if (text == name) return type;
  }
  return std::nullopt;
}

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes lengths as uInt: feed it in pieces below 4 GiB.
  constexpr size_t kPiece = size_t{1} << 30;
  for (size_t at = 0; at < bytes.size(); at += kPiece) {
    const size_t n = std::min(kPiece, bytes.size() - at);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(crc);
}

Result<std::vector<WrittenTile>> WriteTileFile(const std::string& path, int64_t device,
                                               const std::vector<NamedTile>& tiles) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "alpa-checkpoint-tile"}, {"device", std::to_string(device)}};
  std::vector<WrittenTile> written;
  int64_t data_size = 0;
  for (const NamedTile& named : tiles) {
    const ir::Shape& shape = named.tile->shape();
    const std::string_view dtype = SafetensorsDTypeName(shape.dtype());
    if (dtype.empty()) {
      return Unimplemented("{}: safetensors has no dtype for {} ({}); a checkpoint cannot hold it",
                           path, ir::DTypeName(shape.dtype()), named.name);
    }
    const int64_t size = named.tile->size_bytes();
    header[named.name] = {
        {"dtype", dtype}, {"shape", shape.dims()}, {"data_offsets", {data_size, data_size + size}}};
    written.push_back({data_size, data_size + size, 0});
    data_size += size;
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  std::string length(8, '\0');
  for (size_t i = 0; i < 8; ++i)
    length[i] = static_cast<char>((header_text.size() >> (8 * i)) & 0xff);
  const int64_t data_start = static_cast<int64_t>(8 + header_text.size());

  std::vector<std::string_view> pieces = {length, header_text};
  for (size_t i = 0; i < tiles.size(); ++i) {
    const std::string_view bytes(reinterpret_cast<const char*>(tiles[i].tile->data()),
                                 static_cast<size_t>(tiles[i].tile->size_bytes()));
    pieces.push_back(bytes);
    written[i].crc32 = Crc32(bytes);
    written[i].begin += data_start;
    written[i].end += data_start;
  }
  ALPA_RETURN_IF_ERROR(WriteFileDurably(path, pieces));
  return written;
}

}  // namespace alpa::checkpoint
