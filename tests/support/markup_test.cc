#include "support/markup.h"

#include <gtest/gtest.h>

namespace alpa {
namespace {

TEST(MarkupTest, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(EscapeMarkup("a<&>\"'b"), "a&lt;&amp;&gt;&quot;&#39;b");
  EXPECT_EQ(EscapeMarkup("plain text"), "plain text");
  EXPECT_EQ(EscapeMarkup(""), "");
}

}  // namespace
}  // namespace alpa
