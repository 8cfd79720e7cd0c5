#include "support/file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace alpa {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

TEST(FileTest, ReadsPlainAndGzipFiles) {
  const std::string text = "HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }\n";
  const std::string plain = TempPath("alpa_file_test.hlo");
  std::ofstream(plain) << text;
  Result<std::string> read_plain = ReadFileToString(plain);
  ASSERT_TRUE(read_plain.ok()) << read_plain.status().ToString();
  EXPECT_EQ(*read_plain, text);

  const std::string gz = TempPath("alpa_file_test.hlo.gz");
  gzFile file = gzopen(gz.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
  gzclose(file);
  Result<std::string> read_gz = ReadFileToString(gz);
  ASSERT_TRUE(read_gz.ok()) << read_gz.status().ToString();
  EXPECT_EQ(*read_gz, text);
}

TEST(FileTest, MissingFileNamesPath) {
  Result<std::string> result = ReadFileToString("/nonexistent/model.hlo");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("/nonexistent/model.hlo"), std::string::npos);
}

TEST(FileTest, DirectoryIsAnErrorNotAnEmptyFile) {
  const std::string dir = TempPath("alpa_file_test_dir");
  std::filesystem::create_directories(dir);
  Result<std::string> result = ReadFileToString(dir);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("is a directory"), std::string::npos);
}

TEST(FileTest, CorruptGzipIsAnError) {
  const std::string gz = TempPath("alpa_file_test_corrupt.gz");
  std::ofstream(gz, std::ios::binary) << "\x1f\x8b\x08\x00garbage-not-deflate";
  Result<std::string> result = ReadFileToString(gz);
  EXPECT_FALSE(result.ok());
}

}  // namespace
}  // namespace alpa
