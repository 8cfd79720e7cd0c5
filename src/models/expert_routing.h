// GShard's top-2 routing of tokens to experts (Lepikhin et al. 2020; lingvo's top2_gating), as
// dense dots with the expert dimension explicit, shared by the zoo's MoE families (moe.h, the
// GShard GPT of Alpa's benchmarks; llama.h, Mixtral). The batch*seq tokens are split into groups
// of G consecutive tokens; each expert has C slots per group:
//   probs[g,s,e]   = softmax_e(einsum("gsh,he->gse", x, W_gate))   (no bias; f32, f64 for f64)
//   top-1 e1, top-2 e2 of each token: argmax over e (ties to the lowest index), e2 the argmax
//                    once e1 is masked out (with one expert, e2 = e1 and each gets half)
//   pos_1[g,s,e]   = sum_{s' < s} [e1(s') = e]                         (the token's slot in e1)
//   pos_2[g,s,e]   = sum_{s' < s} [e2(s') = e] + sum_{s'} [e1(s') = e] (after all first choices)
//                    as dots with a strictly lower-triangular ones matrix [G, G]
//   combine[g,s,e,c] = probs[g,s,e] / (probs[g,s,e1] + probs[g,s,e2])
//                      where e = e_k and c = pos_k[g,s,e] for k = 1 or 2, else 0
//                    (a choice with pos_k >= C has no slot: the token is dropped from it; as in
//                    GShard, a kept choice keeps its share of the two)
//   dispatch       = combine > 0
//   Dispatch:  in[e,g,c,h] = einsum("gsec,gsh->egch", dispatch, x)
//   Combine:   y[g,s,h]    = einsum("gsec,egch->gsh", combine, out)
// The combine weights are Mixtral's too: its softmax over the two chosen logits equals the two
// probabilities renormalised over the pair. Dispatch and combine are dots (no gather or scatter),
// so that sharding E gives expert parallelism with all-to-all. Gradients reach the gate through
// the combine weights; the top-2 choices and capacity masks (compares) carry none.
#ifndef ALPA_MODELS_EXPERT_ROUTING_H_
#define ALPA_MODELS_EXPERT_ROUTING_H_

#include <cstdint>
#include <vector>

#include "ir/builder.h"
#include "models/transformer.h"

namespace alpa::models {

struct RoutingShape {
  int64_t groups;    // batch * seq / G
  int64_t group;     // G, tokens per group
  int64_t experts;   // E
  int64_t capacity;  // C, slots per expert and group

  // GShard's: G = min(group_size, tokens), which must divide tokens (the caller checks), and
  // C = ceil(2 G / E), the mean load of top-2 routing.
  static RoutingShape Top2(int64_t tokens, int64_t group_size, int64_t experts);
};

// The routing of one MoE layer, both [groups, G, E, C] of the activations' type.
struct Routing {
  ir::Instruction* combine;   // the weight of expert e's slot c in token s's output
  ir::Instruction* dispatch;  // 1 where token s occupies slot c of expert e
};

// Emits the routing above. Gating (softmax, top-2, slots) runs in f32 (f64 for an f64 model),
// dispatch and combine in the activations' type.
class Top2Router {
 public:
  Top2Router(const RoutingShape& shape, ir::DType activations, TransformerEmitter& emit,
             ir::ComputationBuilder& b)
      : s_(shape),
        activations_(activations),
        gating_(activations == ir::DType::kF64 ? ir::DType::kF64 : ir::DType::kF32),
        emit_(emit),
        b_(b) {}

  const RoutingShape& shape() const { return s_; }
  // tokens [groups, G, H], gate [H, E].
  Routing Route(ir::Instruction* gate, ir::Instruction* tokens);
  // The expert inputs [E, groups, C, H] from tokens [groups, G, H].
  ir::Instruction* Dispatch(const Routing& routing, ir::Instruction* tokens);
  // The tokens' outputs [groups, G, H] from the experts' [E, groups, C, H].
  ir::Instruction* Combine(const Routing& routing, ir::Instruction* expert_outputs);

 private:
  // one_hot(argmax_e scores[g, s, e]) as pred [groups, G, E], ties to the lowest e.
  ir::Instruction* ArgMaxMask(ir::Instruction* scores);
  // pos[g, s, e] = sum_{s' < s} mask[g, s', e], of the gating type.
  ir::Instruction* ExclusiveCumsum(ir::Instruction* mask);
  // [g, s, e, c]: mask[g, s, e] and c == pos[g, s, e].
  ir::Instruction* Slots(ir::Instruction* mask, ir::Instruction* pos);
  ir::Instruction* Full(ir::DType dtype, double value, std::vector<int64_t> dims);

  RoutingShape s_;
  ir::DType activations_;
  ir::DType gating_;
  TransformerEmitter& emit_;
  ir::ComputationBuilder& b_;
};

}  // namespace alpa::models

#endif  // ALPA_MODELS_EXPERT_ROUTING_H_
