#include "support/table.h"

#include <gtest/gtest.h>

namespace alpa {
namespace {

TEST(TableTest, AlignsColumnsAndTrimsTrailingSpaces) {
  Table table({"opcode", "count"}, {Table::Align::kLeft, Table::Align::kRight});
  table.AddRow({"parameter", "12"});
  table.AddRow({"dot", "6"});
  EXPECT_EQ(table.Render(),
            "opcode     count\n"
            "---------  -----\n"
            "parameter     12\n"
            "dot            6\n");
  EXPECT_EQ(table.row_count(), 2);
}

TEST(TableTest, IndentsEveryLine) {
  Table table({"a", "b"}, {Table::Align::kLeft, Table::Align::kLeft});
  table.AddRow({"xyz", ""});
  EXPECT_EQ(table.Render(2),
            "  a    b\n"
            "  ---  -\n"
            "  xyz\n");
}

}  // namespace
}  // namespace alpa
