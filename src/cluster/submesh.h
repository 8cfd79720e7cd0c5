// The sub-mesh shapes the stage-construction DP may give a stage (Alpa's `get_submesh_choices`,
// paper section 5.2 and appendix A).
//
// A homogeneous cluster of N hosts with M devices each, without racks, gives 2-D shapes
// (hosts, devices per host):
//   (1,1), (1,2), (1,4), ..., (1,M)   inside one host: powers of two up to M; when M is not a power
//                                     of two (Alpa rejects that), M itself is appended;
//   (k,M)                             k whole hosts: k = 2..N for kAll; k = 2,4,8,... <= N for
//                                     kPowerOfTwo (Alpa's default space, "power_of_two"); k = 2,4
//                                     <= min(N,4) for kSmallPowerOfTwo.
// Shapes (k>1, m<M) are left out as Alpa does: they are dominated (appendix A).
//
// With racks of R hosts (a third level), the shapes are 3-D (racks, hosts, devices per host): the
// list above for one rack (N = R) with a leading 1, then (r,R,M) for r whole racks, r from 2 to
// the number of racks, limited by the same space.
//
// A heterogeneous cluster (hosts that differ in device type, count or link) is split into host
// types, in order of first appearance; each sub-mesh lies in hosts of one type, with that type's
// M and its number of hosts as N. Racks are used only when the cluster is homogeneous.
#ifndef ALPA_CLUSTER_SUBMESH_H_
#define ALPA_CLUSTER_SUBMESH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"

namespace alpa::cluster {

enum class SubmeshSpace { kPowerOfTwo, kSmallPowerOfTwo, kAll };

struct Submesh {
  // (hosts, devices per host), or (racks, hosts per rack, devices per host) with racks.
  std::vector<int64_t> shape;
  // Index of the host type (see HostTypes) the sub-mesh lies in; 0 for homogeneous clusters.
  int64_t host_type = 0;

  int64_t devices() const;
  friend bool operator==(const Submesh&, const Submesh&) = default;
};

struct HostType {
  HostSpec host;               // the figures shared by the hosts of this type
  std::vector<int64_t> hosts;  // their indices in the cluster
};

// The distinct hosts of `spec`, in order of first appearance.
std::vector<HostType> HostTypes(const ClusterSpec& spec);

std::vector<Submesh> EnumerateSubmeshes(const ClusterSpec& spec,
                                        SubmeshSpace space = SubmeshSpace::kPowerOfTwo);

// The sub-meshes of `width` devices inside one host, any width up to the host's and not only the
// spaces' powers of two: (1, width), or (1, 1, width) with racks, on each host type that has at
// least `width` devices. Uneven stages (1 + 3 devices) are costed on these when a manual plan
// names them; the stage DP does not search them, since widths that are not powers of two need not
// tile a host (3 + 3 + 2 devices do not fit two hosts of 4).
std::vector<Submesh> SubHostSubmeshes(const ClusterSpec& spec, int64_t width);

// The logical shapes of rank `rank` a sub-mesh of `devices` devices can be viewed as: every
// ordered factorisation into `rank` dimensions >= 1, in lexicographic order. Rank 2 gives Alpa's
// "all" logical space: (1,n), ..., (n,1) for the divisors of n.
std::vector<std::vector<int64_t>> LogicalMeshShapes(int64_t devices, int rank);

}  // namespace alpa::cluster

#endif  // ALPA_CLUSTER_SUBMESH_H_
