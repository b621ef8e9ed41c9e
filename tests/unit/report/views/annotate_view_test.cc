#include "report/views/annotate_view.h"

#include <gtest/gtest.h>

#include <memory>
#include <span>

#include "libsample/symbols/embedded_binary.h"
#include "report/annotate_cache.h"
#include "report/text/text_annotate.h"

namespace sample::report {
namespace {

std::vector<std::byte> Code(std::initializer_list<int> bytes) {
  std::vector<std::byte> out;
  for (int b : bytes) out.push_back(static_cast<std::byte>(b));
  return out;
}

constexpr uint64_t kVaddr = 0x401000;
constexpr uint64_t kOffset = 0x1000;  // the segment maps file offset 0x1000 at kVaddr

// A binary known only from what a recording embedded: one function whose
// code holds a loop, a jump through a table, a byte no x86_64 instruction
// starts with, and int3 padding.
std::shared_ptr<EmbeddedBinary> FakeBinary() {
  auto binary = std::make_shared<EmbeddedBinary>();
  binary->path = "/nonexistent/fake";
  binary->segments = {{kOffset, 0x1000, kVaddr, 0x1000, true}};
  binary->code = {
      {kVaddr, Code({
                   0x55,                                      // 401000 push %rbp
                   0x48, 0x89, 0xe5,                          // 401001 mov %rsp,%rbp
                   0x48, 0x83, 0xc0, 0x01,                    // 401004 add $0x1,%rax
                   0x75, 0xfa,                                // 401008 jne 401004
                   0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00,  // 40100a jmp *0x402000(,%rax,8)
                   0x06,                                      // 401011 (bad)
                   0xc3,                                      // 401012 ret
                   0xcc, 0xcc,                                // 401013 int3 padding
               })}};
  binary->functions = {{kVaddr, 0x15, "hot"}};
  binary->addresses = {{kOffset + 4, {AddressFrame{"hot", "/src/hot.c", 12, false, 4}}},
                       {kOffset + 8, {AddressFrame{"hot", "/src/hot.c", 13, false, 8}}}};
  binary->Normalize();
  return binary;
}

Recording MakeRecording() {
  Recording recording;
  Profile& profile = recording.profile;
  profile.set_dso_names({"/nonexistent/fake"});
  profile.set_event_names({"cpu-clock"});
  const uint32_t hot = profile.InternFunction(0, "hot", false, true);
  // Three samples at the add, one at the jne.
  for (uint64_t at : {4, 4, 4, 8}) {
    ProfileSample s;
    s.period = 1000;
    const uint32_t frames[] = {hot};
    const FrameAddress addresses[] = {{kVaddr + at, at, kOffset + at}};
    profile.AddSample(s, frames, addresses);
  }
  recording.embedded.Add(FakeBinary());
  return recording;
}

BinaryLocatorOptions NoFiles() {
  BinaryLocatorOptions options;
  options.files.symfs = "/nonexistent-annotate-test-symfs";
  options.files.use_debuginfod = false;
  return options;
}

TEST(AnnotateViewTest, EmbeddedCodeWithATableJumpABadByteAndPadding) {
  const Recording recording = MakeRecording();
  auto view = BuildAnnotateView(recording, AnnotateOptions{.on = true}, SampleFilter(), NoFiles());
  ASSERT_TRUE(view.has_value()) << view.error().message;
  EXPECT_EQ(view->event, "cpu-clock");
  ASSERT_EQ(view->functions.size(), 1u);
  const AnnotatedFunction& f = view->functions[0];
  EXPECT_EQ(f.name, "hot");
  EXPECT_EQ(f.note, "");
  EXPECT_EQ(f.origin, "the recording (embedded)");
  EXPECT_EQ(f.samples, 4u);
  EXPECT_EQ(f.unplaced_samples, 0u);
  ASSERT_EQ(f.instructions.size(), 9u);
  const std::vector<std::string> texts = {"push   %rbp",
                                          "mov    %rsp,%rbp",
                                          "add    $0x1,%rax",
                                          "jne    401004 <hot+0x4>",
                                          "jmp    *0x402000(,%rax,8)",
                                          "(bad)  06",
                                          "ret",
                                          "int3",
                                          "int3"};
  uint64_t next = kVaddr;
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(f.instructions[i].text, texts[i]) << i;
    EXPECT_EQ(f.instructions[i].address, next) << i;  // contiguous, every byte covered
    next += f.instructions[i].bytes.size();
  }
  EXPECT_EQ(next, kVaddr + 0x15);
  EXPECT_EQ(f.instructions[2].samples, 3u);
  EXPECT_EQ(f.instructions[2].period, 3000u);
  EXPECT_EQ(f.instructions[2].line, 12u);
  EXPECT_EQ(f.instructions[3].samples, 1u);
  EXPECT_EQ(f.instructions[3].line, 13u);

