// A checkpoint's manifest (manifest.json beside the tile files): what was saved and where.
//
//   {"format": "alpa-checkpoint", "version": 1, "model": "gpt-tiny", "fingerprint": "9c0e...",
//    "step": 4, "plan": {"method": "data", "mesh": [4]},
//    "values": [{"name": "w0", "dtype": "f32", "shape": [64, 256], "layout": "[R,S0]",
//                "tiles": [{"device": 0, "file": "device-0000.safetensors",
//                           "offset": [0, 0], "extent": [64, 64], "bytes": [120, 16504],
//                           "crc32": 305419896}, ...]}, ...]}
//
// The values are the ones a step carries to the next (weights, optimizer state, the step count),
// in step order; each value's tiles partition it (tile_layout.h). `bytes` is the tile's byte
// range in its file. The fingerprint (StateFingerprint) is of the model and its values' names,
// dtypes and shapes, none of the plan: a checkpoint resumes on any plan of the same model.
#ifndef ALPA_CHECKPOINT_MANIFEST_H_
#define ALPA_CHECKPOINT_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/tile_layout.h"
#include "ir/dtype.h"
#include "support/status.h"

namespace alpa::checkpoint {

inline constexpr int64_t kManifestVersion = 1;

struct SavedTile {
  int64_t device = 0;  // the mesh device that saved it
  std::string file;    // relative to the checkpoint's directory
  TileRegion region;
  int64_t begin = 0;  // its bytes in the file: [begin, end)
  int64_t end = 0;
  uint32_t crc32 = 0;
};

struct SavedValue {
  std::string name;
  ir::DType dtype = ir::DType::kF32;
  std::vector<int64_t> dims;
  std::string layout;  // the sharding spec it was saved from, for people reading the manifest
  std::vector<SavedTile> tiles;
};

struct Manifest {
  int64_t version = kManifestVersion;
  std::string model;
  std::string fingerprint;
  int64_t step = 0;  // steps trained when saved
  std::string method;
  std::vector<int64_t> mesh_shape;
  std::vector<SavedValue> values;
};

// The values a checkpoint holds, as StateFingerprint reads them.
struct ValueSignature {
  std::string name;
  ir::DType dtype = ir::DType::kF32;
  std::vector<int64_t> dims;
};

// 16 hex digits of a hash of the model's name and its carried values' names, dtypes and shapes.
std::string StateFingerprint(const std::string& model, const std::vector<ValueSignature>& values);

std::string ManifestText(const Manifest& manifest);

// Reads manifest text; `source` names it in errors, which name the field ("values[2].tiles[0].
// extent: ..."). A version above kManifestVersion is refused as written by a newer alpa.
Result<Manifest> ParseManifest(std::string_view text, const std::string& source);

}  // namespace alpa::checkpoint

#endif  // ALPA_CHECKPOINT_MANIFEST_H_
