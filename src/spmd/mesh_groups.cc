#include "spmd/mesh_groups.h"

#include <algorithm>
#include <map>

#include "support/status.h"

namespace alpa::spmd {

int64_t DeviceCount(const std::vector<int64_t>& mesh_shape) {
  int64_t count = 1;
  for (int64_t size : mesh_shape) count *= size;
  return count;
}

std::vector<int64_t> DeviceCoordinates(const std::vector<int64_t>& mesh_shape, int64_t device) {
  ALPA_CHECK(device >= 0 && device < DeviceCount(mesh_shape), "device {} is not on the mesh",
             device);
  std::vector<int64_t> coordinates(mesh_shape.size(), 0);
  for (size_t a = mesh_shape.size(); a-- > 0;) {
    coordinates[a] = device % mesh_shape[a];
    device /= mesh_shape[a];
  }
  return coordinates;
}

int64_t IndexOverAxes(const std::vector<int64_t>& mesh_shape, int64_t device,
                      const std::vector<int64_t>& axes) {
  const std::vector<int64_t> coordinates = DeviceCoordinates(mesh_shape, device);
  int64_t index = 0;
  for (int64_t axis : axes) {
    ALPA_CHECK(axis >= 0 && axis < static_cast<int64_t>(mesh_shape.size()),
               "mesh axis {} out of range", axis);
    index = index * mesh_shape[static_cast<size_t>(axis)] + coordinates[static_cast<size_t>(axis)];
  }
  return index;
}

std::vector<std::vector<int64_t>> AxesReplicaGroups(const std::vector<int64_t>& mesh_shape,
                                                    const std::vector<int64_t>& axes) {
  std::vector<int64_t> others;
  for (int64_t a = 0; a < static_cast<int64_t>(mesh_shape.size()); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) others.push_back(a);
  }
  // Group key: the index over the other axes; member slot: the index over `axes`.
  int64_t group_size = 1;
  for (int64_t axis : axes) group_size *= mesh_shape[static_cast<size_t>(axis)];
  std::map<int64_t, std::vector<int64_t>> groups;
  for (int64_t device = 0; device < DeviceCount(mesh_shape); ++device) {
    std::vector<int64_t>& group = groups[IndexOverAxes(mesh_shape, device, others)];
    group.resize(static_cast<size_t>(group_size), -1);
    group[static_cast<size_t>(IndexOverAxes(mesh_shape, device, axes))] = device;
  }
  std::vector<std::vector<int64_t>> result;
  for (auto& [key, group] : groups) result.push_back(std::move(group));
  return result;
}

}  // namespace alpa::spmd
