// Array files as NumPy and safetensors write them (testdata/arrays/make_arrays.py made the
// committed ones): every variant read to the same values, and each refusal named.
#include "api/array_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/file.h"

namespace alpa::api {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return std::string(ALPA_TESTDATA_DIR) + "/arrays/" + name;
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(ArrayFileTest, ReadsNpyOfFormatVersionsOneAndTwo) {
  for (const std::string name : {"small_v1", "small_v2"}) {
    Result<std::vector<NamedArray>> arrays = ReadArrayFile(Fixture(name + ".npy"));
    ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
    ASSERT_EQ(arrays->size(), 1u);
    const NamedArray& small = (*arrays)[0];
    EXPECT_EQ(small.name, name);
    EXPECT_EQ(small.value.shape().ToString(false), "f32[3,4]");
    for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(small.value.GetDouble(i), i) << name;
  }
  Result<std::vector<NamedArray>> flags = ReadArrayFile(Fixture("flags.npy"));
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ((*flags)[0].value.shape().ToString(false), "pred[3]");
  EXPECT_EQ((*flags)[0].value.GetInt(1), 0);
  EXPECT_EQ((*flags)[0].value.GetInt(2), 1);
}

TEST(ArrayFileTest, NpzAndSafetensorsHoldTheSameArrays) {
  Result<std::vector<NamedArray>> npz = ReadArrayFile(Fixture("gpt2_batches.npz"));
  Result<std::vector<NamedArray>> safetensors = ReadArrayFile(Fixture("gpt2_batches.safetensors"));
  ASSERT_TRUE(npz.ok()) << npz.status().ToString();
  ASSERT_TRUE(safetensors.ok()) << safetensors.status().ToString();
  ASSERT_EQ(npz->size(), 2u);
  ASSERT_EQ(safetensors->size(), 2u);
  for (size_t a = 0; a < 2; ++a) {
    EXPECT_EQ((*npz)[a].name, (*safetensors)[a].name);
    EXPECT_EQ((*npz)[a].value.shape().ToString(false), "s64[8,16]");
    EXPECT_TRUE((*npz)[a].value == (*safetensors)[a].value) << (*npz)[a].name;
  }
  // Deflated members, as np.savez_compressed writes them.
  Result<std::vector<NamedArray>> compressed = ReadArrayFile(Fixture("mlp_batches.npz"));
  ASSERT_TRUE(compressed.ok()) << compressed.status().ToString();
  EXPECT_EQ((*compressed)[0].name, "input");
  EXPECT_EQ((*compressed)[0].value.shape().ToString(false), "f64[16,32]");
}

TEST(ArrayFileTest, RefusalsNameTheFileAndTheRemedy) {
  Result<std::string> read_small = ReadFileToString(Fixture("small_v1.npy"));
  ASSERT_TRUE(read_small.ok());
  const std::string& small = *read_small;
  const std::string short_data_header =
      R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  std::string short_data(8, '\0');
  short_data[0] = static_cast<char>(short_data_header.size());
  short_data += short_data_header + "abcd";
  const std::string huge_header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000), }";
  std::string huge = "\x93NUMPY\x01";
  huge += '\0';
  huge += static_cast<char>(huge_header.size());
  huge += '\0';
  huge += huge_header + "abcd";
  struct Case {
    std::string path, message;
  };
  const std::vector<Case> cases = {
      {Fixture("big_endian.npy"), "is big-endian; save it little-endian (array.astype('<f4'))"},
      {Fixture("fortran.npy"), "Fortran-ordered; save np.ascontiguousarray(array)"},
      {WriteTemp("truncated.npy", small.substr(0, small.size() - 5)),
       "f32[3,4] holds 43 bytes of data, which its shape does not fit"},
      {WriteTemp("huge.npy", huge), "f32[100000000000,100000000] holds 4 bytes of data"},
      {WriteTemp("text.npy", "x,y\n1,2\n"), "not a .npy array (no \\x93NUMPY magic)"},
      {WriteTemp("text.npz", "x,y\n1,2\n"), "not a readable .npz archive"},
      {WriteTemp("short.safetensors", "abc"), "too short for a .safetensors file"},
      {WriteTemp("long.safetensors", std::string("\xff\0\0\0\0\0\0\0{}", 10)),
       "the header length 255 runs past the file's 10 bytes"},
      {WriteTemp("bad.safetensors", short_data),
       "bad.safetensors: w: data_offsets [0,8] fall outside the 4 bytes of data"},
      {WriteTemp("arrays.csv", "1,2"), "not an array file; use .npy (np.save)"},
      {Fixture("missing.npy"), "missing.npy: no such file"},
  };
  for (const Case& c : cases) {
    Result<std::vector<NamedArray>> read = ReadArrayFile(c.path);
    ASSERT_FALSE(read.ok()) << c.path;
    EXPECT_THAT(read.status().message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace alpa::api
