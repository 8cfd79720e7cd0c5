// `alpa run`'s checkpoints: --checkpoint-dir D [--checkpoint-every N] saves the carried values
// (weights, optimizer state, step count) every N steps and after the last, and --resume PATH
// continues from a checkpoint saved by any plan of the same model (api/checkpointing.h): the
// steps go on from the one after it, each step's batch drawn as an uninterrupted run draws it.
#ifndef ALPA_TOOLS_ALPA_TRAINING_CHECKPOINTS_H_
#define ALPA_TOOLS_ALPA_TRAINING_CHECKPOINTS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "support/status.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {

struct CheckpointFlags {
  std::string dir;     // --checkpoint-dir; empty: none saved
  int64_t every = 0;   // --checkpoint-every; 0: after the last step alone
  std::string resume;  // --resume: a checkpoint directory or one checkpoint in it
  bool any() const { return !dir.empty() || !resume.empty(); }
};

void AddCheckpointFlags(CLI::App& command, CheckpointFlags& flags);

// Where a run starts: the index of its first step (0, or the resumed checkpoint's step), and
// with --resume the header's line on what was read ("resumed     ckpt/... after step 4 ...").
struct Resumed {
  int64_t first_step = 0;
  std::string note;
};

// Continues `training` from flags.resume when given. Errors name --resume.
Result<Resumed> ResumeFromFlags(ZooTraining& training, const CheckpointFlags& flags);

// After `done` steps in all, of a run ending after step `last`: saves a checkpoint when one is
// due (every flags.every steps, and after the last), with `method` in its manifest; prints its
// directory and time when `print`.
Status CheckpointIfDue(ZooTraining& training, const CheckpointFlags& flags,
                       const std::string& method, int64_t done, int64_t last, bool print);

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_TRAINING_CHECKPOINTS_H_
