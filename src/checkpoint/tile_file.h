// A device's tiles on disk: one safetensors file per device (https://huggingface.co/docs/
// safetensors), so any safetensors reader opens a tile, and a tile's bytes sit contiguous and
// row-major at a known offset, so a resume reads any box of it with positioned reads alone.
//
//   [8 bytes: header length N, little-endian][N bytes: JSON header, padded with spaces to a
//    multiple of 8][the tiles' bytes, in the header's order]
//   header: {"__metadata__": {"format": "alpa-checkpoint-tile", "device": "3"},
//            "<value name>": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...}
#ifndef ALPA_CHECKPOINT_TILE_FILE_H_
#define ALPA_CHECKPOINT_TILE_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "ir/literal.h"
#include "support/status.h"

namespace alpa::checkpoint {

// safetensors' name of a dtype ("F32", "BF16", "BOOL"); empty for one it has no name for.
std::string_view SafetensorsDTypeName(ir::DType dtype);
// The dtype of a safetensors name, or none.
std::optional<ir::DType> DTypeOfSafetensorsName(std::string_view name);

// CRC-32 (zlib's polynomial) of `bytes`, the checksum the manifest keeps of every tile.
uint32_t Crc32(std::string_view bytes);

struct NamedTile {
  std::string name;
  const ir::Literal* tile = nullptr;  // an array
};

// Where WriteTileFile put a tile: its bytes [begin, end) from the file's start, and their CRC-32.
struct WrittenTile {
  int64_t begin = 0;
  int64_t end = 0;
  uint32_t crc32 = 0;
};

// Writes `tiles` as the safetensors file `path` and flushes it to disk (fsync) before returning,
// one WrittenTile per tile in order. Errors name the path and the system's reason, or the tile
// whose dtype safetensors cannot hold.
Result<std::vector<WrittenTile>> WriteTileFile(const std::string& path, int64_t device,
                                               const std::vector<NamedTile>& tiles);

}  // namespace alpa::checkpoint

#endif  // ALPA_CHECKPOINT_TILE_FILE_H_
