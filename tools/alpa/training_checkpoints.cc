#include "tools/alpa/training_checkpoints.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>

#include "support/units.h"

namespace alpa::tools {

void AddCheckpointFlags(CLI::App& command, CheckpointFlags& flags) {
  CLI::Option* dir = command.add_option(
      "--checkpoint-dir", flags.dir,
      "Save the weights, optimizer state and step count here after the last step (each device "
      "its own tiles, as safetensors, and a manifest; committed atomically, the two newest "
      "kept)");
  command
      .add_option("--checkpoint-every", flags.every,
                  "With --checkpoint-dir: also save every N steps")
      ->check(CLI::PositiveNumber)
      ->needs(dir);
  command.add_option(
      "--resume", flags.resume,
      "Continue from the checkpoint in this directory (its LATEST) or this checkpoint, saved by "
      "any plan of this model: on another cluster, method or mesh its tiles are resharded");
}

Result<Resumed> ResumeFromFlags(ZooTraining& training, const CheckpointFlags& flags) {
  if (flags.resume.empty()) return Resumed{};
  const auto start = std::chrono::steady_clock::now();
  Result<api::RestoredState> restored = training.Resume(flags.resume);
  if (!restored.ok()) return restored.status().WithContext("--resume");
  int64_t bytes = 0;
  for (int64_t n : restored->bytes_read) bytes += n;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Resumed{
      restored->step,
      fmt::format("resumed     {} after step {} (saved by {} on mesh [{}]); read {} for {} "
                  "device{} in {}",
                  restored->dir, restored->step, restored->method,
                  fmt::join(restored->mesh_shape, ","), FormatBytes(bytes),
                  restored->bytes_read.size(), restored->bytes_read.size() == 1 ? "" : "s",
                  FormatSeconds(seconds))};
}

Status CheckpointIfDue(ZooTraining& training, const CheckpointFlags& flags,
                       const std::string& method, int64_t done, int64_t last, bool print) {
  if (flags.dir.empty()) return Status::Ok();
  if (done != last && (flags.every == 0 || done % flags.every != 0)) return Status::Ok();
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> saved =
      training.Save({.root = flags.dir, .model = "", .method = method, .step = done});
  if (!saved.ok()) {
    return saved.status().WithContext(fmt::format("saving the checkpoint of step {}", done));
  }
  if (print) {
    fmt::print(
        "{:>6}  checkpoint {} saved in {}\n", "", *saved,
        FormatSeconds(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
    std::fflush(stdout);
  }
  return Status::Ok();
}

}  // namespace alpa::tools
