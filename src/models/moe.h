// The mixture-of-experts GPT of Alpa's benchmarks (GShard-style): the GPT of gpt.h in which every
// other block's MLP (blocks 1, 3, 5, ...) is a layer of `experts` expert MLPs with top-2 gating.
// MLPs are hidden -> 8 hidden -> hidden (Alpa's MoE uses mlp_factor 8) in dense and expert
// blocks alike.
#ifndef ALPA_MODELS_MOE_H_
#define ALPA_MODELS_MOE_H_

#include "ir/dtype.h"
#include "models/model.h"
#include "support/status.h"

namespace alpa::models {

struct MoeConfig {
  int64_t batch = 4;
  int64_t seq = 8;
  int64_t hidden = 16;
  int64_t layers = 2;
  int64_t heads = 2;
  int64_t vocab = 32;
  int64_t experts = 4;
  // Tokens per gating group (GShard's S); clipped to batch * seq.
  int64_t expert_group_size = 16;
  ir::DType dtype = ir::DType::kF32;
};

Result<Model> BuildMoe(const MoeConfig& config);

}  // namespace alpa::models

#endif  // ALPA_MODELS_MOE_H_
