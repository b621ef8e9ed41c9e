// The sample.data file format, version 1.
//
// All integers are little-endian (the byte order of every host we record
// on); structs below are packed and their sizes are asserted.
//
//   FileHeader           64 bytes, magic "SAMPLEDT"
//   Chunk, Chunk, ...    self-delimiting, appended as recording goes on
//   Trailer chunk        written once, at a clean close
//
// A chunk is a ChunkHeader (56 bytes, never compressed) followed by
// `stored_size` payload bytes: zstd frames when compression is kZstd (one,
// or several whose contents follow each other: kChunkFlagSplitTimeColumn),
// the raw payload when kNone. `crc32` (IEEE, as zlib) covers the header with
// the crc32 field zeroed, then the stored payload, so a torn or corrupted
// chunk is detected before it is decompressed.
//
// Payloads by chunk type:
//   kEvents    repeated: EventEntryHeader, attr bytes (attr_size), name
//              (name_size), ids (id_count x u64); each part padded to 8.
//              Written before any kRecords chunk that refers to the ids.
//   kMetadata  repeated: u32 key_size, u32 value_size, key, value (not
//              padded). Keys used: hostname, os_release, os_version, arch,
//              cpus_online, cmdline, start_realtime_ns, start_clock_ns,
//              page_size, recorder_version, kernel_boot_id (a file never
//              closed is named from /proc/kallsyms on that boot). A recording with JIT
//              processes (anonymous executable mappings) ends with a second
//              kMetadata chunk (recorders since issue 56): boot_id
//              (/proc/sys/kernel/random/boot_id) and "jit_uid PID", the
//              decimal real uid of each such process. A report reads this
//              host's /tmp/perf-PID.map for a process the file holds no
//              kPerfMap of only on that boot and only if that uid owns the
//              map; files without them (older ones, perf.data) only a map
//              of the user running the report.
//   kRecords   kernel perf records exactly as the kernel wrote them
//              (perf_event_header + body), concatenated; sizes multiples
//              of 8. Records of different CPUs are interleaved; readers
//              order them by time. record_count and time_min/max describe
//              the chunk. With kChunkFlagSampleTimeDeltas in the chunk's
//              flags, one field differs (see there): the time of each
//              PERF_RECORD_SAMPLE; with kChunkFlagUserRegDeltas, three
//              registers; with kChunkFlagSampleColumns, the samples' time,
//              ip and registers are zeros and columns of their values
//              follow the records (sample_columns.h). Recorders may leave PERF_SAMPLE_CPU
//              out of what the kernel writes (each ring buffer is one
//              CPU's, and smaller records fit more samples in it) and
//              insert it from the buffer's CPU before writing: the records
//              are then those the kernel writes for the kEvents attrs,
//              which include the bit. fp,leaf user stack copies (-g) are
//              what the kernel wrote, cut after the slot holding the
//              chain's first caller (size and dyn_size say so) and with
//              the words that point neither into code nor into the stack
//              above the stack pointer zeroed: the words an unwinder's CFI
//              steps read are kept (record/embed/code_hits.h).
//   kBuildIds  the kMetadata layout: key = path of a mapped binary, value
//              = its identity (libsample/symbols/file_identity.h: GNU
//              build-id hex, else "go:..." or "elf:..."). Written at close for
//              every file-backed executable mapping seen.
//   kKernelSymbols  kallsyms text ("addr t name[\tmodule]" lines) for the
//              kernel symbols covering sampled kernel addresses, each with
//              its successor; absent when kallsyms was unreadable.
//   kVdso      the ELF image of the recording host's [vdso], as the kernel
//              maps it into (64-bit) processes: it is on no disk, so this is
//              the only way to name frames in it. Written at close when a
//              [vdso] mapping was seen and the recorder embeds nothing
//              (--no-embed), or when embedding it failed; recorders since
//              2026-11-27 otherwise embed the functions samples hit in it
//              as any binary's (kEmbeddedBinary, path "[vdso]"), and only
//              when some were. Its build-id is in kBuildIds under the key
//              "[vdso]" either way.
//   kCounts    counters' totals: CountsHeader, then entry_count times:
//              CountEntryHeader, attr bytes (attr_size), name (name_size),
//              each padded to 8, then interval_count x CountInterval. A
//              counting run (sample-record --stat -o) writes one with
//              source kCountsFromCounting, and its -I intervals; a sampling
//              recording writes one at close (kCountsFromSampling) with the
//              final count of each event read before its fds are closed,
//              so the report can say how much multiplexing there was.
//   kToggles   repeated ToggleEntry: which event (a trigger, by its index in
//              the kEvents order) switches which other event on or off,
//              per thread or per CPU. Written after kEvents when the -e
//              list has on=/off= terms; the triggers' samples are in the
//              kRecords chunks like any other, and a reader keeps a toggled
//              event's samples only inside on..off windows.
//   kControl   repeated ControlEntry (16 bytes): when sampling was switched
//              on or off while recording (-D, --control), in time order.
//              `event` is the index of the event in the kEvents order, or
//              kControlAllEvents for every sampling event. Sampling is off
//              before a file's first entry. Each switch is written as a
//              chunk of its own as it happens (so a recorder that dies keeps
//              them), and one more at the end turns everything off; a
//              recording without -D or --control has none, and was on
//              throughout; an --alloc recording of a running process has
//              one on (once every probe is) and one off (before the first
//              goes off), between which the report counts its calls. A chunk rather than records in
//              kRecords: nothing in the kernel's record stream changes (CPU insertion, time deltas,
//              perf.data's own record types), and readers that do not know the type skip it whole.
//   kTraceFormats  the tracepoints' field layouts, so the report can name
//              the fields of their PERF_SAMPLE_RAW payloads without the
//              recording host's tracefs: repeated TraceFormatEntryHeader,
//              then the tracefs format text (format_size bytes, as the
//              kernel wrote events/SUBSYSTEM/NAME/format) and the event's
//              --filter expression (filter_size bytes, empty when none),
//              each padded to 8. event_index is the event's position in the
//              kEvents chunk (each -e tracepoint has its own entry, so two
//              of the same tracepoint keep their own filters). Written with
//              kEvents when any event is a tracepoint.
//   kEmbeddedBinary  what the recorder embedded of one binary with samples
//              (EmbeddedBinary, libsample/symbols/embedded_binary.h), one
//              chunk per binary, written at close, so the recording names,
//              unwinds and annotates its code where the file is not. Every
//              number is a LEB128 varint ("v" unsigned; "s" signed,
//              zigzag), a string is v size then its bytes (no NUL), and
//              the tables follow each other with nothing after the last:
//                path, build_id (strings; build_id lowercase hex or empty)
//                v flags (bit 0: fixed_address), v code_omitted
//                strings: v count, count strings; the tables below name
//                  them by index (frame names, files, function names)
//                segments: v count, each v offset, v filesz, v vaddr,
//                  v memsz, v flags (bit 0: executable)
//                addresses: v count, each v offset (the first as it is,
//                  then the gap from the one before, minus 1), v
//                  frame_count, then its frames innermost first, each
//                  v (name index << 1 | inlined), v file index, v line,
//                  v symbol_offset + 1 (mod 2^64: 0 is UINT64_MAX, unknown)
//                functions: v count, each v start (as offsets above), v
//                  size, v name index
//                cfi: v count, each v start (the gap from the previous
//                  row's end; the first from 0), v end - start, v flags
//                  (bit 0 usable, bit 1 the CFA is rbp + cfa_offset,
//                  bits 2-8: which of the 7 registers' offsets follow,
//                  bit 9 cfa_plt: a PLT stub's CFA, see X86FrameRule,
//                  bit 10 the CFA is rbx + cfa_offset, since 2026-11-28:
//                  older readers refuse the chunk, as any unknown bit;
//                  never both bits 1 and 10; bit 11 signal_frame, since
//                  2026-12-07), s cfa_offset, v kinds
//                  (2 bits a register in X86FrameRule::kDwarfRegs order
//                  from bit 0: 0 same, 1 undefined, 2 at CFA + offset),
//                  then s offset for each register whose bit is set
//                code: v count, each v vaddr (the gap from the previous
//                  range's end; the first from 0), v size, size bytes
//              So tables are sorted and unique, CFI rows and code ranges
//              disjoint and not empty, by construction. The writer leaves
//              out what a reader would refuse (a range whose end passes
//              2^64, an empty range, a row over an earlier row's
//              addresses) and keeps a chunk within max_chunk_raw_size.
//              Readers refuse a chunk with a truncated or over-long field,
//              a count of more entries than the bytes left could hold, a
//              string index beyond the table, a size beyond the bytes
//              left, an end past 2^64, unknown flag bits or kinds, bytes
//              after the last table, or tables that would take more than
//              kMaxEmbeddedDecodedSize of memory (a string index stands
//              for a copy of the string). Such a chunk is skipped with a
//              warning naming its offset: it costs only the names, rules
//              and code of that one binary, which is then looked for on
//              disk as in recordings without it. The embedded chunks of a
//              file, and of all files a report reads together, take at
//              most kMaxEmbeddedTotalSize, and at most
//              kEmbeddedDecodedFloor + kMaxEmbeddedDecodedRatio x the
//              files' stored bytes; later ones are skipped the same
//              way. Readers keep at most kMaxReadInlineDepth frames of an
//              address (the innermost and the last:
//              libsample/symbols/address_frames.h) and read past the rest.
//   kPerfMap   a JIT's /tmp/perf-PID.map as the recorder copied it, whole:
//              u32 pid (as the records name the process), then the map's
//              text (the rest of the payload), untrusted like any perf map.
//              One chunk per map, written at close; counted in
//              kMaxEmbeddedTotalSize with the binaries.
//   kJitDump   a JIT's jitdump (jit-PID.dump, libsample/symbols/jitdump.h)
//              as the recorder copied it: u32 pid (as the records name the
//              process), u32 part, then the dump's bytes. Part 0 begins with
//              the dump's own header; a dump larger than a part
//              (kJitDumpPartSize) goes on in parts 1, 2, ... of the same
//              pid, each cut where a record ends, so every part holds whole
//              records and a reader concatenates them in part order. A part
//              0 starts a new dump of its pid (a pid reused). The bytes are
//              untrusted like any jitdump; a dump is stored up to
//              kMaxJitDumpSize (the recorder's closing notes say what was
//              left out). Written at close; counted in kMaxEmbeddedTotalSize
//              with the binaries.
//   kTrailer   TrailerHeader, then cpu_count x TrailerCpu, then
//              chunk_count x u64 file offsets of every preceding chunk
//              (the table of contents).
//
// Memory: a chunk's header says how large its payload is once decompressed,
// and a crafted file can claim gigabytes from a few bytes (zstd turns 4
// bytes into a 128 KiB block of one repeated byte). The file header says
// the largest payload its writer makes (max_chunk_raw_size; 0 in files of
// writers before it, taken as kReaderMaxChunkRawSize), which may not exceed
// kReaderMaxChunkRawSize; a chunk that claims more than that, or more than
// kMaxCompressionRatio times its stored bytes (beyond the first MiB), is
// damaged: readers skip it without allocating. Writers split record
// chunks to stay within their limit.
//
// A recorder that dies leaves no trailer: a reader takes every complete,
// checksum-valid chunk and reports the file as not finalized. New data gets
// new chunk types; readers skip types they do not know.
#pragma once

