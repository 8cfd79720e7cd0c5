// Internal to the kernels layer: the exact direct convolution loop behind ReferenceConvolution
// and the fallback of Convolution.
#ifndef ALPA_KERNELS_REFERENCE_CONVOLUTION_H_
#define ALPA_KERNELS_REFERENCE_CONVOLUTION_H_

#include "kernels/convolution.h"
#include "support/status.h"

namespace alpa::kernels::internal {

// `params` must have passed ValidateConvolutionParams and the buffers must hold the sizes it
// implies. Unimplemented for dtypes the kernels do not compute with.
Status DirectConvolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                         const void* kernel, void* output);

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_REFERENCE_CONVOLUTION_H_
