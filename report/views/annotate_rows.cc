#include "report/views/annotate_rows.h"

#include <algorithm>
#include <deque>
#include <string>

#include <fmt/format.h>

#include "libsample/symbols/function_names.h"

namespace sample::report {
namespace {

constexpr size_t kLongestInstruction = 15;  // x86's limit, prefixes included

// Objdump's layout: the mnemonic in 6 columns, then the operands; a direct
// branch's target named; bytes nothing decodes as "(bad)" and their hex.
std::string InstructionText(const Instruction& in, std::span<const std::byte> bytes,
                            CodeSource& source) {
  if (in.bad) {
    std::string text = in.mnemonic + " ";
    for (std::byte b : bytes) text += fmt::format(" {:02x}", static_cast<unsigned>(b));
    return text;
  }
  std::string text =
      in.operands.empty() ? in.mnemonic : fmt::format("{:<6} {}", in.mnemonic, in.operands);
  if (in.target) {
    const std::string name = source.NameOf(*in.target);
    if (!name.empty()) text += fmt::format(" <{}>", name);
  }
  return text;
}

// Makes an instruction a row: its bytes, text, samples and frames.
class RowMaker {
 public:
  RowMaker(const FunctionCode& code, const IndexedFunction& hits, CodeSource& source)
      : code_(code), hits_(hits), source_(source) {}

  // The samples at the instruction's first byte, or nullptr.
  const OffsetHits* HitsAt(uint64_t address) const {
    const uint64_t offset = address + code_.file_offset_delta;
    const auto it = std::ranges::lower_bound(hits_.by_offset, offset, {}, &OffsetHits::offset);
    return it != hits_.by_offset.end() && it->offset == offset ? &*it : nullptr;
  }

  AnnotatedInstruction Make(const Instruction& in) {
    AnnotatedInstruction row;
    row.address = in.address;
    const uint64_t from = in.address - code_.start;
    row.bytes.assign(code_.bytes.begin() + static_cast<std::ptrdiff_t>(from),
                     code_.bytes.begin() + static_cast<std::ptrdiff_t>(from + in.size));
    row.text = InstructionText(in, row.bytes, source_);
    if (const OffsetHits* hits = HitsAt(in.address)) {
      row.samples = hits->samples;
      row.period = hits->period;
    }
    const std::vector<AddressFrame> frames = source_.FramesAt(in.address);
    if (!frames.empty()) {
      row.file = frames.front().file;
      row.line = frames.front().line;
    }
    for (const AddressFrame& frame : frames) {
      if (frame.inlined) row.inlined.push_back(WithoutParameters(frame.name));
    }
    return row;
  }

 private:
  const FunctionCode& code_;
  const IndexedFunction& hits_;
  CodeSource& source_;
};

// The rows of a cut function, as its instructions come: a sampled one and
// the `near` on each side of it are kept; the instructions before a
// sampled one wait (decoded, not yet made rows) until it is known whether
// one comes within `near`, so that a left-out instruction costs no row.
class CutRows {
 public:
  CutRows(FunctionRows& out, RowMaker& maker, size_t near)
      : out_(out), maker_(maker), near_(near) {}

  void Add(const Instruction& in) {
    if (maker_.HitsAt(in.address) != nullptr) {
      EndGap();
      for (const Instruction& waiting : before_) Keep(waiting);
      before_.clear();
      Keep(in);
      after_ = near_;
    } else if (after_ > 0) {
      Keep(in);
      --after_;
    } else {
      before_.push_back(in);
      if (before_.size() > near_) {
        LeaveOut(before_.front());
        before_.pop_front();
      }
    }
  }

  void Finish() {
    for (const Instruction& waiting : before_) LeaveOut(waiting);
    before_.clear();
    EndGap();
  }

 private:
  void Keep(const Instruction& in) { out_.rows.push_back(maker_.Make(in)); }

  void LeaveOut(const Instruction& in) {
    if (gap_.left_out == 0) gap_.address = in.address;
    ++gap_.left_out;
    out_.cut = true;
  }

  void EndGap() {
    if (gap_.left_out == 0) return;
    out_.rows.push_back(std::move(gap_));
    gap_ = AnnotatedInstruction();
  }

  FunctionRows& out_;
  RowMaker& maker_;
  const size_t near_;
  std::deque<Instruction> before_;
  size_t after_ = 0;
  AnnotatedInstruction gap_;  // the run being left out (left_out 0: none)
};

}  // namespace

void DecodeInPieces(const Disassembler& disassembler, std::span<const std::byte> code,
                    uint64_t address, const std::function<bool(const Instruction&)>& each,
                    size_t piece_bytes) {
  // A piece longer than any instruction: every piece decodes one at least.
  piece_bytes = std::max(piece_bytes, kLongestInstruction + 1);
  size_t from = 0;
  while (from < code.size()) {
    const size_t to = std::min(code.size(), from + piece_bytes);
    const bool last = to == code.size();
    size_t next = to;
    for (const Instruction& in :
         disassembler.Decode(code.subspan(from, to - from), address + from)) {
      const size_t at = in.address - address;
      // Its bytes may run past the piece: decoded again with the next one.
      if (!last && at + kLongestInstruction > to) {
        next = at;
        break;
      }
      if (!each(in)) return;
    }
    from = next;
  }
}

FunctionRows AnnotateRows(const Disassembler& disassembler, const FunctionCode& code,
                          const IndexedFunction& hits, CodeSource& source, size_t whole,
                          size_t near) {
  RowMaker maker(code, hits, source);
  FunctionRows out;
  // Whole, unless there are more instructions than that: then decoded
  // again from the start, cut. Code of more than `whole` longest
  // instructions' bytes is cut without trying.
  bool over = code.bytes.size() / kLongestInstruction > whole;
  if (!over) {
    DecodeInPieces(disassembler, code.bytes, code.start, [&](const Instruction& in) {
      if (out.rows.size() == whole) {
        over = true;
        return false;
      }
      out.rows.push_back(maker.Make(in));
      return true;
    });
  }
  if (over) {
    out.rows.clear();
    out.rows.shrink_to_fit();
    CutRows cut(out, maker, near);
    DecodeInPieces(disassembler, code.bytes, code.start, [&](const Instruction& in) {
      ++out.instructions;
      cut.Add(in);
      return true;
    });
    cut.Finish();
  } else {
    out.instructions = out.rows.size();
  }
  for (const AnnotatedInstruction& row : out.rows) out.placed += row.samples;
  return out;
}

}  // namespace sample::report
