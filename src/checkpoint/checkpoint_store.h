// Checkpoints on disk: a directory of generations, each committed atomically.
//
//   D/LATEST                          "ckpt-000003-step-12": the checkpoint to resume from
//   D/ckpt-000003-step-12/            manifest.json and device-NNNN.safetensors (tile_file.h)
//   D/ckpt-000002-step-8/             the one before, kept until a newer one is committed
//   D/ckpt-000004-step-16.partial/    being written; ignored, and removed by the next writer
//
// Committing: every tile file and the manifest are written and fsynced inside the .partial
// directory, the directory is fsynced and renamed to its final name, D is fsynced, then LATEST is
// replaced by rename (write LATEST.partial, fsync, rename, fsync D), and only then are the
// generations before the previous one removed. A crash at any point leaves LATEST naming a whole
// checkpoint: the previous one until the rename of LATEST, the new one after.
#ifndef ALPA_CHECKPOINT_CHECKPOINT_STORE_H_
#define ALPA_CHECKPOINT_CHECKPOINT_STORE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/manifest.h"
#include "checkpoint/tile_layout.h"
#include "ir/literal.h"
#include "support/status.h"

namespace alpa::checkpoint {

// A checkpoint being written: `root` is D, `name` its final directory name.
struct PendingCheckpoint {
  std::string root;
  std::string name;
  std::string partial_dir() const;
};

// The next generation's checkpoint of `step` under `root` (LATEST's generation + 1, or 1). It only
// names it: every process of a run may call it and gets the same name until it is committed.
Result<PendingCheckpoint> NextCheckpoint(const std::string& root, int64_t step);

// Creates `root` if needed and the pending directory afresh, removing what a crash left
// unfinished: .partial directories, and generations newer than LATEST's (renamed into place, but
// never named by LATEST). One process calls it before any writes a tile.
Status CreatePendingDirectory(const PendingCheckpoint& pending);

// "device-0003.safetensors": the file device 3 writes its tiles to.
std::string TileFileName(int64_t device);

// One device's tile of a value, with where it lies in the whole value.
struct DeviceTile {
  std::string name;
  TileRegion region;
  const ir::Literal* tile = nullptr;
};

// Writes `device`'s tiles into the pending directory (device-NNNN.safetensors, fsynced): the
// manifest's entries for them, in order.
Result<std::vector<SavedTile>> WriteDeviceTiles(const PendingCheckpoint& pending, int64_t device,
                                                const std::vector<DeviceTile>& tiles);

// Writes the manifest and commits the pending checkpoint as the header describes, then removes
// every generation older than the `keep` newest (at least 2 are kept).
Status CommitCheckpoint(const PendingCheckpoint& pending, const Manifest& manifest,
                        int64_t keep = 2);

// A committed checkpoint opened for reading.
class Checkpoint {
 public:
  // `path` is a checkpoint root (with LATEST) or one checkpoint's directory. Errors: no
  // checkpoint there, a manifest that does not parse (the field named) or of a newer version.
  static Result<Checkpoint> Open(const std::string& path);

  Checkpoint(Checkpoint&&) noexcept;
  Checkpoint& operator=(Checkpoint&&) noexcept;
  ~Checkpoint();

  const std::string& dir() const { return dir_; }
  const Manifest& manifest() const { return manifest_; }
  // The saved value named `name`, or null.
  const SavedValue* Find(const std::string& name) const;

  // The box `region` of `value`, read from the tiles it overlaps with positioned reads of the
  // bytes inside it alone. A tile read whole is checked against its CRC-32. Errors name the file:
  // missing, shorter than the manifest says, or a checksum that does not match.
  Result<ir::Literal> ReadRegion(const SavedValue& value, const TileRegion& region);

  // Bytes read from tile files so far.
  int64_t bytes_read() const { return bytes_read_; }

 private:
  Checkpoint() = default;
  Result<int> FileDescriptor(const std::string& file);

  std::string dir_;
  Manifest manifest_;
  std::map<std::string, int> open_files_;
  int64_t bytes_read_ = 0;
};

}  // namespace alpa::checkpoint

#endif  // ALPA_CHECKPOINT_CHECKPOINT_STORE_H_
