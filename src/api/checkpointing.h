// Checkpoints of a training run (checkpoint/): each device saves its tiles of the carried values
// (weights, optimizer state, the step count) and a resume reads, for each device of another
// plan, the box of each value that device holds there, from the saved tiles it overlaps.
//
//   api::SaveCheckpoint(CarriedLayoutOf(exe), state.first_device(), state.tiles(),
//                       {.root = "ckpt", .model = "gpt-tiny", .method = "data", .step = 4});
//   Result<RestoredState> restored = api::RestoreCheckpoint(CarriedLayoutOf(exe2), "ckpt",
//                                                           "gpt-tiny");
//   DeviceState state = exe2.Adopt(std::move(restored->tiles)).value();
//
// Under MPI every rank makes the same call with its own device's tiles: rank 0 creates the
// checkpoint's directory, each rank writes its file, the tiles' places are all-gathered and rank
// 0 commits the manifest; a resume reads on each rank its own device's boxes alone.
#ifndef ALPA_API_CHECKPOINTING_H_
#define ALPA_API_CHECKPOINTING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/parallel_executable.h"
#include "ir/literal.h"
#include "runtime/communicator.h"
#include "support/status.h"

namespace alpa::api {

// Where a run keeps its carried values: the mesh, and each value's name, whole shape and layout.
struct CarriedLayout {
  std::vector<int64_t> mesh_shape;
  std::vector<ParallelExecutable::CarriedValue> values;
};

CarriedLayout CarriedLayoutOf(const ParallelExecutable& executable);
// Whole values held by one device (the reference interpreter's run): mesh [1], all replicated.
CarriedLayout WholeValuesLayout(const std::vector<std::string>& names,
                                const std::vector<ir::Shape>& shapes);

struct CheckpointTarget {
  std::string root;    // the checkpoint directory (checkpoint/checkpoint_store.h)
  std::string model;   // the model's name, fingerprinted with the values
  std::string method;  // the plan's method, recorded in the manifest
  int64_t step = 0;    // steps trained
  int64_t keep = 2;    // generations kept
};

// Saves `tiles` (by device held from `first_device`, then value) as the next checkpoint under
// target.root; returns its directory. With a communicator (MPI), collective: every rank calls it
// with its tiles.
Result<std::string> SaveCheckpoint(const CarriedLayout& layout, int64_t first_device,
                                   const std::vector<std::vector<ir::Literal>>& tiles,
                                   const CheckpointTarget& target,
                                   runtime::Communicator* communicator = nullptr);

struct RestoredState {
  std::string dir;  // the checkpoint read
  int64_t step = 0;
  std::string method;  // the saving plan's
  std::vector<int64_t> mesh_shape;
  std::vector<std::vector<ir::Literal>> tiles;  // by device held, then value
  std::vector<int64_t> bytes_read;              // by device held
};

// Reads the checkpoint at `path` (a root or one checkpoint's directory) into `layout`'s tiles
// for the devices this process holds (all, or its rank's with a communicator). Errors, before
// anything is read: another model (both fingerprints and the first value that differs named), a
// manifest of a newer version; while reading: a missing tile file or one whose checksum fails.
Result<RestoredState> RestoreCheckpoint(const CarriedLayout& layout, const std::string& path,
                                        const std::string& model,
                                        runtime::Communicator* communicator = nullptr);

}  // namespace alpa::api

#endif  // ALPA_API_CHECKPOINTING_H_
