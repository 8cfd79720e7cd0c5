#include "models/zoo.h"

#include <fmt/format.h>

#include <tuple>
#include <variant>

#include "models/gpt.h"
#include "models/llama.h"
#include "models/mlp.h"
#include "models/moe.h"
#include "models/wresnet.h"

namespace alpa::models {
namespace {

using ir::DType;
using Config = std::variant<GptConfig, MoeConfig, LlamaConfig, WResNetConfig, MlpConfig>;

struct Recipe {
  ZooEntry entry;
  Config config;
  autodiff::TrainStepOptions training;
};

// Alpa's benchmark training (reference "Benchmarks" 3.1): GPT and MoE in f16 with an f32 master
// copy, remat per layer, GPT with AdamW and MoE with Adafactor; Wide-ResNet in f32 with SGD
// momentum 0.9.
autodiff::TrainStepOptions AlpaTransformerTraining(autodiff::OptimizerKind optimizer) {
  return {.optimizer = {.kind = optimizer, .learning_rate = 1e-2}, .remat = true};
}
autodiff::TrainStepOptions AlpaWResNetTraining() {
  return {
      .optimizer = {.kind = autodiff::OptimizerKind::kSgd, .learning_rate = 0.1, .momentum = 0.9},
      .remat = true};
}
// Tiny models: f32, no remat, a learning rate that shows learning within 50 steps.
autodiff::TrainStepOptions TinyTraining(autodiff::OptimizerKind kind, double learning_rate) {
  return {.optimizer = {.kind = kind, .learning_rate = learning_rate, .momentum = 0.9}};
}

Recipe Gpt(const char* size, int64_t seq, int64_t hidden, int64_t layers, int64_t heads) {
  return {{fmt::format("gpt-{}", size), "gpt",
           fmt::format("GPT {}: S {}, H {}, L {}, {} heads, V 51200", size, seq, hidden, layers,
                       heads)},
          GptConfig{.batch = 8,
                    .seq = seq,
                    .hidden = hidden,
                    .layers = layers,
                    .heads = heads,
                    .vocab = 51200,
                    .dtype = DType::kF16},
          AlpaTransformerTraining(autodiff::OptimizerKind::kAdamW)};
}

Recipe Bert(const char* size, int64_t hidden, int64_t layers, int64_t heads) {
  return {{fmt::format("bert-{}", size), "bert",
           fmt::format("BERT-{} encoder, masked LM: S 512, H {}, L {}, {} heads, V 30522", size,
                       hidden, layers, heads)},
          GptConfig{.batch = 8,
                    .seq = 512,
                    .hidden = hidden,
                    .layers = layers,
                    .heads = heads,
                    .vocab = 30522,
                    .dtype = DType::kF16,
                    .causal = false},
          AlpaTransformerTraining(autodiff::OptimizerKind::kAdamW)};
}

Recipe Moe(const char* size, int64_t hidden, int64_t layers, int64_t experts) {
  return {{fmt::format("moe-{}", size), "moe",
           fmt::format("MoE {}: S 1024, H {}, L {}, 16 heads, V 32000, {} experts, group 2048",
                       size, hidden, layers, experts)},
          MoeConfig{.batch = 8,
                    .seq = 1024,
                    .hidden = hidden,
                    .layers = layers,
                    .heads = 16,
                    .vocab = 32000,
                    .experts = experts,
                    .expert_group_size = 2048,
                    .dtype = DType::kF16},
          AlpaTransformerTraining(autodiff::OptimizerKind::kAdafactor)};
}

// The published Llama 3 and Mixtral shapes (8 key/value heads) at the 8K sequence of their
// pre-training, in bf16. `positions`: the RoPE's max_position_embeddings.
LlamaConfig PublishedDecoder(int64_t hidden, int64_t layers, int64_t heads, int64_t ffn,
                             int64_t vocab, double rope_theta, int64_t positions) {
  return {.batch = 8,
          .seq = 8192,
          .hidden = hidden,
          .layers = layers,
          .heads = heads,
          .kv_heads = 8,
          .ffn = ffn,
          .vocab = vocab,
          .rope_theta = rope_theta,
          .max_positions = positions,
          .dtype = DType::kBF16};
}

// Llama 3 (vocabulary 128256, RoPE theta 500000; 8192 positions, 131072 for 3.1, the 405B's
// release), trained with AdamW (its paper's recipe) and remat per layer.
Recipe Llama(const char* size, int64_t hidden, int64_t layers, int64_t heads, int64_t ffn,
             int64_t positions) {
  return {{fmt::format("llama3-{}", size), "llama",
           fmt::format("Llama 3 {}: S 8192, H {}, L {}, {} heads (8 KV), FFN {}, V 128256, RoPE "
                       "500000",
                       size, hidden, layers, heads, ffn)},
          PublishedDecoder(hidden, layers, heads, ffn, 128256, 500000, positions),
          AlpaTransformerTraining(autodiff::OptimizerKind::kAdamW)};
}

// Mixtral v0.1 (8 experts, top-2, vocabulary 32000, RoPE theta 1e6), routed in groups of 1024
// tokens (256 slots per expert: the dispatch and combine dots cost about 2% of the experts'
// FLOPs), AdamW, remat per layer.
Recipe Mixtral(const char* size, int64_t hidden, int64_t layers, int64_t heads, int64_t ffn,
               int64_t positions) {
  LlamaConfig config = PublishedDecoder(hidden, layers, heads, ffn, 32000, 1e6, positions);
  config.experts = 8;
  config.expert_group_size = 1024;
  return {{fmt::format("mixtral-{}", size), "mixtral",
           fmt::format("Mixtral {}: S 8192, H {}, L {}, {} heads (8 KV), 8 experts of FFN {}, "
                       "top-2, V 32000",
                       size, hidden, layers, heads, ffn)},
          config,
          AlpaTransformerTraining(autodiff::OptimizerKind::kAdamW)};
}

// llama-tiny (dense) and mixtral-tiny (4 experts routed in groups of 32 tokens): S 16, H 32,
// L 2, 4 query heads over 2 key/value heads, FFN 64, V 64, RoPE theta 10000, f32.
LlamaConfig TinyDecoder(int64_t experts) {
  return {.batch = 8,
          .seq = 16,
          .hidden = 32,
          .layers = 2,
          .heads = 4,
          .kv_heads = 2,
          .ffn = 64,
          .vocab = 64,
          .rope_theta = 10000,
          .experts = experts,
          .expert_group_size = 32};
}

Recipe WResNet(const char* size, int64_t layers, int64_t channels, int64_t width) {
  return {{fmt::format("wresnet-{}", size), "wresnet",
           fmt::format("Wide-ResNet {}: image 224, {} layers, {} channels, width x{}, 1024 classes",
                       size, layers, channels, width)},
          WResNetConfig{.batch = 32,
                        .image = 224,
                        .layers = layers,
                        .channels = channels,
                        .width_factor = width,
                        .classes = 1024,
                        .dtype = DType::kF32},
          AlpaWResNetTraining()};
}

const std::vector<Recipe>& Recipes() {
  using autodiff::OptimizerKind;
  static const auto* recipes = new std::vector<Recipe>{
      // GPT: the table of suite_manual_gpt.py.
      Gpt("125m", 1024, 768, 12, 12),
      Gpt("350m", 1024, 1024, 24, 16),
      Gpt("760m", 1024, 1536, 24, 16),
      Gpt("1.3b", 1024, 2048, 24, 32),
      Gpt("2.6b", 1024, 2560, 32, 32),
      Gpt("6.7b", 1024, 4096, 32, 32),
      Gpt("15b", 1024, 5120, 48, 40),
      Gpt("39b", 1024, 8192, 48, 64),
      Gpt("76b", 1024, 10240, 60, 80),
      {{"gpt-tiny", "gpt", "GPT tiny: S 16, H 32, L 2, 4 heads, V 64"},
       GptConfig{.batch = 8, .seq = 16, .hidden = 32, .layers = 2, .heads = 4, .vocab = 64},
       TinyTraining(OptimizerKind::kAdam, 1e-2)},
      // BERT: the two sizes of the BERT paper.
      Bert("base", 768, 12, 12),
      Bert("large", 1024, 24, 16),
      {{"bert-tiny", "bert", "BERT tiny encoder, masked LM: S 16, H 32, L 2, 4 heads, V 64"},
       GptConfig{.batch = 8,
                 .seq = 16,
                 .hidden = 32,
                 .layers = 2,
                 .heads = 4,
                 .vocab = 64,
                 .causal = false},
       TinyTraining(OptimizerKind::kAdam, 1e-2)},
      // MoE: the table of suite_manual_moe.py.
      Moe("380m", 768, 8, 8),
      Moe("690m", 768, 8, 16),
      Moe("1.3b", 768, 16, 16),
      Moe("2.4b", 1024, 16, 16),
      Moe("7.1b", 1280, 16, 32),
      Moe("10b", 1536, 16, 32),
      Moe("27b", 2048, 16, 48),
      Moe("70b", 2048, 32, 64),
      Moe("140b", 2048, 32, 128),
      {{"moe-tiny", "moe", "MoE tiny: S 16, H 32, L 2, 4 heads, V 64, 4 experts, group 32"},
       MoeConfig{.batch = 8,
                 .seq = 16,
                 .hidden = 32,
                 .layers = 2,
                 .heads = 4,
                 .vocab = 64,
                 .experts = 4,
                 .expert_group_size = 32},
       TinyTraining(OptimizerKind::kAdam, 1e-2)},
      // Llama 3 and Mixtral: the published configurations (Hugging Face's config.json).
      Llama("8b", 4096, 32, 32, 14336, 8192),
      Llama("70b", 8192, 80, 64, 28672, 8192),
      Llama("405b", 16384, 126, 128, 53248, 131072),
      {{"llama-tiny", "llama",
        "Llama tiny: S 16, H 32, L 2, 4 heads (2 KV), FFN 64, V 64, RoPE 10000"},
       TinyDecoder(/*experts=*/0),
       TinyTraining(OptimizerKind::kAdam, 1e-2)},
      Mixtral("8x7b", 4096, 32, 32, 14336, 32768),
      Mixtral("8x22b", 6144, 56, 48, 16384, 65536),
      {{"mixtral-tiny", "mixtral",
        "Mixtral tiny: S 16, H 32, L 2, 4 heads (2 KV), 4 experts of FFN 64, top-2, V 64, "
        "group 32"},
       TinyDecoder(/*experts=*/4),
       TinyTraining(OptimizerKind::kAdam, 1e-2)},
      // Wide-ResNet: the table of suite_wresnet.py.
      WResNet("250m", 50, 160, 2),
      WResNet("500m", 50, 224, 2),
      WResNet("1b", 50, 320, 2),
      WResNet("2b", 50, 448, 2),
      WResNet("4b", 50, 640, 2),
      WResNet("6.8b", 50, 320, 16),
      WResNet("13b", 101, 320, 16),
      {{"wresnet-tiny", "wresnet",
        "Wide-ResNet tiny: image 16, 14 layers, 8 channels, width x2, 10 classes"},
       WResNetConfig{
           .batch = 8, .image = 16, .layers = 14, .channels = 8, .width_factor = 2, .classes = 10},
       TinyTraining(OptimizerKind::kSgd, 0.02)},
      // MLP: ReLU layers trained by mean squared error.
      {{"mlp-small", "mlp", "MLP small: batch 128, 4 layers of width 1024"},
       MlpConfig{.batch = 128, .input = 1024, .hidden = 1024, .layers = 4, .output = 1024},
       TinyTraining(OptimizerKind::kAdam, 1e-3)},
      {{"mlp-large", "mlp", "MLP large: batch 1024, 8 layers of width 8192"},
       MlpConfig{.batch = 1024, .input = 8192, .hidden = 8192, .layers = 8, .output = 8192},
       TinyTraining(OptimizerKind::kAdam, 1e-3)},
      {{"mlp-tiny", "mlp", "MLP tiny: batch 16, 2 layers of width 32"},
       MlpConfig{.batch = 16, .input = 16, .hidden = 32, .layers = 2, .output = 4},
       TinyTraining(OptimizerKind::kAdam, 1e-2)},
  };
  return *recipes;
}

// Where each override lands in a family's config; nullptr where the family has no such field.
struct Fields {
  int64_t* layers;
  int64_t* hidden;
  int64_t* heads;
  int64_t* seq;
  int64_t* vocab;
  int64_t* experts;
  int64_t* batch;
  DType* dtype;
};

Fields FieldsOf(GptConfig& c) {
  return {&c.layers, &c.hidden, &c.heads, &c.seq, &c.vocab, nullptr, &c.batch, &c.dtype};
}
Fields FieldsOf(MoeConfig& c) {
  return {&c.layers, &c.hidden, &c.heads, &c.seq, &c.vocab, &c.experts, &c.batch, &c.dtype};
}
// Only a Mixtral has experts to override: a Llama stays dense.
Fields FieldsOf(LlamaConfig& c) {
  return {&c.layers, &c.hidden, &c.heads, &c.seq, &c.vocab, c.experts > 0 ? &c.experts : nullptr,
          &c.batch,  &c.dtype};
}
Fields FieldsOf(WResNetConfig& c) {
  return {&c.layers, &c.channels, nullptr, nullptr, nullptr, nullptr, &c.batch, &c.dtype};
}
Fields FieldsOf(MlpConfig& c) {
  return {&c.layers, &c.hidden, nullptr, nullptr, nullptr, nullptr, &c.batch, &c.dtype};
}

// Writes the given overrides into `fields`; one the family has no field for is an error.
Status ApplyOverrides(const ZooOverrides& o, const Fields& fields, const ZooEntry& entry) {
  const std::tuple<std::optional<int64_t>, int64_t*, const char*> overrides[] = {
      {o.layers, fields.layers, "--layers"}, {o.hidden, fields.hidden, "--hidden"},
      {o.heads, fields.heads, "--heads"},    {o.seq, fields.seq, "--seq"},
      {o.vocab, fields.vocab, "--vocab"},    {o.experts, fields.experts, "--experts"},
      {o.batch, fields.batch, "--batch"}};
  for (const auto& [value, field, flag] : overrides) {
    if (!value.has_value()) continue;
    if (field == nullptr) {
      return InvalidArgument("{} is a {} model, which has no {} to override", entry.name,
                             entry.family, flag);
    }
    *field = *value;
  }
  if (o.dtype.has_value()) *fields.dtype = *o.dtype;
  return Status::Ok();
}

Result<Model> BuildFamily(const GptConfig& config) { return BuildGpt(config); }
Result<Model> BuildFamily(const MoeConfig& config) { return BuildMoe(config); }
Result<Model> BuildFamily(const LlamaConfig& config) { return BuildLlama(config); }
Result<Model> BuildFamily(const WResNetConfig& config) { return BuildWResNet(config); }
Result<Model> BuildFamily(const MlpConfig& config) { return BuildMlp(config); }

}  // namespace

const std::vector<ZooEntry>& ZooEntries() {
  static const auto* entries = [] {
    auto* list = new std::vector<ZooEntry>;
    for (const Recipe& recipe : Recipes()) list->push_back(recipe.entry);
    return list;
  }();
  return *entries;
}

const ZooEntry* FindZooEntry(std::string_view name) {
  for (const ZooEntry& entry : ZooEntries()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

Result<ZooModel> BuildZooModel(std::string_view name, const ZooOverrides& overrides) {
  for (const Recipe& recipe : Recipes()) {
    if (recipe.entry.name != name) continue;
    auto build = [&](auto config) -> Result<Model> {
      ALPA_RETURN_IF_ERROR(ApplyOverrides(overrides, FieldsOf(config), recipe.entry));
      return BuildFamily(config);
    };
    ALPA_ASSIGN_OR_RETURN(Model model, std::visit(build, recipe.config));
    return ZooModel{recipe.entry, std::move(model), recipe.training};
  }
  std::string names;
  for (const ZooEntry& entry : ZooEntries()) {
    names += (names.empty() ? "" : ", ") + entry.name;
  }
  return InvalidArgument("no model named '{}' in the zoo; the zoo has: {}", name, names);
}

}  // namespace alpa::models
