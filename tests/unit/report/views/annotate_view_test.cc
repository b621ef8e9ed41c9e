#include "report/views/annotate_view.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>

#include "libsample/file_owner.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/embedded_binary.h"
#include "libsample/symbols/symbol_embedding.h"
#include "report/annotate_cache.h"
#include "report/export/html_annotation.h"
#include "report/json/json_annotate.h"
#include "report/text/text_annotate.h"
#include "report/views/source_owners.h"

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
  code.recorded.embedded = &recording.embedded;
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

// A path the recording's own tables name as a function's source is never
// read: the view says so once, the text and HTML printers show its file
// and line but no line of its text (here a file that exists and holds a
// marker, as a root-only file would for a report run as root).
TEST(AnnotateViewTest, SourcePathsFromTheRecordingsTablesAreNotRead) {
  char dir_pattern[] = "/tmp/annotate_view_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_pattern), nullptr);
  const std::string secret = std::string(dir_pattern) + "/secret.c";
  {
    std::ofstream out(secret);
    for (int i = 0; i < 20; ++i) out << "MARKER-LINE-" << i + 1 << "\n";
  }
  Recording recording = MakeRecording();
  auto binary = FakeBinary();
  for (EmbeddedAddress& address : binary->addresses) address.frames[0].file = secret;
  recording.embedded = EmbeddedBinaries();
  recording.embedded.Add(binary);
  auto view = BuildAnnotateView(recording, AnnotateOptions{.on = true}, SampleFilter(), NoFiles());
  ASSERT_TRUE(view.has_value()) << view.error().message;
  const AnnotatedFunction& f = view->functions.at(0);
  EXPECT_FALSE(f.source_readable);
  EXPECT_EQ(f.source_note,
            "source text not shown: the recording's embedded tables name them, not a binary "
            "found here");
  for (const bool source_only : {false, true}) {
    const std::string text = FormatAnnotate(*view, source_only);
    EXPECT_EQ(text.find("MARKER-LINE"), std::string::npos) << text;
    EXPECT_NE(text.find("secret.c:12"), std::string::npos) << text;
    // One line says why, not one per source line.
    size_t notes = 0;
    for (size_t at = text.find("source text not shown"); at != std::string::npos;
         at = text.find("source text not shown", at + 1)) {
      ++notes;
    }
    EXPECT_EQ(notes, 1u) << text;
  }
  std::string page;
  AppendHtmlAnnotation(*view, {{0}}, false, page);
  EXPECT_EQ(page.find("MARKER-LINE"), std::string::npos) << page;
  EXPECT_NE(page.find("\"source_note\":\"source text not shown"), std::string::npos) << page;

  // The same view, were the paths a verified binary's: the printers read
  // them (what the rule above takes away, and only that).
  AnnotateView readable = *view;
  readable.functions[0].source_readable = true;
  readable.functions[0].source_owners.any = true;
  EXPECT_NE(FormatAnnotate(readable, false).find("12   MARKER-LINE-12"), std::string::npos);
  std::string readable_page;
  AppendHtmlAnnotation(readable, {{0}}, false, readable_page);
  EXPECT_NE(readable_page.find("MARKER-LINE-12"), std::string::npos);
  std::filesystem::remove_all(dir_pattern);
}

// A function larger than a recording embeds (EmbeddingLimits): what the
// recording claims of its code is not decoded.
TEST(AnnotateViewTest, EmbeddedCodeOverWhatARecordingEmbedsIsNotAnnotated) {
  Recording recording = MakeRecording();
  auto binary = FakeBinary();
  const uint64_t size = EmbeddingLimits{}.max_function_code + 1;
  binary->segments = {{kOffset, size, kVaddr, size, true}};
  binary->functions = {{kVaddr, size, "hot"}};
  binary->code = {{kVaddr, std::vector<std::byte>(size, std::byte{0x90})}};
  recording.embedded = EmbeddedBinaries();
  recording.embedded.Add(binary);
  auto view = BuildAnnotateView(recording, AnnotateOptions{.on = true}, SampleFilter(), NoFiles());
  ASSERT_TRUE(view.has_value()) << view.error().message;
  const AnnotatedFunction& f = view->functions.at(0);
  EXPECT_TRUE(f.instructions.empty());
  EXPECT_NE(f.note.find("more than a recording embeds of a function (64 KiB)"), std::string::npos)
      << f.note;
}

