// Devices of a logical mesh and the replica groups of collectives over some of its axes.
//
// Devices are numbered row-major over the mesh: on a mesh of shape M the device at coordinates
// c has id sum_a c[a] * stride[a], stride[a] = prod_{b > a} M[b] (axis 0 most major). A
// collective over axes A runs once per combination of the other axes: its replica groups are the
// devices that differ only along A. Within a group, members are ordered by their linear index
// over A in the order A is given (first axis most major), the order in which an all-gather
// concatenates their tiles and a reduce-scatter or all-to-all hands out blocks. That is also the
// tile index of a dimension split over A (sharding_spec.h): member k holds tile k.
#ifndef ALPA_SPMD_MESH_GROUPS_H_
#define ALPA_SPMD_MESH_GROUPS_H_

#include <cstdint>
#include <vector>

namespace alpa::spmd {

// Number of devices of the mesh (the product of its axis sizes; 1 for the empty mesh).
int64_t DeviceCount(const std::vector<int64_t>& mesh_shape);

// Coordinates of `device` on the mesh, one per axis.
std::vector<int64_t> DeviceCoordinates(const std::vector<int64_t>& mesh_shape, int64_t device);

// Linear index of `device` over `axes` (in the given order, first most major):
//   index = sum_i c[axes[i]] * prod_{j > i} M[axes[j]]      (0 for no axes)
int64_t IndexOverAxes(const std::vector<int64_t>& mesh_shape, int64_t device,
                      const std::vector<int64_t>& axes);

// The replica groups of a collective over `axes`: one group per combination of the other axes
// (groups ordered by the row-major index over the other axes), each with its members in the order
// of IndexOverAxes. No axes: every device alone.
std::vector<std::vector<int64_t>> AxesReplicaGroups(const std::vector<int64_t>& mesh_shape,
                                                    const std::vector<int64_t>& axes);

}  // namespace alpa::spmd

#endif  // ALPA_SPMD_MESH_GROUPS_H_
