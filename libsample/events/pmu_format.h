// PMUs as sysfs describes them, and the `term=value` lists perf writes for
// them.
//
// Every PMU the kernel registers appears as
// /sys/bus/event_source/devices/NAME with
//   type        the number for perf_event_attr.type
//   format/F    how term F maps onto attr bits: "config:0-7",
//               "config1:0-15,32-47" (one field, several ranges) or
//               "config:21" (one bit)
//   events/E    a named event, itself a term list: "event=0x3c,umask=0x00";
//               a term "umask=?" means the user has to supply that term
// Nothing here knows the `-e` grammar; libsample/events/event_spec.h uses it.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

// A number as perf writes one in terms and addresses: decimal or 0x hex.
Result<uint64_t> ParseTermNumber(std::string_view text);

// One `key` or `key=value` of a term list (a bare key means value "1" for
// format terms; `value` stays empty then).
struct PmuTerm {
  std::string key;
  std::optional<std::string> value;
};

// Splits "event=0x3c,umask=1,edge" at commas. Empty terms and empty keys are
// errors; whitespace is not trimmed, as in perf.
Result<std::vector<PmuTerm>> ParsePmuTerms(std::string_view text);

// PmuFormat: the bits one format file assigns to a term, e.g. "config1:0-15,
// 32-47". A value is spread over those bits from the lowest bit up (as perf
// does, whatever order the ranges are written in). Plain value; owns nothing.
class PmuFormat {
 public:
  enum class Field { kConfig, kConfig1, kConfig2 };

  // `name` is the term (the format file's name), used in messages; `text` is
  // the file's content (a trailing newline is fine).
  static Result<PmuFormat> Parse(std::string_view name, std::string_view text);

  // Writes `value` into its bits of attr->config/config1/config2, clearing
  // them first so that a later term overrides an earlier one. An error names
  // the term and the bits if the value needs more bits than there are.
  Result<void> Apply(uint64_t value, perf_event_attr* attr) const;

  const std::string& name() const { return name_; }
  Field field() const { return field_; }
  // The bits of the field this format covers.
  uint64_t mask() const { return mask_; }
  // Number of bits, i.e. the widest value is 2^width - 1.
  int width() const;
  // The format as sysfs spells it, normalised: "config1:0-15,32-47".
  std::string ToString() const;

 private:
  PmuFormat() = default;

  std::string name_;
  Field field_ = Field::kConfig;
  uint64_t mask_ = 0;
};

// Pmu: one PMU read from SYSFS_ROOT/bus/event_source/devices/NAME: its type,
// its formats and its named events (the term lists, unparsed until used).
// Read once in Load; a plain value afterwards.
class Pmu {
 public:
  // An error if the directory (sys_errno ENOENT) or its `type` file is
  // missing or malformed; the message names the path. A format file that
  // does not parse makes only that term unusable (see BrokenFormat).
  static Result<Pmu> Load(const std::string& sysfs_root, std::string_view name);
  // The PMU names in sysfs, sorted; empty if the directory is unreadable.
  static std::vector<std::string> List(const std::string& sysfs_root);

  const std::string& name() const { return name_; }
  uint32_t type() const { return type_; }
  const PmuFormat* FindFormat(std::string_view term) const;
  // Why format/TERM exists but cannot be used (e.g. a config3 field), or
  // nullptr.
  const std::string* BrokenFormat(std::string_view term) const;
  // The term list text of events/NAME, or nullptr.
  const std::string* FindEvent(std::string_view name) const;
  std::vector<std::string> FormatNames() const;
  std::vector<std::string> EventNames() const;

  // Replaces every term naming one of this PMU's events (a key without a
  // value) by that event's terms, in place. Returns the keys the events left
  // to the user ("umask=?"): the caller checks that a later term gives them.
  Result<std::vector<std::string>> ExpandEvents(std::vector<PmuTerm>* terms) const;

 private:
  Pmu() = default;

  std::string name_;
  uint32_t type_ = 0;
  std::map<std::string, PmuFormat, std::less<>> formats_;
  std::map<std::string, std::string, std::less<>> broken_formats_;  // term -> reason
  std::map<std::string, std::string, std::less<>> events_;
};

}  // namespace sample
