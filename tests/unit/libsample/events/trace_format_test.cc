#include "libsample/events/trace_format.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sample {
namespace {

// Copied from a 6.18 kernel's tracefs.
constexpr std::string_view kSysEnterWrite =
    "name: sys_enter_write\n"
    "ID: 840\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n"
    "\n"
    "print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", ((unsigned long)(REC->fd)), "
    "((unsigned long)(REC->buf)), ((unsigned long)(REC->count))\n";

// A made-up format with every kind of field.
constexpr std::string_view kMixed =
    "name: mixed\n"
    "ID: 7\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:char comm[8];\toffset:4;\tsize:8;\tsigned:0;\n"
    "\tfield:short delta;\toffset:12;\tsize:2;\tsigned:1;\n"
    "\tfield:__data_loc char[] path;\toffset:14;\tsize:4;\tsigned:0;\n"
    "\tfield:int args[2];\toffset:18;\tsize:8;\tsigned:1;\n"
    "\tfield:u8 addr[sizeof(struct in6_addr)];\toffset:26;\tsize:3;\tsigned:0;\n"
    "\tfield:__rel_loc char[] rel;\toffset:29;\tsize:4;\tsigned:0;\n";

template <typename T>
void Put(std::vector<std::byte>& raw, size_t offset, T value) {
  if (raw.size() < offset + sizeof(T)) raw.resize(offset + sizeof(T));
  std::memcpy(raw.data() + offset, &value, sizeof(T));
}

void PutText(std::vector<std::byte>& raw, size_t offset, std::string_view text) {
  if (raw.size() < offset + text.size()) raw.resize(offset + text.size());
  std::memcpy(raw.data() + offset, text.data(), text.size());
}

TEST(TraceFormatTest, ParsesTheKernelsFormat) {
  auto format = ParseTraceFormat(kSysEnterWrite);
  ASSERT_TRUE(format) << format.error().message;
  EXPECT_EQ(format->name, "sys_enter_write");
  EXPECT_EQ(format->id, 840u);
  ASSERT_EQ(format->fields.size(), 8u);
  const TraceField& buf = format->fields[6];
  EXPECT_EQ(buf.name, "buf");
  EXPECT_EQ(buf.type, "const char *");
  EXPECT_EQ(buf.offset, 24u);
  EXPECT_EQ(buf.size, 8u);
  EXPECT_EQ(buf.kind, TraceField::Kind::kPointer);
  EXPECT_TRUE(format->fields[3].is_signed);
  EXPECT_TRUE(format->fields[3].common());
  EXPECT_EQ(format->fields[7].kind, TraceField::Kind::kInteger);
}

TEST(TraceFormatTest, DecodesSysEnterWrite) {
  auto format = ParseTraceFormat(kSysEnterWrite);
  ASSERT_TRUE(format);
  std::vector<std::byte> raw(40);
  Put<uint16_t>(raw, 0, 840);
  Put<int32_t>(raw, 8, 1);
  Put<uint64_t>(raw, 16, 1);
  Put<uint64_t>(raw, 24, 0x7ffd12345678);
  Put<uint64_t>(raw, 32, 512);
  EXPECT_EQ(TraceFieldsText(DecodeTraceFields(*format, raw)),
            "__syscall_nr=1 fd=1 buf=0x7ffd12345678 count=512");
}

TEST(TraceFormatTest, DecodesEveryKind) {
  auto format = ParseTraceFormat(kMixed);
  ASSERT_TRUE(format) << format.error().message;
  EXPECT_EQ(format->fields[1].kind, TraceField::Kind::kCharArray);
  EXPECT_EQ(format->fields[3].kind, TraceField::Kind::kDynString);
  EXPECT_EQ(format->fields[4].kind, TraceField::Kind::kArray);
  EXPECT_EQ(format->fields[5].kind, TraceField::Kind::kBytes);
  EXPECT_TRUE(format->fields[6].relative);
  std::vector<std::byte> raw(33);
  PutText(raw, 4, "bash\0zz");
  Put<int16_t>(raw, 12, -3);
  PutText(raw, 40, "/tmp/a b\x01\\");         // 10 bytes
  Put<uint32_t>(raw, 14, (10u << 16) | 40u);  // __data_loc: offset 40, length 10
  Put<int32_t>(raw, 18, -1);
  Put<int32_t>(raw, 22, 7);
  PutText(raw, 26, "\x0a\xff\x01");
  PutText(raw, 60, "rel");
  Put<uint32_t>(raw, 29, (3u << 16) | (60u - 33u));  // from the field's end (33)
  EXPECT_EQ(TraceFieldsText(DecodeTraceFields(*format, raw)),
            "comm=bash delta=-3 path=/tmp/a\\x20b\\x01\\x5c args=[-1,7] addr=0aff01 rel=rel");
}

TEST(TraceFormatTest, FieldsPastThePayloadAreMissing) {
  auto format = ParseTraceFormat(kMixed);
  ASSERT_TRUE(format);
  std::vector<std::byte> raw(20);
  Put<uint32_t>(raw, 14, (0xffffu << 16) | 0xfff0u);  // data far past the end
  const auto values = DecodeTraceFields(*format, raw);
  EXPECT_EQ(TraceFieldsText(values), "comm= delta=0 path=? args=? addr=? rel=?");
  // No payload at all.
  EXPECT_EQ(TraceFieldsText(DecodeTraceFields(*format, {})),
            "comm=? delta=? path=? args=? addr=? rel=?");
}

TEST(TraceFormatTest, OddSizesAreBytes) {
  auto format = ParseTraceFormat(
      "format:\n\tfield:int x;\toffset:0;\tsize:3;\tsigned:1;\n"
      "\tfield:int y[0];\toffset:0;\tsize:0;\tsigned:1;\n"
      "\tfield:long z[3];\toffset:0;\tsize:4;\tsigned:1;\n");
  ASSERT_TRUE(format) << format.error().message;
  std::vector<std::byte> raw(4, std::byte{0xab});
  EXPECT_EQ(TraceFieldsText(DecodeTraceFields(*format, raw)), "x=ababab y= z=abababab");
  // unsigned char arrays are bytes (MAC addresses), not text.
  auto mac = ParseTraceFormat("\tfield:unsigned char mac[4];\toffset:0;\tsize:4;\tsigned:0;\n");
  ASSERT_TRUE(mac);
  EXPECT_EQ(TraceFieldsText(DecodeTraceFields(*mac, raw)), "mac=[171,171,171,171]");
}

TEST(TraceFormatTest, RefusesMalformedFormats) {
  EXPECT_FALSE(ParseTraceFormat(""));
  EXPECT_FALSE(ParseTraceFormat("name: x\nID: 3\n"));
  auto no_offset = ParseTraceFormat("\tfield:int x;\tsize:4;\n");
  ASSERT_FALSE(no_offset);
  EXPECT_NE(no_offset.error().message.find("line 1"), std::string::npos);
  EXPECT_FALSE(ParseTraceFormat("\tfield:;\toffset:0;\tsize:4;\n"));
  EXPECT_FALSE(ParseTraceFormat("\tfield:int x;\toffset:99999999999;\tsize:4;\n"));
  EXPECT_FALSE(ParseTraceFormat("\tfield:int x;\toffset:-1;\tsize:4;\n"));
  // Huge offsets and sizes parse, and decode as missing.
  auto huge =
      ParseTraceFormat("\tfield:char c[4294967295];\toffset:4294967295;\tsize:4294967295;\n");
  ASSERT_TRUE(huge);
  std::vector<std::byte> raw(16);
  EXPECT_EQ(TraceFieldsText(DecodeTraceFields(*huge, raw)), "c=?");
}

}  // namespace
}  // namespace sample
