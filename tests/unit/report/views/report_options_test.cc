// Report-side parsers and writers that need no recording: the -g argument
// and the JSON writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/views/call_graph_spec.h"
#include "report/json/json_writer.h"

namespace sample::report {
namespace {

using ::testing::HasSubstr;

TEST(CallGraphSpecTest, PerfSyntax) {
  auto spec = ParseCallGraphSpec("");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->mode, CallGraphMode::kGraph);
  EXPECT_EQ(spec->threshold, 0.5);
  EXPECT_FALSE(spec->order);

  spec = ParseCallGraphSpec("fractal,2,caller");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->mode, CallGraphMode::kFractal);
  EXPECT_EQ(spec->threshold, 2.0);
  EXPECT_EQ(spec->order, CallOrder::kCaller);

  spec = ParseCallGraphSpec("callee");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->mode, CallGraphMode::kGraph);
  EXPECT_EQ(spec->order, CallOrder::kCallee);

  spec = ParseCallGraphSpec("folded,0");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->mode, CallGraphMode::kFolded);
  EXPECT_EQ(spec->threshold, 0.0);

  EXPECT_THAT(ParseCallGraphSpec("graph,0.5,10").error().message, HasSubstr("print limit"));
  EXPECT_THAT(ParseCallGraphSpec("grpah").error().message, HasSubstr("'grpah'"));
  EXPECT_FALSE(ParseCallGraphSpec("graph,101"));
}

TEST(CallGraphSpecTest, ModeNamesRoundTrip) {
  for (auto mode : {CallGraphMode::kGraph, CallGraphMode::kFractal, CallGraphMode::kFlat,
                    CallGraphMode::kFolded, CallGraphMode::kNone}) {
    auto spec = ParseCallGraphSpec(CallGraphModeName(mode));
    ASSERT_TRUE(spec) << CallGraphModeName(mode);
    EXPECT_EQ(spec->mode, mode);
  }
  EXPECT_EQ(CallGraphModeName(CallGraphMode::kFractal), "fractal");
}

TEST(CallGraphSpecTest, WhichWordsBelongToDashG) {
  EXPECT_TRUE(IsCallGraphArgument("caller"));
  EXPECT_TRUE(IsCallGraphArgument("fractal,1"));
  EXPECT_FALSE(IsCallGraphArgument("--no-children"));
  EXPECT_FALSE(IsCallGraphArgument("sample.data"));
  EXPECT_FALSE(IsCallGraphArgument(""));
}

TEST(CallGraphSpecTest, BranchShares) {
  CallGraphSpec graph;
  EXPECT_DOUBLE_EQ(BranchShare(graph, 25, 50, 100), 25.0);
  CallGraphSpec fractal;
  fractal.mode = CallGraphMode::kFractal;
  EXPECT_DOUBLE_EQ(BranchShare(fractal, 25, 50, 100), 50.0);
  EXPECT_DOUBLE_EQ(BranchShare(fractal, 25, 0, 100), 0.0);
}

TEST(CallGraphSpecTest, EndingChainsFollowTheTree) {
  // root -> a (10: 4 end in a) -> b (6)
  CallNode root{FlatEntry::kAny, 10, 2, {CallNode{1, 10, 2, {CallNode{2, 6, 1, {}}}}}};
  const auto chains = EndingChains(root);
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_EQ(chains[0].period, 4u);
  ASSERT_EQ(chains[0].nodes.size(), 1u);
  EXPECT_EQ(chains[0].nodes[0]->function, 1u);
  EXPECT_EQ(chains[1].period, 6u);
  ASSERT_EQ(chains[1].nodes.size(), 2u);
  EXPECT_EQ(chains[1].nodes[1]->function, 2u);
}

TEST(JsonWriterTest, NestedDocument) {
  JsonWriter json;
  json.BeginObject();
  json.Field("name", "a \"quoted\"\n\x01name").Field("n", 3).Field("ok", true);
  json.Key("pct").Double(12.3456);
  json.Key("list").BeginArray().Uint(1).Null().BeginObject().EndObject().EndArray();
  json.Key("empty").BeginArray().EndArray();
  json.EndObject();
  EXPECT_EQ(json.Take(),
            "{\n"
            "  \"name\": \"a \\\"quoted\\\"\\n\\u0001name\",\n"
            "  \"n\": 3,\n"
            "  \"ok\": true,\n"
            "  \"pct\": 12.35,\n"
            "  \"list\": [\n"
            "    1,\n"
            "    null,\n"
            "    {}\n"
            "  ],\n"
            "  \"empty\": []\n"
            "}\n");
}

}  // namespace
}  // namespace sample::report
