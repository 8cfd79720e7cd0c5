// `alpa run MODEL --cluster C [--backend mpi] --elastic --checkpoint-dir D ...`: training that
// outlives a lost device. Started by hand (not under mpirun), this process supervises: it
// launches the run (`mpirun -np N alpa run ...` for --backend mpi, else one `alpa run ...`
// process of N in-process devices) with the same flags, and when that run fails after training
// began (a killed rank: MPI cannot shrink a world, so its survivors end too), it re-plans for the
// devices left (the cluster less one device, cluster::WithoutDevice), relaunches from the last
// checkpoint in D and goes on until the steps asked for are trained. It prints what changed: the
// plan before and after, the steps lost (trained after the last checkpoint) and the time to
// recover (from the failure to the relaunched run's first step).
//
// The runs it launches tell it how far they got through --progress-file (a hidden flag): JSON
// lines, {"event": "start", "method", "mesh", "devices", "first_step", "unix_time_s"} once the
// steps begin, then {"event": "step", "step", "unix_time_s"} after each.
#ifndef ALPA_TOOLS_ALPA_ELASTIC_RUN_H_
#define ALPA_TOOLS_ALPA_ELASTIC_RUN_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/alpa/run_command.h"

namespace alpa::tools {

// Supervises the run `options` describes; `arguments` are the command line after the program's
// name ("run", MODEL, flags...), which each launched run repeats. Returns the exit code.
int RunElastic(const RunOptions& options, const std::vector<std::string>& arguments);

// The --progress-file a supervised run writes (on rank 0 alone under MPI); a no-op without one.
class ProgressLog {
 public:
  explicit ProgressLog(const std::string& path);
  ~ProgressLog();
  ProgressLog(const ProgressLog&) = delete;
  ProgressLog& operator=(const ProgressLog&) = delete;

  void Start(const std::string& method, const std::string& mesh, int64_t devices,
             int64_t first_step);
  void Step(int64_t step);

 private:
  void Write(const std::string& line);
  std::FILE* file_ = nullptr;
};

}  // namespace alpa::tools

#endif  // ALPA_TOOLS_ALPA_ELASTIC_RUN_H_