#include <cstdint>

namespace sample::format {

inline constexpr char kFileMagic[8] = {'S', 'A', 'M', 'P', 'L', 'E', 'D', 'T'};
inline constexpr uint32_t kFileVersion = 1;
inline constexpr uint32_t kChunkMagic = 0x4b4e4843;  // "CHNK" in file order

// What sample-record's writer puts in FileHeader.max_chunk_raw_size: its
// record chunks are ~1 MiB (a drain can add every ring's contents, split
// at this size), metadata chunks far less.
inline constexpr uint64_t kWriterMaxChunkRawSize = uint64_t{64} << 20;
// The most any file may declare, and the limit of files that declare none.
inline constexpr uint64_t kReaderMaxChunkRawSize = uint64_t{256} << 20;
// Decompressed bytes per stored byte, beyond the first MiB of a chunk. Our
// recordings reach 510x (--call-graph dwarf,65528 of a shallow loop: each
// 64 KiB stack copy repeats the last); a sample's own fields (time, ip,
// registers) keep real ones well below this.
inline constexpr uint64_t kMaxCompressionRatio = 8192;
inline constexpr uint64_t kRatioFreeRawSize = uint64_t{1} << 20;
// Memory a reader lets one kEmbeddedBinary chunk's decoded tables take
// (frames hold copies of the strings their indices name, so a few bytes
// can stand for a long name many times over), and all embedded chunks of
// a file together. Honest tables are far smaller: only what the samples
// hit is embedded.
inline constexpr uint64_t kMaxEmbeddedDecodedSize = uint64_t{256} << 20;
inline constexpr uint64_t kMaxEmbeddedTotalSize = uint64_t{1} << 30;
// And in proportion to the files: the embedded chunks of all the files one
// report reads (one, -i A B ..., rotated files) take at most
// kEmbeddedDecodedFloor plus kMaxEmbeddedDecodedRatio times the files'
// stored bytes (DecodeBudget, decode_budget.h), within
// kMaxEmbeddedTotalSize: a 32 KB crafted file claimed the whole GiB, and
// each file of a set claimed it again. Measured (2026-12-07, decoded
// tables as EmbeddedMemoryCost counts them, plus perf maps and jitdumps,
// over the file's size): -g and --call-graph dwarf of the inline, threads
// and jit workloads 0.06-0.86, xz 0.02-0.13, python3 1.6-3.2, g++ (cc1plus)
// 0.7-2.6, unit_tests (DWARF, inline chains) 3.7; the largest decoded 2 MB.
// The ratio is 17 times the highest, the floor 8 times the largest.
inline constexpr uint64_t kEmbeddedDecodedFloor = uint64_t{16} << 20;
inline constexpr uint64_t kMaxEmbeddedDecodedRatio = 64;
// A kJitDump chunk's dump bytes at most (a part), and a whole dump's: a
// long-running node process writes some MB a minute, each code load with
// its code.
inline constexpr uint64_t kJitDumpPartSize = uint64_t{16} << 20;
inline constexpr uint64_t kMaxJitDumpSize = uint64_t{256} << 20;

enum class ChunkType : uint16_t {
  kEvents = 1,
  kMetadata = 2,
  kRecords = 3,
  kBuildIds = 4,
  kKernelSymbols = 5,
  kVdso = 6,
  kCounts = 7,
  kTraceFormats = 8,
  kToggles = 10,
  kControl = 11,
  kEmbeddedBinary = 12,
  kPerfMap = 13,
  kJitDump = 14,
  kTrailer = 15,
};

enum class Compression : uint16_t {
  kNone = 0,
  kZstd = 1,
};

// ChunkHeader.flags of a kRecords chunk.
//
// kChunkFlagSampleTimeDeltas: the time field of every PERF_RECORD_SAMPLE,
// at byte offset kChunkTimeOffset(flags) of the record (the same for every
// event of a recording), holds its time minus the time of the previous
// PERF_RECORD_SAMPLE in the chunk (minus 0 for the first), modulo 2^64.
// Readers add them back up. Samples come microseconds apart, and small
// deltas compress far better than 8-byte nanosecond clocks: 17-29% smaller
// files at -g -F 50000 and 10000. Writers set it only on compressed chunks.
inline constexpr uint32_t kChunkFlagSampleTimeDeltas = 1u << 0;
inline constexpr uint32_t kChunkTimeOffsetShift = 8;  // bits 8-15: the offset
inline constexpr uint32_t kChunkTimeOffsetMask = 0xffu << kChunkTimeOffsetShift;
// kChunkFlagUserRegDeltas: in every PERF_RECORD_SAMPLE whose event (by the
// kEvents chunks) records PERF_SAMPLE_REGS_USER with the x86 registers BP,
// SP and IP, those three hold: IP minus the sample's user pc (the chain's
// first entry after PERF_CONTEXT_USER, else its ip), BP minus SP, and SP
// minus the SP of the previous such sample of the same tid in the chunk
// (minus 0 for its first), modulo 2^64 (user_reg_deltas.h says why).
// Readers undo them in that order of samples. Set only on compressed chunks.
inline constexpr uint32_t kChunkFlagUserRegDeltas = 1u << 1;
// kChunkFlagSampleColumns: the samples' time, ip and user registers are
// zeros in the records, and their values, rewritten, follow the records in
// columns (the layout and the rewriting: sample_columns.h). Writers since
// 2026-11-26 set it on every compressed records chunk once they know the
// events, instead of the two flags above; it never goes with them.
inline constexpr uint32_t kChunkFlagSampleColumns = 1u << 2;
// kChunkFlagSplitTimeColumn, with kChunkFlagSampleColumns: the time column
// holds the low byte of each value apart from the rest (sample_columns.h).
// Writers since 2026-11-27 set it with the columns, and compress the
// records, the time column's two parts and the other columns as zstd
// frames of their own, one after the other in the payload (zstd reads
// them as one: a zstd payload is one or more frames, whose contents
// together are the payload). A clock's jitter, apart, compresses near its
// entropy: 8-9% smaller records (bench/RESULTS.md, "Split time column").
inline constexpr uint32_t kChunkFlagSplitTimeColumn = 1u << 3;
// kChunkFlagRecentStackPointers, with kChunkFlagSampleColumns: the SP
// column gives each SP as its place among the tid's recent ones, or as a
// difference (sample_columns.h). Writers since 2026-11-27 set it with the
// columns: a recursion's stack depths, sampled over and over, cost 5-6%
// of qsort's -g records as differences (bench/RESULTS.md).
inline constexpr uint32_t kChunkFlagRecentStackPointers = 1u << 4;
// A chunk with a bit outside these is from a newer writer: readers skip it.
inline constexpr uint32_t kChunkKnownFlags = kChunkFlagSampleTimeDeltas | kChunkFlagUserRegDeltas |
                                             kChunkFlagSampleColumns | kChunkFlagSplitTimeColumn |
                                             kChunkFlagRecentStackPointers | kChunkTimeOffsetMask;
constexpr uint32_t ChunkTimeOffset(uint32_t flags) {
  return (flags & kChunkTimeOffsetMask) >> kChunkTimeOffsetShift;
}

#pragma pack(push, 1)

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;        // sizeof(FileHeader)
  uint32_t chunk_header_size;  // sizeof(ChunkHeader)
  uint32_t flags;              // none defined yet
  uint64_t created_realtime_ns;
  uint64_t max_chunk_raw_size;  // largest raw_size of any chunk; 0: not said
  uint8_t reserved[24];
};
static_assert(sizeof(FileHeader) == 64);

