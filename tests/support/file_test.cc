#include "support/file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

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

TEST(FileTest, ReadsAnEmptyFileAndAProcFileWhoseSizeIsUnknown) {
  const std::string empty = TempPath("alpa_file_test_empty.txt");
  std::ofstream{empty};
  Result<std::string> read_empty = ReadFileToString(empty);
  ASSERT_TRUE(read_empty.ok()) << read_empty.status().ToString();
  EXPECT_EQ(*read_empty, "");
  // /proc files report size 0 and still have contents.
  Result<std::string> status = ReadFileToString("/proc/self/status");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_NE(status->find("Name:"), std::string::npos);
}

TEST(FileTest, FileBytesMapsAPlainFileAndInflatesAGzipOne) {
  // Larger than a page, so the mapping spans several.
  std::string text;
  for (int i = 0; i < 3000; ++i) text += std::to_string(i) + ",";
  const std::string plain = TempPath("alpa_file_bytes.json");
  std::ofstream(plain) << text;
  Result<FileBytes> mapped = FileBytes::Open(plain);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(mapped->view(), text);
  FileBytes moved = std::move(*mapped);  // the mapping moves with it
  EXPECT_EQ(moved.view(), text);

  const std::string gz = TempPath("alpa_file_bytes.json.gz");
  gzFile file = gzopen(gz.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
  gzclose(file);
  Result<FileBytes> inflated = FileBytes::Open(gz);
  ASSERT_TRUE(inflated.ok()) << inflated.status().ToString();
  EXPECT_EQ(inflated->view(), text);

  const std::string empty = TempPath("alpa_file_bytes_empty.json");
  std::ofstream{empty};
  Result<FileBytes> nothing = FileBytes::Open(empty);
  ASSERT_TRUE(nothing.ok()) << nothing.status().ToString();
  EXPECT_EQ(nothing->view(), "");

  Result<FileBytes> missing = FileBytes::Open("/nonexistent/problem.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/problem.json"), std::string::npos);
  const std::string dir = TempPath("alpa_file_test_dir");
  std::filesystem::create_directories(dir);
  Result<FileBytes> directory = FileBytes::Open(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos);
}

TEST(FileTest, CorruptGzipIsAnError) {
  const std::string gz = TempPath("alpa_file_test_corrupt.gz");
  std::ofstream(gz, std::ios::binary) << "\x1f\x8b\x08\x00garbage-not-deflate";
  Result<std::string> result = ReadFileToString(gz);
  EXPECT_FALSE(result.ok());
}

}  // namespace
}  // namespace alpa
