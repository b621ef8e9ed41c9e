#include "libsample/perf/chain_capture.h"

#include <charconv>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "libsample/comma_list.h"

namespace sample {
namespace {

constexpr std::string_view kExpected = "expected fp, fp,leaf[,SIZE], dwarf[,SIZE] or no";

constexpr uint64_t kChainCaptureSampleBits =
    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

}  // namespace

ChainCaptureOptions DefaultChainCapture(ChainCapture mode) {
  ChainCaptureOptions options;
  options.mode = mode;
  if (mode == ChainCapture::kDwarf) options.stack_size = kDefaultDwarfStackSize;
  return options;
}

ChainCaptureOptions DefaultCallGraph() {
  return ChainCaptureOptions{
      .mode = ChainCapture::kFramePointer, .leaf = true, .stack_size = kDefaultLeafStackSize};
}

Result<uint32_t> CheckStackSize(uint64_t bytes) {
  if (bytes == 0) return Fail("stack size 0: must be at least 1 byte");
  // Rounded first, as perf does: 65529..65535 round past the limit.
  const uint64_t rounded = bytes > kMaxStackSize ? bytes : (bytes + 7) / 8 * 8;
  if (rounded > kMaxStackSize) {
    return Fail(fmt::format(
        "stack size {}: at most {} bytes (the kernel's limit for a sample's stack copy)", bytes,
        kMaxStackSize));
  }
  return static_cast<uint32_t>(rounded);
}

Result<uint32_t> ParseStackSize(std::string_view text) {
  uint64_t bytes = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    return Fail(fmt::format("stack size '{}': not a number of bytes", text));
  }
  if (ec == std::errc::result_out_of_range) {
    return Fail(
        fmt::format("stack size {}: at most {} bytes (the kernel's limit for a sample's "
                    "stack copy)",
                    text, kMaxStackSize));
  }
  return CheckStackSize(bytes);
}

Result<ChainCaptureOptions> ParseChainCapture(std::string_view text) {
  const std::vector<std::string_view> parts = SplitCommaList(text);
  const std::string_view mode = parts[0];
  std::optional<std::string_view> size;
  ChainCaptureOptions options;
  if (mode == "no" && parts.size() == 1) return options;
  if (mode == "fp" && parts.size() == 1) return DefaultChainCapture(ChainCapture::kFramePointer);
  if (mode == "fp" && parts[1] == "leaf" && parts.size() <= 3) {
    options = DefaultCallGraph();
    if (parts.size() == 3) size = parts[2];
  } else if (mode == "dwarf" && parts.size() <= 2) {
    options = DefaultChainCapture(ChainCapture::kDwarf);
    if (parts.size() == 2) size = parts[1];
  } else if (mode == "lbr") {
    return Fail(fmt::format(
        "'{}': lbr (Intel's last branch records) is not supported; use fp or dwarf", text));
  } else {
    return Fail(fmt::format("'{}': {}", text, kExpected));
  }
  if (size) {
    auto bytes = ParseStackSize(*size);
    if (!bytes) return Fail(fmt::format("'{}': {}", text, bytes.error().message));
    options.stack_size = *bytes;
  }
  return options;
}

Result<void> ApplyChainCapture(const ChainCaptureOptions& options, Arch arch,
                               perf_event_attr* attr) {
  attr->sample_type &= ~kChainCaptureSampleBits;
  attr->sample_regs_user = 0;
  attr->sample_stack_user = 0;
  attr->exclude_callchain_user = 0;
  if (options.mode == ChainCapture::kNone) return {};
  attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
  if (options.mode == ChainCapture::kFramePointer && !options.leaf) return {};
  const bool dwarf = options.mode == ChainCapture::kDwarf;
  const uint64_t regs = dwarf ? UnwindRegsMask(arch) : LeafRegsMask(arch);
  if (regs == 0) {
    return Fail(fmt::format(
        "{} call graphs need this architecture's user registers, which sample does not know "
        "(it knows x86_64 and aarch64); use --call-graph fp",
        dwarf ? "dwarf" : "fp,leaf"));
  }
  TRY_ASSIGN(auto size, CheckStackSize(options.stack_size));
  attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr->sample_regs_user = regs;
  attr->sample_stack_user = size;
  // The kernel still walks its own frames; user frames are the reporter's
  // job, from the registers and the stack copy. A user chain walked by frame
  // pointers would be wrong without them, and costs bytes in every sample.
  attr->exclude_callchain_user = dwarf;
  return {};
}

ChainCaptureOptions ChainCaptureFromAttr(const perf_event_attr& attr) {
  ChainCaptureOptions options;
  if ((attr.sample_type & PERF_SAMPLE_CALLCHAIN) == 0) return options;
  options.mode = ChainCapture::kFramePointer;
  const uint64_t user_bits = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  if ((attr.sample_type & user_bits) != user_bits) return options;
  if (attr.exclude_callchain_user) {
    options.mode = ChainCapture::kDwarf;
  } else {
    options.leaf = true;
  }
  options.stack_size = attr.sample_stack_user;
  return options;
}

std::string_view ChainCaptureName(const ChainCaptureOptions& options) {
  switch (options.mode) {
    case ChainCapture::kNone:
      break;
    case ChainCapture::kFramePointer:
      return options.leaf ? "fp,leaf" : "fp";
    case ChainCapture::kDwarf:
      return "dwarf";
  }
  return "no";
}

std::string DescribeChainCapture(const ChainCaptureOptions& options) {
  if (options.stack_size == 0) return std::string(ChainCaptureName(options));
  return fmt::format("{} ({} bytes of user stack)", ChainCaptureName(options), options.stack_size);
}

}  // namespace sample
