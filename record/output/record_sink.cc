#include "record/output/record_sink.h"

#include "record/output/file_sink.h"
#include "record/output/flight_sink.h"
#include "record/output/rotating_sink.h"
#include "record/recorder.h"

namespace sample::record {

std::unique_ptr<RecordSink> MakeRecordSink(const RecordOptions& options) {
  if (options.flight_seconds > 0) {
    return std::make_unique<FlightSink>(options, options.flight_seconds, std::nullopt);
  }
  if (options.switch_output.kind != SwitchPolicy::Kind::kNone) {
    return std::make_unique<RotatingSink>(options);
  }
  return std::make_unique<FileSink>(options);
}

}  // namespace sample::record