struct ChunkHeader {
  uint32_t magic;
  uint16_t type;         // ChunkType
  uint16_t compression;  // Compression
  uint64_t stored_size;  // payload bytes in the file after this header
  uint64_t raw_size;     // payload bytes after decompression
  uint64_t record_count;
  uint64_t time_min;  // perf clock, ns; 0 when the chunk has no times
  uint64_t time_max;
  uint32_t crc32;
  uint32_t flags;  // kChunkFlag* bits; 0 in files of recorders before them
};
static_assert(sizeof(ChunkHeader) == 56);

struct EventEntryHeader {
  uint32_t attr_size;  // bytes of perf_event_attr as the recorder knew it
  uint32_t name_size;
  uint32_t id_count;
  uint32_t reserved;
};
static_assert(sizeof(EventEntryHeader) == 16);

struct TrailerHeader {
  uint64_t chunk_count;  // chunks before the trailer
  uint64_t record_count;
  uint64_t sample_count;
  uint64_t lost_samples;  // sum of PERF_RECORD_LOST and LOST_SAMPLES counts
  uint64_t start_clock_ns;
  uint64_t end_clock_ns;
  uint64_t bytes_raw;  // kernel record bytes before compression
  uint32_t cpu_count;
  uint32_t reserved;
};
static_assert(sizeof(TrailerHeader) == 64);