// Past AnnotateBounds::whole_function instructions (or what is left of the
// view's rows), a function shows the instructions within near_sampled of
// a sampled one, each run of others as one row; the shares still add up.
TEST(AnnotateViewTest, ABigFunctionShowsOnlyTheInstructionsNearItsSamples) {
  const Recording recording = MakeRecording();
  for (const bool by_view : {false, true}) {
    AnnotateOptions options{.on = true};
    options.bounds.near_sampled = 1;
    (by_view ? options.bounds.view_rows : options.bounds.whole_function) = 5;
    auto view = BuildAnnotateView(recording, options, SampleFilter(), NoFiles());
    ASSERT_TRUE(view.has_value()) << view.error().message;
    const AnnotatedFunction& f = view->functions.at(0);
    // push | mov add jne jmp | (bad) ret int3 int3: samples at add and jne.
    ASSERT_EQ(f.instructions.size(), 6u);
    EXPECT_EQ(f.instructions[0].left_out, 1u);
    EXPECT_EQ(f.instructions[0].address, kVaddr);
    EXPECT_EQ(f.instructions[1].text, "mov    %rsp,%rbp");
    EXPECT_EQ(f.instructions[2].samples, 3u);
    EXPECT_EQ(f.instructions[3].samples, 1u);
    EXPECT_EQ(f.instructions[4].text, "jmp    *0x402000(,%rax,8)");
    EXPECT_EQ(f.instructions[5].left_out, 4u);
    EXPECT_EQ(f.instructions[5].address, kVaddr + 0x11);
    EXPECT_EQ(f.unplaced_samples, 0u);
    EXPECT_EQ(f.cut, by_view ? "9 instructions, over the 5 shown whole (what is left of the rows "
                               "a view shows): only those within 1 of a sampled one are shown"
                             : "9 instructions, over the 5 shown whole: only those within 1 of a "
                               "sampled one are shown");
    const std::string text = FormatAnnotate(*view, false);
    EXPECT_NE(text.find("         : " + f.cut + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("         :   ... 4 instructions without samples left out\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("   75.00 :   401004:   add    $0x1,%rax\n"), std::string::npos) << text;
    const std::string json = AnnotateJson(*view);
    EXPECT_NE(json.find("\"address\": \"0x401011\",\n            \"left_out\": 4"),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"cut\": \"9 instructions, over the 5 shown whole"), std::string::npos)
        << json;
    std::string page;
    AppendHtmlAnnotation(*view, {{0}}, false, page);
    EXPECT_NE(page.find("\n[0,null,1]"), std::string::npos) << page;
    EXPECT_NE(page.find("\n[17,null,4]"), std::string::npos) << page;
  }
  // Whole within the bounds: all nine.
  AnnotateOptions whole{.on = true};
  whole.bounds.whole_function = 9;
  auto view = BuildAnnotateView(recording, whole, SampleFilter(), NoFiles());
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->functions.at(0).instructions.size(), 9u);
  EXPECT_EQ(view->functions.at(0).cut, "");

  // Over the code a view decodes: not annotated, and said why.
  AnnotateOptions small{.on = true};
  small.bounds.view_code_bytes = 0x14;
  auto over = BuildAnnotateView(recording, small, SampleFilter(), NoFiles());
  ASSERT_TRUE(over.has_value());
  EXPECT_EQ(over->functions.at(0).note,
            "21 bytes of code, over what is left of the 20 bytes a view decodes");
}

// A binary found on this machine: its source files are read by the owner
// rule (source_owners.h), whatever its build-id says: the fixture, this
// user's or root's and writable by no one else, vouches for any source
// file, with the recorded build-id, with none recorded, and as another
// build taken with --force.
TEST(AnnotateViewTest, ALocalBinarysSourcesAreReadByItsOwnersRule) {
  const std::string path = FIXTURE_SYMBOLIZER_PATH;
  auto elf = ElfSymbols::Load(path);
  ASSERT_TRUE(elf.has_value()) << elf.error().message;
  const auto symbol = std::ranges::find_if(
      elf->symbols(), [](const ElfSymbol& s) { return s.mangled == "uses_inline"; });
  ASSERT_NE(symbol, elf->symbols().end());
  const auto offset = elf->VaddrToFileOffset(symbol->start);
  ASSERT_TRUE(offset.has_value());
  auto build_id = ReadElfBuildId(path);
  ASSERT_TRUE(build_id.has_value() && !build_id->empty());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  if ((st.st_uid != 0 && st.st_uid != geteuid()) || !WritableOnlyByOwner(st)) {
    GTEST_SKIP() << path << " is not this user's or root's, writable by no one else";
  }
  const auto annotate = [&](const std::string& recorded, bool force) {
    AnnotateIndex index;
    index.event = "cpu-clock";
    index.event_samples = 1;
    index.dsos = {IndexedDso{path, recorded, false}};
    index.functions = {IndexedFunction{.function = 0,
                                       .name = "uses_inline",
                                       .dso = 0,
                                       .some_offset = *offset,
                                       .samples = 1,
                                       .period = 1,
                                       .by_offset = {{*offset, 1, 1}}}};
    AnnotateCode code;
    code.binaries.files.use_debuginfod = false;
    code.binaries.force = force;
    auto view = AnnotateFromIndex(index, AnnotateOptions{.on = true}, code);
    EXPECT_TRUE(view.has_value());
    return view->functions.at(0);
  };
  for (const auto& [recorded, force] :
       {std::pair{*build_id, false}, std::pair{std::string(), false},
        std::pair{std::string("00112233445566778899aabbccddeeff00112233"), true}}) {
    const AnnotatedFunction f = annotate(recorded, force);
    EXPECT_EQ(f.origin, "the binary") << recorded;
    EXPECT_FALSE(f.instructions.empty()) << recorded;
    EXPECT_TRUE(f.source_readable) << recorded;
    EXPECT_TRUE(f.source_owners.any) << recorded;
    EXPECT_EQ(f.source_note, "") << recorded;
    EXPECT_TRUE(std::ranges::any_of(f.instructions,
                                    [](const AnnotatedInstruction& in) { return in.line != 0; }));
  }
}

NamingFile Naming(const std::string& path, uid_t uid, mode_t mode, gid_t gid = 65534) {
  NamingFile file{path, {}};
  file.st.st_uid = uid;
  file.st.st_gid = gid;
  file.st.st_mode = S_IFREG | mode;
  return file;
}

// The owner rule on made-up files (the reporting user: root, then 1000).
TEST(SourceOwnersTest, WhoseSourceFilesABinaryVouchesFor) {
  const auto of = [](std::vector<NamingFile> files, uid_t euid) {
    return SourceOwnersOf(files, euid);
  };
  // Root's or the reporter's own, writable by no one else: any file.
  for (const auto& decision :
       {of({Naming("/usr/bin/a", 0, 0755)}, 0), of({Naming("/usr/bin/a", 0, 0755)}, 1000),
        of({Naming("/home/b/a", 1000, 0700)}, 1000),
        of({Naming("/usr/bin/a", 0, 0755), Naming("/d/a.debug", 0, 0644)}, 0)}) {
    EXPECT_TRUE(decision.owners.any);
    EXPECT_EQ(decision.note, "");
  }
  // Alice's (65534) binary, reported by root: only her files.
  const auto alice = of({Naming("/home/alice/evil", 65534, 0755)}, 0);
  EXPECT_FALSE(alice.owners.any);
  EXPECT_TRUE(alice.owners.Allows(65534));
  EXPECT_FALSE(alice.owners.Allows(0));
  EXPECT_EQ(alice.note,
            "source text shown only from files of user 65534, the owner of /home/alice/evil, not "
            "from other users' files");
  // Root's binary with alice's debug file: the same.
  const auto debug =
      of({Naming("/usr/bin/a", 0, 0755), Naming("/home/alice/a.debug", 65534, 0644)}, 0);
  EXPECT_FALSE(debug.owners.any);
  EXPECT_EQ(debug.owners.uids, std::vector<uid_t>{65534});
  // Two users' files together, or a file others may write: none.
  const auto two =
      of({Naming("/home/alice/a", 65534, 0755), Naming("/home/bob/a.debug", 1001, 0644)}, 0);
  EXPECT_TRUE(two.owners.none());
  EXPECT_NE(two.note.find("belong to different users"), std::string::npos) << two.note;
  const auto world = of({Naming("/tmp/a", 0, 0777)}, 0);
  EXPECT_TRUE(world.owners.none());
  EXPECT_EQ(world.note, "source text not shown: /tmp/a may be written by everyone");

  SourceOwners merged = alice.owners;
  merged.Merge(SourceOwners{.any = false, .uids = {1001}});
  EXPECT_TRUE(merged.Allows(1001) && merged.Allows(65534) && !merged.Allows(0));
  merged.Merge(SourceOwners{.any = true, .uids = {}});
  EXPECT_TRUE(merged.Allows(0));
}

}  // namespace
}  // namespace sample::report
