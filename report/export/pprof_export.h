// PprofExporter (--format pprof, -o x.pb.gz or x.pprof): the kept samples as
// pprof's profile.proto message (report/proto/profile.proto), gzip-compressed,
// as go tool pprof, Pyroscope, Parca and Grafana read it.
//
// Every event section gives two sample types: its sample count ("samples",
// unit "count"; "EVENT-samples" when there are several events) and its
// period (type: the event's name; unit "nanoseconds" for cpu-clock and
// task-clock, "count" otherwise). The first event's period is the default
// type and the period_type. Samples with the same stack (cut to
// --max-stack), command, pid and tid are one pprof sample with their
// values summed, labelled comm, pid and tid. A location is one address:
// its lines are the inlined calls there, innermost first, then the function
// they were inlined into. Mappings are rebuilt per binary and load address
// from the frames' file offsets, with the recorded build-ids; every mapping
// says has_functions, so pprof does not symbolize again.
#pragma once

#include "report/export/exporter.h"

namespace sample::report {

class PprofExporter final : public Exporter {
 public:
  Result<std::string> Export(const ExportInput& input) override;
};

}  // namespace sample::report