struct TrailerCpu {
  uint64_t samples;
  uint64_t lost_samples;     // from PERF_RECORD_LOST
  uint64_t lost_records;     // number of PERF_RECORD_LOST records
  uint64_t dropped_samples;  // from PERF_RECORD_LOST_SAMPLES
  uint64_t throttles;
};
static_assert(sizeof(TrailerCpu) == 40);

struct TraceFormatEntryHeader {
  uint32_t event_index;  // in the kEvents chunk
  uint32_t format_size;  // bytes of format text that follow
  uint32_t filter_size;  // bytes of filter text after the format's padding
  uint32_t reserved;
  uint64_t tracepoint_id;  // the event's attr.config when recorded
};
static_assert(sizeof(TraceFormatEntryHeader) == 24);

// CountsHeader.source.
inline constexpr uint32_t kCountsFromCounting = 1;
inline constexpr uint32_t kCountsFromSampling = 2;

struct CountsHeader {
  uint32_t source;       // kCountsFrom*
  uint32_t entry_count;  // CountEntryHeader entries that follow
  uint64_t elapsed_ns;   // wall time the counts cover
};
static_assert(sizeof(CountsHeader) == 16);

// CountEntryHeader.flags.
inline constexpr uint32_t kCountNotSupported = 1u << 0;  // the event did not open here

