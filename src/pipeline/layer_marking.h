// Layers as markers. Automatic layers: the forward computation's own layer boundaries (if any)
// replaced by the L layers automatic layer construction finds (layer_construction.h), written
// into the computation as ir/layer_boundary.h markers. Alpa's layers: the pipeline_marker
// custom-calls of a module lowered by Alpa, read as the same markers. Everything downstream (layer
// costs, stage slicing, the stage programs a pipelined plan runs, the plan's fingerprint of the
// loss) then reads one truth, the markers, whether the layers came from the model's author or from
// the clustering.
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

// Alpa's own markers (alpa/pipeline_parallel/primitive_def.py). Alpa's layer construction wraps
// the inputs of layer i in a `start` marker and its outputs in an `end` marker, each one
// custom-call on a tuple of the values, read back by get-tuple-element; the mark type and the
// layer's name are the marker's metadata:
//
//   %t = (f32[8,32], f32[32,32]) tuple(%x, %w), metadata={op_type="start" op_name="0"}
//   %m = (f32[8,32], f32[32,32]) custom-call(%t), custom_call_target="pipeline_marker",
//        custom_call_has_side_effect=true, metadata={op_type="start" op_name="0"}
//   %x.0 = f32[8,32] get-tuple-element(%m), index=0
//
// Current JAX writes no op_type, so alpa_cpp.mark_pipeline_boundary (python/alpa_cpp/pipeline.py)
// puts both in the backend_config instead, backend_config="end 0", which is read when the
// metadata has no op_type.
//
// Start markers become identities; the values an end marker passes on leave its layer, whose
// number is counted along the data flow (an end marker reached from k end markers ends layer
// k), and are then marked as MarkAutoLayers marks (chains to every later reader). An end marker
// whose value is the computation's result marks nothing. Errors name the marker: another mark
// type (`boundary`: Alpa's mark_pipeline_boundary() placed in a function lowered without
// alpa.parallelize, so nothing says which values cross it; backward and jvp markers: a whole
// train step, not a loss), or a marker not read through get-tuple-element.
Result<LayerMarkingStats> ReadAlpaPipelineMarkers(ir::Computation& loss);

}  // namespace alpa::pipeline

#endif  // ALPA_PIPELINE_LAYER_MARKING_H_
