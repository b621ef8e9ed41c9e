// Linux perf's perf.data, as perf 5.x and 6.x write it (little-endian; the
// layout is described in perf's Documentation/perf.data-file-format.txt).
//
// File mode (perf record -o FILE):
//
//   FileHeader            magic "PERFILE2", sizes, three sections, and a
//                         256-bit map of the features that follow the data
//   attrs section         attr_size-byte entries: a perf_event_attr (its own
//                         .size says how much of it perf knew), then a
//                         FileSection locating that event's u64 sample ids
//   data section          records: the kernel's (type < 64) and perf's own
//                         (UserRecord); perf's records need not be 8-byte
//                         sized, and AUXTRACE and HEADER_TRACING_DATA are
//                         followed by data their header's size leaves out
//   feature sections      at data.offset + data.size, one FileSection per
//                         set feature bit, in bit order, each locating that
//                         feature's bytes (strings are u32 length + NUL-
//                         padded text; string lists a u32 count first)
//
// A perf killed before it finished leaves data.size at 0 and no features:
// the records then run to the end of the file.
//
// Pipe mode (perf record -o -): a PipeHeader, then only records; the
// attributes, features and build-ids arrive as HEADER_ATTR, HEADER_FEATURE
// (u64 feature id, then the feature's bytes) and HEADER_BUILD_ID records
// before the kernel records that need them.
//
// perf record -z wraps the kernel records in COMPRESSED records (zstd
// frames that may span several records, and a record may span frames);
// COMPRESSED2 is the same with a u64 payload size and 8-byte padding.
#pragma once

#include <cstdint>

namespace sample::format::perf_data {

inline constexpr uint64_t kMagic = 0x32454c4946524550ull;         // "PERFILE2" read little-endian
inline constexpr uint64_t kMagicBigEndian = 0x50455246494c4532ull;  // the same from a big-endian perf

struct FileSection {
  uint64_t offset;
  uint64_t size;
};
static_assert(sizeof(FileSection) == 16);

struct FileHeader {
  uint64_t magic;
  uint64_t size;       // of this header
  uint64_t attr_size;  // of one attrs entry: perf_event_attr + FileSection
  FileSection attrs;
  FileSection data;
  FileSection event_types;  // unused since perf 3.x
  uint64_t features[4];     // bit N: feature N has a section
};
static_assert(sizeof(FileHeader) == 104);

struct PipeHeader {
  uint64_t magic;
  uint64_t size;  // 16
};
static_assert(sizeof(PipeHeader) == 16);

// Feature bits (perf's HEADER_*), those this reader uses or names.
enum Feature : uint32_t {
  kTracingData = 1,
  kBuildId = 2,
  kHostname = 3,
  kOsRelease = 4,
  kVersion = 5,
  kArch = 6,
  kNrCpus = 7,
  kCpuDesc = 8,
  kCpuId = 9,
  kTotalMem = 10,
  kCmdline = 11,
  kEventDesc = 12,
  kCpuTopology = 13,
  kNumaTopology = 14,
  kBranchStack = 15,
  kPmuMappings = 16,
  kGroupDesc = 17,
  kAuxtrace = 18,
  kStat = 19,
  kCache = 20,
  kSampleTime = 21,
  kMemTopology = 22,
  kClockId = 23,
  kDirFormat = 24,
  kBpfProgInfo = 25,
  kBpfBtf = 26,
  kCompressed = 27,
  kCpuPmuCaps = 28,
  kClockData = 29,
  kHybridTopology = 30,
  kPmuCaps = 31,
  kLastKnownFeature = 31,
};

// perf's own record types (PERF_RECORD_USER_TYPE_START and on).
enum UserRecord : uint32_t {
  kUserTypeStart = 64,
  kHeaderAttr = 64,
  kHeaderEventType = 65,
  kHeaderTracingData = 66,
  kHeaderBuildId = 67,
  kFinishedRound = 68,
  kIdIndex = 69,
  kAuxtraceInfo = 70,
  kAuxtraceRecord = 71,
  kAuxtraceError = 72,
  kThreadMap = 73,
  kCpuMap = 74,
  kStatConfig = 75,
  kStatRecord = 76,
  kStatRound = 77,
  kEventUpdate = 78,
  kTimeConv = 79,
  kHeaderFeature = 80,
  kCompressedRecord = 81,
  kFinishedInit = 82,
  kCompressed2Record = 83,
};

// The build-id entry of the kBuildId feature and of HEADER_BUILD_ID: a
// perf_event_header, then these, then a NUL-padded file name.
struct BuildIdEntry {
  int32_t pid;
  uint8_t build_id[24];  // 20 bytes of id; [20] is its size with kBuildIdSizeMisc
};
static_assert(sizeof(BuildIdEntry) == 28);
inline constexpr uint16_t kBuildIdSizeMisc = 1u << 15;  // PERF_RECORD_MISC_BUILD_ID_SIZE

// EVENT_UPDATE kinds (UNIT 0, SCALE 1, NAME 2, CPUS 3): NAME carries an
// event's name for an id.
inline constexpr uint64_t kEventUpdateName = 2;

// Whether [offset, offset + size) lies within `total` bytes (a section or
// record of the file, checked before it is read).
inline bool InRange(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

}  // namespace sample::format::perf_data
