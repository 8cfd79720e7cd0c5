// Training batches read from an array file (api/array_file.h: .npy, .npz, .safetensors) in
// place of a model's synthetic ones: what `alpa run MODEL --batch-file FILE` trains on.
//
// Each batch parameter of the loss (a parameter that is not a weight) takes the array of its
// name, or of its name without JAX's ".N" suffix (parameter x.1 takes array x); a file of one
// array feeds a loss of one batch parameter, whatever the names. An array stacks k steps'
// batches along dimension 0: its other dimensions are the parameter's, its rows a multiple k of
// the rows of one step (the micro-batches stacked). The batch drawn from seed s is block s mod k,
// so step i of a run with --seed S reads block (S + i) mod k, cycling through the file.
//
// Values convert to the parameter's type as NumPy's astype would, where nothing is lost that a
// model needs: floats to any float type, integers and bools to any integer type they fit and to
// floats. A float array for an integer parameter is an error, as is an id at or above the size of
// the table the parameter indexes (models::IndexBound: an embedding's rows, the classes of a
// one-hot), which a gather would silently clamp.
#ifndef ALPA_API_BATCH_FILE_H_
#define ALPA_API_BATCH_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::api {

// The batches of `path` for `loss` (whose parameters `weights` are the weights), checked for
// steps of `rows_per_step` rows. Errors name the file, the array and the parameter: an array
// missing, left over or of the wrong shape, rows not a multiple of a step's, a type that does not
// convert, an id out of range (its row).
Result<models::BatchGenerator> BatchesFromFile(const std::string& path, const ir::Computation& loss,
                                               const std::vector<int64_t>& weights,
                                               int64_t rows_per_step);

}  // namespace alpa::api

#endif  // ALPA_API_BATCH_FILE_H_
