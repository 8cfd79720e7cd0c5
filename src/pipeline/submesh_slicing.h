// Placing the stages' sub-meshes on a homogeneous cluster (Alpa's get_sliced_virtual_submeshes,
// Alpa OSDI'22 Appendix A): num_hosts x devices_per_host devices, host h device j has id
// h · devices_per_host + j. Stages are placed largest first (ties in stage order): whole-host
// shapes (k, devices_per_host) take the next k whole hosts, sub-host shapes (1, m) are packed left
// to right within the next host with room. Shapes whose sizes are powers of two, as the stage DP's
// sub-mesh choices are, always tile a cluster whose devices_per_host is a power of two when their
// sizes add up to it.
//
// Alpa orders by np.argsort(sizes, kind="stable")[::-1], which puts equal-sized stages in reverse
// stage order; here they stay in stage order, so consecutive equal stages get neighbouring devices.
#ifndef ALPA_PIPELINE_SUBMESH_SLICING_H_
#define ALPA_PIPELINE_SUBMESH_SLICING_H_

#include <cstdint>
#include <vector>

#include "support/status.h"

namespace alpa::pipeline {

struct SubmeshShape {
  int64_t num_hosts = 1;
  int64_t devices_per_host = 1;
};

// Per stage, in the given order, its device ids in row-major order of its shape. Errors
// (INVALID_ARGUMENT): a cluster or shape dimension < 1, a shape that is neither whole hosts nor
// part of one host, sizes that do not add up to the cluster, and a stage that does not fit in what
// is left (the message names the stage and what is left).
Result<std::vector<std::vector<int64_t>>> SliceSubmeshes(int64_t num_hosts,
                                                         int64_t devices_per_host,
                                                         const std::vector<SubmeshShape>& shapes);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_SUBMESH_SLICING_H_
