// What a pipeline moves between two consecutive stages on different devices, per micro-batch, as
// the pipeline runtime moves it (spmd/cross_mesh.h), for the planner's simulated step
// (pipeshard_planner.h): each value the sending stage's last layer sends on crosses forward into
// the layout its first reader in the receiving stage takes it in, and its gradient crosses back
// into the layout the sender takes its cotangent in; where that layout holds the value on k
// replicas, it crosses once and the replicas all-gather it inside their mesh (Alpa's local
// all-gather, sharding/local_all_gather.h):
//   forward_s  = transfer(the activations' bytes between the meshes) + their gathers, in turn
//   backward_s = the same for their gradients, into the sender's mesh
//   transfer(b) = latency + b / (bandwidth x devices of the smaller sub-mesh)
// over the slowest link between the two sub-meshes (the inter-host bandwidth shared by the
// devices of a host). A value whose layouts the table does not hold (no layer of the receiving
// stage reads it, or a table built by hand) crosses once at its bytes, with no gather.
#ifndef ALPA_PLAN_STAGE_HANDOVER_H_
#define ALPA_PLAN_STAGE_HANDOVER_H_

#include <cstdint>
#include <vector>

#include "cluster/cluster_spec.h"
#include "plan/layer_costs.h"
#include "plan/pipeshard_planner.h"
#include "support/status.h"

namespace alpa::plan {

struct StageHandover {
  double forward_s = 0;
  double backward_s = 0;
  int64_t between_meshes_bytes = 0;   // forward and backward together
  int64_t within_receiver_bytes = 0;  // the gathers', forward and backward together
};

// transfer(bytes) above, from the devices `from` to the devices `to`.
double TransferSeconds(const cluster::ClusterSpec& cluster, const std::vector<int64_t>& from,
                       const std::vector<int64_t>& to, int64_t bytes);

// The layouts at the edges of `stage` as its layers' plans take them; none where the table holds
// no layouts.
StageEdgeLayouts EdgeLayoutsOf(const LayerCostTable& table, const StageChoice& stage);

// The handover from stage `from` on `from_devices` to the next stage `to` on `to_devices` (the
// two sets disjoint). Errors: a layout in the table that does not fit its value or its mesh.
Result<StageHandover> PriceStageHandover(const LayerCostTable& table,
                                         const cluster::ClusterSpec& cluster,
                                         const StageChoice& from,
                                         const std::vector<int64_t>& from_devices,
                                         const StageChoice& to,
                                         const std::vector<int64_t>& to_devices);

// A weight several stages read (a tied embedding) is updated on each with the sum of all their
// gradients: before its update each holder receives every other holder's gradient sum, held as
// the sender sums it (LayerCost::weight_gradient_specs: a pending sum's terms each cross), into
// the layout it sums its own in, by the same route.
struct GradientExchange {
  double seconds = 0;
  int64_t between_meshes_bytes = 0;
  int64_t within_receiver_bytes = 0;
};

// The exchange of `weight`'s (the loss's parameter number) gradient sum from stage `from` on
// `from_devices` to stage `to` on `to_devices`, both reading it. Where the table holds no layouts
// it crosses once at the weight's bytes. Errors: as PriceStageHandover's.
Result<GradientExchange> PriceGradientExchange(const LayerCostTable& table,
                                               const cluster::ClusterSpec& cluster, int64_t weight,
                                               const StageChoice& from,
                                               const std::vector<int64_t>& from_devices,
                                               const StageChoice& to,
                                               const std::vector<int64_t>& to_devices);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_STAGE_HANDOVER_H_