  const std::string text = FormatAnnotate(*view, false);
  EXPECT_NE(text.find("   75.00 :   401004:   add    $0x1,%rax\n"), std::string::npos) << text;
  EXPECT_NE(text.find("   25.00 :   401008:   jne    401004 <hot+0x4>\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("         : 12   hot.c:12\n"), std::string::npos) << text;
  const std::string source = FormatAnnotate(*view, true);
  EXPECT_NE(source.find("   75.00 : hot.c:12"), std::string::npos) << source;
  EXPECT_NE(source.find("   25.00 : hot.c:13"), std::string::npos) << source;
}

TEST(AnnotateViewTest, AFunctionWithoutCodeSaysWhyAndUnknownNamesAreRefused) {
  Recording recording = MakeRecording();
  auto binary = FakeBinary();
  binary->code.clear();
  recording.embedded = EmbeddedBinaries();
  recording.embedded.Add(binary);
  auto view = BuildAnnotateView(recording, AnnotateOptions{.on = true}, SampleFilter(), NoFiles());
  ASSERT_TRUE(view.has_value()) << view.error().message;
  ASSERT_EQ(view->functions.size(), 1u);
  EXPECT_NE(view->functions[0].note.find("no code"), std::string::npos) << view->functions[0].note;
  EXPECT_NE(FormatAnnotate(*view, false).find("not annotated"), std::string::npos);

  auto named = BuildAnnotateView(recording, AnnotateOptions{.on = true, .symbols = {"cold"}},
                                 SampleFilter(), NoFiles());
  ASSERT_FALSE(named.has_value());
  EXPECT_NE(named.error().message.find("cold"), std::string::npos) << named.error().message;
}

// By default not a function under one sample in a thousand (a recording
// holds no code of it: EmbeddingLimits), unless it is the hottest; named,
// any function.
TEST(AnnotateViewTest, FunctionsWithFewSamplesAreAnnotatedOnlyWhenNamed) {
  for (const uint64_t hot_samples : {999u, 1000u}) {
    Recording recording;
    Profile& profile = recording.profile;
    profile.set_dso_names({"/nonexistent/fake"});
    profile.set_event_names({"cpu-clock"});
    const uint32_t hot = profile.InternFunction(0, "hot", false, true);
    const uint32_t rare = profile.InternFunction(0, "rare", false, true);
    auto binary = FakeBinary();
    binary->functions = {{kVaddr, 0x12, "hot"}, {kVaddr + 0x12, 3, "rare"}};
    binary->Normalize();
    recording.embedded.Add(binary);
    const auto add = [&](uint32_t function, uint64_t at) {
      ProfileSample s;
      s.period = 1000;
      const uint32_t frames[] = {function};
      const FrameAddress addresses[] = {{kVaddr + at, at, kOffset + at}};
      profile.AddSample(s, frames, addresses);
    };
    for (uint64_t i = 0; i < hot_samples; ++i) add(hot, 4);
    add(rare, 0x12);
    auto view =
        BuildAnnotateView(recording, AnnotateOptions{.on = true}, SampleFilter(), NoFiles());
    ASSERT_TRUE(view.has_value()) << view.error().message;
    // 1 of 1000 is one in a thousand; 1 of 1001 is less.
    ASSERT_EQ(view->functions.size(), hot_samples == 999 ? 2u : 1u) << hot_samples;
    EXPECT_EQ(view->functions[0].name, "hot");
    auto named = BuildAnnotateView(recording, AnnotateOptions{.on = true, .symbols = {"rare"}},
                                   SampleFilter(), NoFiles());
    ASSERT_TRUE(named.has_value()) << named.error().message;
    ASSERT_EQ(named->functions.size(), 1u);
    EXPECT_EQ(named->functions[0].name, "rare");
    EXPECT_EQ(named->functions[0].samples, 1u);
  }
}

// The index holds what the view needs without the recording: annotated
// from it, the view is the recording's; with files only, code that only
// the recording holds makes the view say so instead.
TEST(AnnotateViewTest, TheIndexAnnotatesAsTheRecordingDoes) {
  const Recording recording = MakeRecording();
  const AnnotateIndex index =
      BuildAnnotateIndex(recording, AnnotateOptions{.on = true}, SampleFilter());
  EXPECT_EQ(index.event, "cpu-clock");
  EXPECT_EQ(index.event_samples, 4u);
  ASSERT_EQ(index.dsos.size(), 1u);
  EXPECT_EQ(index.dsos[0].path, "/nonexistent/fake");
  ASSERT_EQ(index.functions.size(), 1u);
  EXPECT_EQ(index.functions[0].name, "hot");
  EXPECT_EQ(index.functions[0].by_offset,
            (std::vector<OffsetHits>{{kOffset + 4, 3, 3000}, {kOffset + 8, 1, 1000}}));

  // Kept and read back (the annotate cache) first.
  const std::string bytes = EncodeCachedAnnotate("key", CachedAnnotate{.index = index});
  const auto kept = DecodeCachedAnnotate(std::as_bytes(std::span(bytes)), "key");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->index, index);
  AnnotateCode code{NoFiles()};
  code.binaries.embedded = &recording.embedded;
  auto from_index = AnnotateFromIndex(kept->index, AnnotateOptions{.on = true}, code);
  auto from_recording =
      BuildAnnotateView(recording, AnnotateOptions{.on = true}, SampleFilter(), NoFiles());
  ASSERT_TRUE(from_index.has_value() && from_recording.has_value());
  EXPECT_EQ(FormatAnnotate(*from_index, false), FormatAnnotate(*from_recording, false));
  EXPECT_FALSE(from_index->needs_recording);

  code.files_only = true;
  auto files_only = AnnotateFromIndex(index, AnnotateOptions{.on = true}, code);
  ASSERT_TRUE(files_only.has_value());
  EXPECT_TRUE(files_only->needs_recording);

  // Nothing embedded: with files only, the view says what the recording's
  // would (no code), and needs no recording.
  Recording bare = MakeRecording();
  bare.embedded = EmbeddedBinaries();
  const AnnotateIndex bare_index =
      BuildAnnotateIndex(bare, AnnotateOptions{.on = true}, SampleFilter());
  AnnotateCode files{NoFiles()};
  files.files_only = true;
  auto bare_view = AnnotateFromIndex(bare_index, AnnotateOptions{.on = true}, files);
  auto bare_recording =
      BuildAnnotateView(bare, AnnotateOptions{.on = true}, SampleFilter(), NoFiles());
  ASSERT_TRUE(bare_view.has_value() && bare_recording.has_value());
  EXPECT_FALSE(bare_view->needs_recording);
  ASSERT_EQ(bare_view->functions.size(), 1u);
  EXPECT_NE(bare_view->functions[0].note.find("no code of /nonexistent/fake"), std::string::npos)
      << bare_view->functions[0].note;
  EXPECT_EQ(FormatAnnotate(*bare_view, false), FormatAnnotate(*bare_recording, false));
}

}  // namespace
}  // namespace sample::report