// An event's totals, summed over every fd it was opened on.
struct CountEntryHeader {
  uint32_t attr_size;
  uint32_t name_size;
  uint32_t flags;           // kCount* bits
  uint32_t interval_count;  // CountInterval entries after the name
  uint64_t count;           // raw, not scaled
  uint64_t time_enabled;    // ns, PERF_FORMAT_TOTAL_TIME_ENABLED
  uint64_t time_running;    // ns, PERF_FORMAT_TOTAL_TIME_RUNNING
};
static_assert(sizeof(CountEntryHeader) == 40);

// The totals at the end of one -I interval (cumulative since the start;
// an interval's own counts are the difference from the one before).
struct CountInterval {
  uint64_t time_ns;  // since the counting started
  uint64_t count;
  uint64_t time_enabled;
  uint64_t time_running;
};
static_assert(sizeof(CountInterval) == 32);

// ToggleEntry.action and .scope.
inline constexpr uint8_t kToggleOff = 0;
inline constexpr uint8_t kToggleOn = 1;
inline constexpr uint8_t kToggleThread = 0;  // the thread the trigger fired in
inline constexpr uint8_t kToggleCpu = 1;     // the CPU it fired on

struct ToggleEntry {
  uint32_t trigger;          // event index (kEvents order) of the switching event
  uint32_t target;           // event index of the switched event
  uint8_t action;            // kToggleOn, kToggleOff
  uint8_t scope;             // kToggleThread, kToggleCpu
  uint8_t target_starts_on;  // 1: the target's windows are open at the start
  uint8_t reserved[5];
};
static_assert(sizeof(ToggleEntry) == 16);
// ControlEntry.action.
inline constexpr uint32_t kControlEnable = 1;
inline constexpr uint32_t kControlDisable = 2;
// ControlEntry.event: every sampling event (not the sideband's dummy).
inline constexpr uint32_t kControlAllEvents = 0xffffffff;

struct ControlEntry {
  uint64_t time_ns;  // the events' clock (CLOCK_MONOTONIC)
  uint32_t action;   // kControl*
  uint32_t event;    // index in kEvents order, or kControlAllEvents
};
static_assert(sizeof(ControlEntry) == 16);

#pragma pack(pop)

}  // namespace sample::format
