// Batches from a user's arrays: each batch parameter takes its array (JAX's ".N" suffix aside),
// converted to its type, one step's rows per batch, cycling; each mismatch a named error.
#include "api/batch_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hlo/parser.h"

namespace alpa::api {
namespace {

using ::testing::HasSubstr;

// An embedding lookup: ids index the 64 rows of the table, y is compared with the result.
constexpr char kEmbeddingLoss[] = R"(
HloModule embedding
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  table = f32[64,2] parameter(0)
  ids.1 = s32[4] parameter(1)
  y.1 = f32[4,2] parameter(2)
  ids2 = s32[4,1] reshape(ids.1)
  rows = f32[4,2] gather(table, ids2), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  diff = f32[4,2] subtract(rows, y.1)
  zero = f32[] constant(0)
  ROOT loss = f32[] reduce(diff, zero), dimensions={0,1}, to_apply=add
}
)";

struct Tensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// A .safetensors file of `tensors`, as Hugging Face's format lays it out.
std::string WriteSafetensors(const std::string& name, const std::vector<Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const Tensor& tensor : tensors) {
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", {data.size(), data.size() + tensor.bytes.size()}}};
    data += tensor.bytes;
  }
  const std::string text = header.dump();
  std::string file(8, '\0');
  for (size_t i = 0; i < 8; ++i) file[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  const std::string path = ::testing::TempDir() + "/" + name + ".safetensors";
  std::ofstream(path, std::ios::binary) << file << text << data;
  return path;
}

class BatchFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ir::Module>> parsed = hlo::ParseHloModule(kEmbeddingLoss);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    module_ = std::move(parsed).value();
  }

  Result<models::BatchGenerator> Batches(const std::vector<Tensor>& tensors,
                                         int64_t rows_per_step = 4) {
    return BatchesFromFile(WriteSafetensors("batches", tensors), *module_->entry(), {0},
                           rows_per_step);
  }

  std::unique_ptr<ir::Module> module_;
};

Tensor Ids(std::vector<int64_t> ids) {
  const auto rows = static_cast<int64_t>(ids.size());
  return {"ids", "I64", {rows}, Bytes(ids)};
}

Tensor Targets(int64_t rows, const std::string& name = "y") {
  std::vector<float> values(static_cast<size_t>(rows * 2));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return {name, "F32", {rows, 2}, Bytes(values)};
}

TEST_F(BatchFileTest, EachStepTakesItsRowsConvertedAndCycles) {
  Result<models::BatchGenerator> batches = Batches({Ids({0, 1, 2, 3, 60, 61, 62, 63}), Targets(8)});
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  for (uint64_t seed : {0, 1, 2}) {
    const std::vector<ir::Literal> batch = (*batches)(4, seed);
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].shape().ToString(false), "s32[4]");  // int64 ids as the parameter's s32
    EXPECT_EQ(batch[1].shape().ToString(false), "f32[4,2]");
    const int64_t block = static_cast<int64_t>(seed % 2);
    EXPECT_EQ(batch[0].GetInt(0), block == 0 ? 0 : 60) << "seed " << seed;
    EXPECT_EQ(batch[1].GetDouble(0), block * 8) << "seed " << seed;
  }
  // Two steps' rows at once (two micro-batches of 4): the whole file.
  const std::vector<ir::Literal> both = (*batches)(8, 0);
  EXPECT_EQ(both[0].GetInt(7), 63);
}

TEST_F(BatchFileTest, OneArrayFeedsTheOnlyBatchParameterWhateverItsName) {
  Result<std::unique_ptr<ir::Module>> one = hlo::ParseHloModule(R"(
HloModule one
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  w = f32[2] parameter(0)
  x = f32[4,2] parameter(1)
  wx = f32[4,2] broadcast(w), dimensions={1}
  p = f32[4,2] multiply(x, wx)
  zero = f32[] constant(0)
  ROOT loss = f32[] reduce(p, zero), dimensions={0,1}, to_apply=add
}
)");
  ASSERT_TRUE(one.ok());
  Result<models::BatchGenerator> batches =
      BatchesFromFile(WriteSafetensors("one", {Targets(4, "features")}), *(*one)->entry(), {0}, 4);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  EXPECT_EQ((*batches)(4, 0)[0].GetDouble(7), 7);
}

TEST_F(BatchFileTest, MismatchesAreNamed) {
  struct Case {
    std::vector<Tensor> tensors;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{Ids({0, 1, 2, 64}), Targets(4)},
       "array ids (for parameter ids.1): id 64 in row 3 is outside 0..63, the rows of the table"},
      {{Ids({0, 1, 2, 3})},
       "no array for the batch parameter y.1; the file has ids, and the model's batch is ids.1 "
       "(s32[4]), y.1 (f32[4,2])"},
      {{Ids({0, 1, 2, 3}), Targets(4), Targets(4, "extra")},
       "array extra feeds no batch parameter"},
      {{Ids({0, 1, 2, 3, 4, 5}), Targets(6)},
       "array ids (for parameter ids.1) has 6 rows, not a multiple of the 4 rows of one step"},
      {{Ids({0, 1, 2, 3}), Targets(8)},
       "array y (for parameter y.1) has 8 rows, and the arrays "
       "before it 4"},
      {{Ids({0, 1, 2, 3}), {"y", "F32", {4, 3}, std::string(48, '\0')}},
       "array y (for parameter y.1) is f32[4,3]; it must be [rows, 2] as the parameter's f32[4,2]"},
      {{{"ids", "F32", {4}, std::string(16, '\0')}, Targets(4)},
       "array ids (for parameter ids.1) is f32, and the parameter is s32: ids and labels must be "
       "integers"},
      {{Ids({0, 1, 2, int64_t{1} << 40}), Targets(4)},
       "element 3 (1099511627776) does not fit the parameter's s32"},
  };
  for (const Case& c : cases) {
    Result<models::BatchGenerator> batches = Batches(c.tensors);
    ASSERT_FALSE(batches.ok()) << c.message;
    EXPECT_EQ(batches.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(batches.status().message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace alpa::api
