// Automatic layers as markers: the forward computation's own layer boundaries (if any) replaced
// by the L layers automatic layer construction finds (layer_construction.h), written into the
// computation as ir/layer_boundary.h markers. Everything downstream (layer costs, stage slicing,
// the stage programs a pipelined plan runs, the plan's fingerprint of the loss) then reads one
// truth, the markers, whether the layers came from the model's author or from the clustering.
//
// A value of layer k that a later layer j reads leaves through a chain of markers k, k+1, ...,
// j - 1 (each an identity), so pipeline::LayersFromBoundaries gives every instruction the
// clustering's layer. Values that depend on no parameter (iotas, broadcast constants) are not
// marked: every stage recomputes them (stage_slicing.h), and they join their first reader.
#ifndef ALPA_PIPELINE_LAYER_MARKING_H_
#define ALPA_PIPELINE_LAYER_MARKING_H_

#include <cstdint>

#include "ir/computation.h"
#include "support/status.h"

namespace alpa::pipeline {

struct LayerMarkingStats {
  int64_t removed = 0;   // the computation's own forward markers
  int64_t inserted = 0;  // markers of the new layers
};

// Removes the forward layer boundaries of `loss` (a forward computation: backward markers are an
// error, since autodiff pairs them with forward ones) and marks it into `num_layers` layers by
// ClusterComputationIntoLayers. Errors: the clustering's (num_layers outside [1, #instructions]),
// or a backward marker, named.
Result<LayerMarkingStats> MarkAutoLayers(ir::Computation& loss, int64_t num_layers,
                                         double eps = 0.5);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_LAYER_MARKING_H_
