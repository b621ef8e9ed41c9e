#include "report/script_stream.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "libsample/model/sample_filter.h"
#include "report/text/display_text.h"
#include "report/text/text_script.h"
#include "report/views/script_view.h"

namespace sample::report {
namespace {

// Text to a file descriptor through a buffer of kSize bytes. Owns the
// buffer, not the descriptor. The first failed write ends it: every later
// Write returns false and error() says why.
class BufferedFdWriter {
 public:
  static constexpr size_t kSize = size_t{64} << 10;

  explicit BufferedFdWriter(int fd) : fd_(fd) { buffer_.reserve(kSize); }

  bool Write(std::string_view text) {
    if (failed_) return false;
    if (buffer_.size() + text.size() > kSize && !Flush()) return false;
    if (text.size() >= kSize) return WriteAll(text);
    buffer_ += text;
    return true;
  }
  bool Flush() {
    if (failed_) return false;
    const bool written = WriteAll(buffer_);
    buffer_.clear();
    return written;
  }
  int error() const { return errno_; }

 private:
  bool WriteAll(std::string_view text) {
    while (!text.empty()) {
      const ssize_t n = write(fd_, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        errno_ = n < 0 ? errno : EIO;
        failed_ = true;
        return false;
      }
      text.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  int fd_;
  std::string buffer_;
  bool failed_ = false;
  int errno_ = 0;
};

// What the stream keeps alive until it has run: the recording, and the
// filter over its profile.
struct ScriptState {
  ScriptState(const ReportOptions& options, Recording loaded, std::string header)
      : recording(std::move(loaded)),
        filter(options.filters, recording.profile),
        max_stack(options.view.max_stack),
        head(std::move(header)) {}
  Recording recording;
  SampleFilter filter;
  size_t max_stack;
  std::string head;
};

}  // namespace

bool StreamsScript(const ReportOptions& options) {
  return options.script && !options.stats && !options.header_only && options.output.empty() &&
         options.format == OutputFormat::kText;
}

ReportOutput StreamedScript(const ReportOptions& options, Recording recording, std::string head) {
  ReportOutput output;
  output.warnings = WithoutRepeats(std::move(recording.warnings));
  recording.warnings.clear();
  auto state = std::make_shared<ScriptState>(options, std::move(recording), std::move(head));
  output.stream = [state](int fd) -> Result<void> {
    BufferedFdWriter out(fd);
    // Each piece is whole lines, so making each showable on its own
    // (display_text.h) gives what the whole text would.
    bool written = out.Write(ShowableText(state->head, true));
    if (written) {
      const ScriptView script = BuildScriptView(state->recording, state->filter, state->max_stack);
      written = WriteScriptText(
          script, [&](std::string_view text) { return out.Write(ShowableText(text, true)); });
    }
    if (written) written = out.Flush();
    if (!written) {
      return Fail(fmt::format("writing the script: {}", strerror(out.error())), out.error());
    }
    return {};
  };
  return output;
}

}  // namespace sample::report
