// The kEmbeddedBinary and kPerfMap payloads (formats/embedded_codec.h):
// round trips, what the encoder does with tables that break the model's
// invariants, and every kind of malformed payload, which must be an error
// naming an offset inside it and never a crash or a balloon of memory.
#include "formats/embedded_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace sample::format {
namespace {

using Bytes = std::vector<std::byte>;
constexpr uint64_t kBase = 1000;  // the payload's offset in its file
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
using Kind = X86FrameRule::Kind;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The offset an error message names ("... at offset N: ..."), if any.
std::optional<uint64_t> NamedOffset(const std::string& message) {
  std::smatch match;
  static const std::regex kOffset("at offset ([0-9]+)");
  if (!std::regex_search(message, match, kOffset)) return std::nullopt;
  return std::stoull(match[1].str());
}

// Expects `result` to fail naming an offset within [kBase, kBase + size]
// and mentioning `what`.
template <typename T>
void ExpectError(const Result<T>& result, size_t size, const std::string& what = "") {
  ASSERT_FALSE(result.has_value()) << "decoded " << size << " bytes";
  const std::string& message = result.error().message;
  const auto offset = NamedOffset(message);
  ASSERT_TRUE(offset.has_value()) << message;
  EXPECT_GE(*offset, kBase) << message;
  EXPECT_LE(*offset, kBase + size) << message;
  EXPECT_TRUE(Contains(message, what)) << message << " (wanted '" << what << "')";
}

X86FrameRule Rule(bool usable, bool from_rbp, int64_t cfa, Kind rbp, int64_t rbp_offset) {
  X86FrameRule rule;
  rule.usable = usable;
  rule.cfa_base = from_rbp ? X86FrameRule::CfaBase::kRbp : X86FrameRule::CfaBase::kRsp;
  rule.cfa_offset = cfa;
  rule.kind[X86FrameRule::kRbp] = rbp;
  rule.offset[X86FrameRule::kRbp] = rbp_offset;
  rule.kind[X86FrameRule::kReturnAddress] = Kind::kAtCfa;
  rule.offset[X86FrameRule::kReturnAddress] = -8;
  return rule;
}

Bytes Code(std::initializer_list<uint8_t> bytes) {
  Bytes out;
  for (uint8_t b : bytes) out.push_back(std::byte{b});
  return out;
}

// Every field used, every table sorted, unique and disjoint.
EmbeddedBinary FullBinary() {
  EmbeddedBinary b;
  b.path = "/usr/lib/x86_64-linux-gnu/libfixture.so.1";
  b.build_id = "0123456789abcdef0123456789abcdef01234567";
  b.fixed_address = true;
  b.code_omitted = 3;
  b.segments = {{0, 0x1000, 0, 0x1000, false}, {0x1000, 0x2345, 0x401000, 0x3000, true}};
  const AddressFrame inlined{"std::vector<int>::push_back", "/usr/include/c++/12/bits/vector.h",
                             1280, true, kMax};
  const AddressFrame outer{"work(int)", "/src/work.cc", 42, false, 0x1c};
  const AddressFrame unknown{"", "", 0, false, kMax};
  const AddressFrame fde{"libfixture.so.1+0x15b40", "", 0, false, 0};
  b.addresses = {{0x1010, {inlined, outer}},
                 {0x1011, {outer}},
                 {0x2000, {unknown}},
                 {0x2f00, {fde}},
                 {kMax - 1, {}}};
  b.functions = {{0x401000, 0x40, "work(int)"},
                 {0x401040, 0, "libfixture.so.1+0x15b40"},
                 {0x401048, 0x1000, "overlapping(char const*)"},
                 {kMax - 0x10, 0x10, "at_the_end"}};
  b.cfi = {{0x401000, 0x401001, Rule(true, false, 8, Kind::kSame, 0)},
           {0x401001, 0x401004, Rule(true, false, 16, Kind::kAtCfa, -16)},
           {0x401004, 0x401040, Rule(true, true, 16, Kind::kAtCfa, -16)},
           {0x402000, 0x402010, Rule(false, false, -123456789012, Kind::kUndefined, 0)},
           {kMax - 4, kMax, Rule(true, false, 8, Kind::kSame, 0)}};
  b.cfi[2].rule.kind[0] = Kind::kAtCfa;  // rbx
  b.cfi[2].rule.offset[0] = -24;
  b.cfi[2].rule.offset[3] = std::numeric_limits<int64_t>::min();
  b.cfi[0].rule.cfa_plt = true;                          // a PLT stub's CFA
  b.cfi[4].rule.cfa_base = X86FrameRule::CfaBase::kRbx;  // a realigned frame's
  b.cfi[1].rule.signal_frame = true;                     // a signal trampoline's
  b.code = {{0x401000, Code({0x55, 0x48, 0x89, 0xe5, 0xc3})},
            {0x401005, Code({0x90})},
            {kMax - 2, Code({0xcc, 0xcc})}};
  return b;
}

TEST(EmbeddedCodecTest, FullAndEmptyBinariesRoundTrip) {
  const EmbeddedBinary full = FullBinary();
  auto decoded = DecodeEmbeddedBinary(EncodeEmbeddedBinary(full), kBase);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(*decoded, full);
  EXPECT_EQ(EmbeddedMemoryCost(*decoded), EmbeddedMemoryCost(full));

  const EmbeddedBinary empty;
  const Bytes bytes = EncodeEmbeddedBinary(empty);
  EXPECT_EQ(bytes.size(), 10u);  // path, build-id, flags, omitted, 6 empty tables
  auto decoded_empty = DecodeEmbeddedBinary(bytes, kBase);
  ASSERT_TRUE(decoded_empty.has_value()) << decoded_empty.error().message;
  EXPECT_EQ(*decoded_empty, empty);
}

TEST(EmbeddedCodecTest, TheLayoutIsCompact) {
  // 1000 addresses 4 bytes apart, each two frames of three functions in
  // three files; one CFI row each with the common rule.
  EmbeddedBinary b;
  const std::string names[] = {"alpha::run(int)", "beta::step()", "gamma<long>::go()"};
  for (uint64_t i = 0; i < 1000; ++i) {
    b.addresses.push_back({0x10000 + 4 * i,
                           {{names[i % 3], "/src/" + names[i % 3], uint32_t(i), true, kMax},
                            {names[(i + 1) % 3], "/src/x.cc", 7, false, i}}});
    b.cfi.push_back({0x10000 + 4 * i, 0x10004 + 4 * i, Rule(true, false, 16, Kind::kSame, 0)});
  }
  const Bytes bytes = EncodeEmbeddedBinary(b);
  // Per address: key 1, count 1, frames 4-6 + 4-6; per row: 2 + 5.
  EXPECT_LT(bytes.size(), 1000u * (2 + 14 + 7) + 200);
  auto decoded = DecodeEmbeddedBinary(bytes, kBase);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(*decoded, b);
}

TEST(EmbeddedCodecTest, PerfMapsRoundTrip) {
  for (const RecordedPerfMap& map :
       {RecordedPerfMap{4242, "7f0000001000 40 jit_countdown\n7f0000001040 20 run\n"},
        RecordedPerfMap{0, ""}, RecordedPerfMap{0xffffffff, std::string("a\0b", 3)}}) {
    const Bytes bytes = EncodePerfMap(map);
    EXPECT_EQ(bytes.size(), 4 + map.text.size());
    auto decoded = DecodePerfMap(bytes, kBase);
    ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
    EXPECT_EQ(*decoded, map);
  }
  for (size_t size = 0; size < 4; ++size) {
    ExpectError(DecodePerfMap(Bytes(size), kBase), size, "too short");
  }
}

// The encoder writes what Normalize would make of the tables, without
// what a reader would refuse, so that whatever it writes reads back.
TEST(EmbeddedCodecTest, TheEncoderSortsAndLeavesOutWhatReadersRefuse) {
  EmbeddedBinary b;
  b.segments = {{0, 0x1000, 0, 0x1000, true}, {kMax, 1, 0, 0, false}, {0, 0, kMax, 2, false}};
  b.addresses = {{0x30, {{"c", "", 0, false, kMax}}},
                 {0x10, {{"a", "", 0, false, kMax}}},
                 {0x30, {{"duplicate", "", 0, false, kMax}}}};
  b.functions = {{0x200, 8, "later"},
                 {0x100, 8, "first"},
                 {0x100, 4, "duplicate"},
                 {kMax - 1, 2, "past the end"}};
  const X86FrameRule rule = Rule(true, false, 8, Kind::kSame, 0);
  b.cfi = {{0x20, 0x30, rule},
           {0x10, 0x20, rule},
           {0x18, 0x40, rule},   // over the row before
           {0x50, 0x50, rule},   // empty
           {0x60, 0x40, rule}};  // backwards
  b.code = {{0x108, Code({2})},
            {0x100, Code({1, 1, 1, 1})},
            {0x102, Code({3})},
            {0x200, {}},
            {kMax, Code({4, 4})}};

  auto decoded = DecodeEmbeddedBinary(EncodeEmbeddedBinary(b), kBase);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EmbeddedBinary want;
  want.segments = {b.segments[0]};
  want.addresses = {b.addresses[1], b.addresses[0]};
  want.functions = {b.functions[1], b.functions[0]};
  want.cfi = {b.cfi[1], b.cfi[0]};
  want.code = {b.code[1], b.code[0]};
  EXPECT_EQ(*decoded, want);
  // What Normalize keeps of equal keys, the encoder keeps too.
  EmbeddedBinary normalized = b;
  normalized.Normalize();
  EXPECT_EQ(normalized.addresses, want.addresses);
}

TEST(EmbeddedCodecTest, EveryTruncationIsAnErrorNamingAnOffsetInside) {
  const Bytes bytes = EncodeEmbeddedBinary(FullBinary());
  for (size_t size = 0; size < bytes.size(); ++size) {
    ExpectError(DecodeEmbeddedBinary(std::span(bytes).first(size), kBase), size);
  }
  Bytes longer = bytes;
  longer.push_back(std::byte{0});
  ExpectError(DecodeEmbeddedBinary(longer, kBase), longer.size(), "1 more bytes");
}

// Builds payloads field by field, remembering where each field starts.
class PayloadBuilder {
 public:
  PayloadBuilder& V(uint64_t value) {
    while (value >= 0x80) {
      bytes_.push_back(static_cast<std::byte>(value | 0x80));
      value >>= 7;
    }
    bytes_.push_back(static_cast<std::byte>(value));
    return *this;
  }
  PayloadBuilder& S(const std::string& text) {
    V(text.size());
    for (char c : text) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  PayloadBuilder& Raw(std::initializer_list<uint8_t> raw) {
    for (uint8_t b : raw) bytes_.push_back(std::byte{b});
    return *this;
  }
  // Marks the next field: its absolute offset is mark().
  PayloadBuilder& Mark() {
    mark_ = kBase + bytes_.size();
    return *this;
  }
  // path "p", no build-id, flags 0, nothing omitted, strings "", "name".
  PayloadBuilder& Header() { return S("p").S("").V(0).V(0).V(2).S("").S("name"); }
  const Bytes& bytes() const { return bytes_; }
  uint64_t mark() const { return mark_; }

 private:
  Bytes bytes_;
  uint64_t mark_ = 0;
};

// The error's offset is the marked field's, and its message says `what`.
void ExpectErrorAt(const PayloadBuilder& payload, const std::string& what) {
  auto decoded = DecodeEmbeddedBinary(payload.bytes(), kBase);
  ASSERT_FALSE(decoded.has_value());
  const std::string& message = decoded.error().message;
  EXPECT_EQ(NamedOffset(message), payload.mark()) << message;
  EXPECT_TRUE(Contains(message, what)) << message << " (wanted '" << what << "')";
  EXPECT_TRUE(Contains(message, "'p'")) << message;  // the binary's path, once known
}

TEST(EmbeddedCodecTest, AHandBuiltPayloadDecodes) {
  PayloadBuilder p;  // one address, one inlined frame named string 1
  p.Header().V(0).V(1).V(0x40).V(1).V(1 << 1 | 1).V(0).V(9).V(0).V(0).V(0).V(0);
  auto decoded = DecodeEmbeddedBinary(p.bytes(), kBase);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(decoded->path, "p");
  ASSERT_EQ(decoded->addresses.size(), 1u);
  EXPECT_EQ(decoded->addresses[0].offset, 0x40u);
  ASSERT_EQ(decoded->addresses[0].frames.size(), 1u);
  EXPECT_EQ(decoded->addresses[0].frames[0], (AddressFrame{"name", "", 9, true, kMax}));
}

TEST(EmbeddedCodecTest, BadStringIndicesAreErrors) {
  PayloadBuilder frame_name;
  frame_name.Header().V(0).V(1).V(0x40).V(1).Mark().V(2 << 1).V(0).V(0).V(0).V(0).V(0).V(0);
  ExpectErrorAt(frame_name, "string index 2, beyond the table's 2");
  PayloadBuilder frame_file;
  frame_file.Header().V(0).V(1).V(0x40).V(1).V(0).Mark().V(7).V(0).V(0).V(0).V(0).V(0);
  ExpectErrorAt(frame_file, "frame file");
  PayloadBuilder function_name;
  function_name.Header().V(0).V(0).V(1).V(0x100).V(4).Mark().V(kMax).V(0).V(0);
  ExpectErrorAt(function_name, "function name");
}

TEST(EmbeddedCodecTest, CountsAndSizesBeyondThePayloadAreErrors) {
  PayloadBuilder strings;
  strings.S("p").S("").V(0).V(0).Mark().V(1000).S("a");
  ExpectErrorAt(strings, "1000 entries, more than the 2 bytes left");
  PayloadBuilder addresses;
  addresses.Header().V(0).Mark().V(3).V(1).V(0).V(0).V(0);  // 4 bytes: not 3 x 2
  ExpectErrorAt(addresses, "more than the 4 bytes left");
  PayloadBuilder frames;
  frames.Header().V(0).V(1).V(0x40).Mark().V(kMax).V(0).V(0).V(0).V(0);
  ExpectErrorAt(frames, "frame count");
  PayloadBuilder code;
  code.Header().V(0).V(0).V(0).V(0).V(1).Mark().V(0x401000).V(100).Raw({0x55, 0xc3});
  ExpectErrorAt(code, "100 bytes claimed, more than the 2 left");
  PayloadBuilder path;
  path.Mark().V(kMax).S("x");
  auto decoded = DecodeEmbeddedBinary(path.bytes(), kBase);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(NamedOffset(decoded.error().message), kBase) << decoded.error().message;
  EXPECT_TRUE(Contains(decoded.error().message, "path")) << decoded.error().message;
}

TEST(EmbeddedCodecTest, RangesPast2To64AndEmptyRangesAreErrors) {
  PayloadBuilder address;
  address.Header().V(0).V(2).V(kMax).V(0).Mark().V(0).V(0).V(0).V(0).V(0);
  ExpectErrorAt(address, "past 2^64");
  PayloadBuilder segment;
  segment.Header().V(1).Mark().V(kMax - 1).V(2).V(0).V(0).V(0).V(0).V(0).V(0).V(0);
  ExpectErrorAt(segment, "segment at offset");
  PayloadBuilder function;
  function.Header().V(0).V(0).V(1).Mark().V(kMax - 1).V(2).V(0).V(0).V(0);
  ExpectErrorAt(function, "ends past 2^64");
  PayloadBuilder row;  // a row ending at 2^64 + 1 ...
  row.Header().V(0).V(0).V(0).V(1).Mark().V(kMax).V(2).V(1).V(0).V(0).V(0);
  ExpectErrorAt(row, "ends past 2^64");
  PayloadBuilder second_row;  // ... or starting past it, after another
  second_row.Header().V(0).V(0).V(0).V(2).V(kMax - 1).V(1).V(0).V(0).V(0);
  second_row.Mark().V(1).V(1).V(0).V(0).V(0).V(0);
  ExpectErrorAt(second_row, "starts past 2^64");
  PayloadBuilder empty;
  empty.Header().V(0).V(0).V(0).V(0).V(1).Mark().V(0x401000).V(0).V(0);
  ExpectErrorAt(empty, "an empty range");
}

TEST(EmbeddedCodecTest, UnknownBitsAndOverLongFieldsAreErrors) {
  PayloadBuilder binary_flags;
  binary_flags.S("p").S("").Mark().V(2).V(0).V(0).V(0).V(0).V(0).V(0).V(0);
  ExpectErrorAt(binary_flags, "unknown bits 0x2");
  PayloadBuilder segment_flags;
  segment_flags.Header().V(1).V(0).V(0).V(0).V(0).Mark().V(3).V(0).V(0).V(0).V(0);
  ExpectErrorAt(segment_flags, "segment flags");
  PayloadBuilder row_flags;
  row_flags.Header().V(0).V(0).V(0).V(1).V(0).V(1).Mark().V(1 << 12).V(0).V(0).V(0);
  ExpectErrorAt(row_flags, "CFI row flags");
  PayloadBuilder two_bases;  // rbp and rbx
  two_bases.Header().V(0).V(0).V(0).V(1).V(0).V(1).Mark().V(1 << 10 | 1 << 1).V(0).V(0).V(0);
  ExpectErrorAt(two_bases, "a CFA from both rbp and rbx");
  PayloadBuilder kind;  // rule 3 for the return address
  kind.Header().V(0).V(0).V(0).V(1).V(0).V(1).V(1).V(0).Mark().V(uint64_t{3} << 12).V(0);
  ExpectErrorAt(kind, "unknown rule 3 for register 6");
  PayloadBuilder kinds;
  kinds.Header().V(0).V(0).V(0).V(1).V(0).V(1).V(1).V(0).Mark().V(1 << 14).V(0);
  ExpectErrorAt(kinds, "register rules");
  PayloadBuilder line;
  line.Header().V(0).V(1).V(0).V(1).V(0).V(0).Mark().V(uint64_t{1} << 32).V(0).V(0).V(0).V(0);
  ExpectErrorAt(line, "over 32 bits");
  PayloadBuilder varint;  // 11 bytes of continuation
  varint.S("p").S("").V(0).Mark().Raw(
      {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  ExpectErrorAt(varint, "a varint over 64 bits");
  PayloadBuilder ten;  // the 10th byte may hold only bit 63
  ten.S("p").S("").V(0).Mark().Raw({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02});
  ExpectErrorAt(ten, "a varint over 64 bits");
}

TEST(EmbeddedCodecTest, DecodedTablesAreBoundedInMemory) {
  // A long name named by many frames: a few bytes each, a copy each (at
  // many addresses: an address keeps kMaxReadInlineDepth frames at most).
  const std::string name(1024, 'n');
  PayloadBuilder p;
  p.S("p").S("").V(0).V(0).V(1).S(name).V(0);
  constexpr uint64_t kAddresses = 20000;
  p.Mark().V(kAddresses);
  for (uint64_t i = 0; i < kAddresses; ++i) p.V(0).V(1).V(0).V(0).V(0).V(0);
  p.V(0).V(0).V(0);
  ASSERT_LT(p.bytes().size(), 200000u);
  auto full = DecodeEmbeddedBinary(p.bytes(), kBase);
  ASSERT_TRUE(full.has_value()) << full.error().message;
  const uint64_t cost = EmbeddedMemoryCost(*full);
  EXPECT_GT(cost, kAddresses * 2 * name.size());  // name and file both copied
  uint64_t charged = 0;
  auto bounded = DecodeEmbeddedBinary(p.bytes(), kBase, uint64_t{16} << 20, &charged);
  ASSERT_FALSE(bounded.has_value());
  EXPECT_TRUE(Contains(bounded.error().message, "more than the 16777216 bytes of memory"))
      << bounded.error().message;
  EXPECT_TRUE(NamedOffset(bounded.error().message).has_value());
  // What it cost before it failed is said, for a budget over many chunks.
  EXPECT_GT(charged, uint64_t{15} << 20);
  EXPECT_LE(charged, uint64_t{16} << 20);
  // The limit covers the decoded tables (and the string table meanwhile).
  EXPECT_TRUE(DecodeEmbeddedBinary(p.bytes(), kBase, cost + 1024, &charged).has_value());
  EXPECT_GE(charged, cost);
  EXPECT_FALSE(DecodeEmbeddedBinary(p.bytes(), kBase, cost - 1).has_value());
}

// 100,000 inlined frames at one address, in a few hundred KB (less after
// zstd): the decoder keeps the innermost kMaxReadInlineDepth - 1 and the
// last, the function holding them, and charges only those; the frames it
// reads past are still checked.
TEST(EmbeddedCodecTest, DeepInlineChainsAreCutWhileDecoding) {
  constexpr uint64_t kFrames = 100000;
  auto payload = [&](uint64_t bad_frame) {
    PayloadBuilder p;
    p.S("p").S("").V(0).V(0).V(2).S("inl").S("holder").V(0);
    p.V(1).V(0x40).V(kFrames);
    for (uint64_t i = 0; i + 1 < kFrames; ++i) {
      if (i == bad_frame) p.Mark();
      p.V(i == bad_frame ? 9 << 1 | 1 : 0 << 1 | 1).V(0).V(i + 1).V(0);
    }
    p.V(1 << 1).V(0).V(kFrames).V(0x11);
    p.V(0).V(0).V(0);
    return p;
  };
  PayloadBuilder deep = payload(kMax);
  auto decoded = DecodeEmbeddedBinary(deep.bytes(), kBase);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  ASSERT_EQ(decoded->addresses.size(), 1u);
  const std::vector<AddressFrame>& frames = decoded->addresses[0].frames;
  ASSERT_EQ(frames.size(), kMaxReadInlineDepth);
  for (size_t i = 0; i + 1 < frames.size(); ++i) {
    EXPECT_EQ(frames[i], (AddressFrame{"inl", "inl", static_cast<uint32_t>(i + 1), true, kMax}));
  }
  EXPECT_EQ(frames.back(), (AddressFrame{"holder", "inl", kFrames, false, 0x10}));
  EXPECT_LT(EmbeddedMemoryCost(*decoded), uint64_t{64} << 10);
  // A bad string index among the frames read past is an error all the same.
  ExpectErrorAt(payload(5000), "string index 9, beyond the table's 2");
}

}  // namespace
}  // namespace sample::format
