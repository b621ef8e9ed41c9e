// kChunkFlagSampleColumns (sample_file_format.h): the fields of a records
// chunk's samples that change with every sample, moved out of the records
// into columns of small numbers, and back.
//
// zstd finds repeats; it does poorly on 8-byte fields whose low bytes are
// noise, and worse when they sit between fields that repeat. A sample's
// time, its ip and its user registers are such fields. Rewritten as
// differences from what the record already says (or the previous sample
// said) and stored as zigzag LEB128 varints, one column per field, after
// the records (whose copies of those fields become zeros), a -g recording's
// records chunks shrink by 18-24% (bench/RESULTS.md, "Sample columns").
//
// The values, for each PERF_RECORD_SAMPLE the event table parses, in the
// records' order:
//   - time: the time minus the previous sample's in the chunk (0 before the
//     first), minus the sample's period when the event counts nanoseconds
//     (cpu-clock, task-clock: the period is the time since its last sample);
//   - ip: the ip minus the chain's first address (the entry after its first
//     PERF_CONTEXT_* marker), or the ip itself without one;
//   - each user register, by its bit in sample_regs_user; for the x86 ones
//     BP, SP and IP when all three are there: IP minus the user pc (the
//     chain's first entry after PERF_CONTEXT_USER, else the ip), BP minus
//     SP, SP minus the previous SP of the same tid in the chunk.
// Arithmetic is modulo 2^64. Everything the decoder reads to find a field
// (the header, the event id, the period, the chain, the register ABI) stays
// in the records, so both directions see the same samples.
//
// Layout of the payload: the records, then column 0's bytes, column 1's,
// ..., then kSampleColumnCount little-endian uint32 column sizes.
// Column 0 is time, 1 ip, 2 + n user register n.
//
// Split time (kChunkFlagSplitTimeColumn): column 0 is empty when no
// sample has a time, else a varint n (its values), then n bytes, the low 8 bits of each zigzag
// value, then n varints, each zigzag value shifted right by 8. The low bits of a clock's jitter are
// noise, the high ones mostly the same few values; stored apart (and compressed apart:
// SampleColumnParts) each costs about its entropy, where the mixed varints cost 2-3 bits a sample
// more.
//
// Recent stack pointers (kChunkFlagRecentStackPointers), with the
// BP/SP/IP deltas: the SP column holds, for each sample, an unsigned
// varint k: k > 0 when SP is the k-th of the up to kRecentStackPointers
// distinct SPs of the same tid in the chunk, most recent first; 0 when it
// is none of them, followed by a signed varint: SP minus the most recent
// (0 when there is none). Either way SP then becomes the most recent. A
// recursion or a loop that calls a few functions samples a few stack
// depths over and over, whose differences cost a byte or two each time
// (qsort's: 0.85 bytes a sample, against 0.6 as indexes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "libsample/perf/event_table.h"
#include "libsample/result.h"

namespace sample::format {

inline constexpr size_t kSampleColumnCount = 2 + 64;
inline constexpr size_t kSampleColumnFooterSize = kSampleColumnCount * sizeof(uint32_t);

// Where an encoded payload's parts begin, for a writer that compresses
// them apart: the records at 0, then the time column's count and low
// bytes, its high varints, and the other columns with the sizes.
struct SampleColumnParts {
  size_t time_low = 0;
  size_t time_high = 0;
  size_t rest = 0;
};

inline constexpr size_t kRecentStackPointers = 32;

// How the columns are coded, as the chunk's flags say.
struct ColumnCoding {
  bool split_time = false;  // kChunkFlagSplitTimeColumn
  bool recent_sp = false;   // kChunkFlagRecentStackPointers
};

// Rewrites `payload` (records) into the layout above: fields zeroed,
// columns and sizes appended, coded as `coding` says. nullopt, with
// `payload` as it was, when no sample had a field to move.
std::optional<SampleColumnParts> EncodeSampleColumns(std::vector<std::byte>& payload,
                                                     const EventTable& events,
                                                     ColumnCoding coding = {});

// Puts the fields back from the columns of `payload` (as encoded with
// `coding`) and returns the size of the records, which start the payload.
// A footer, column size or column that does not fit the samples is an
// error naming its byte in the payload.
Result<size_t> DecodeSampleColumns(std::span<std::byte> payload, const EventTable& events,
                                   ColumnCoding coding = {});

}  // namespace sample::format
