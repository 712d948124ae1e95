// Job files for `kiln submit --job FILE`: a kiln.v1.TuningJob
// (proto/kiln/v1/job.proto) in Protobuf text format (.textproto, .txtpb,
// .pbtxt) or its JSON mapping (.json). Protobuf does the parsing, so a field
// that does not exist or a value of the wrong type is refused; the error
// names the file, the line and the field.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "kiln/v1/job.pb.h"

namespace kiln::rpc::farm {

class JobFileError : public std::runtime_error {
 public:
  explicit JobFileError(const std::string& msg) : std::runtime_error(msg) {}
};

enum class JobFileFormat { kText, kJson };

// Reads and parses a job file, picking the format by extension (.json is
// JSON; anything else is text format), and checks its shape. Throws
// JobFileError.
v1::TuningJob ParseJobFile(const std::string& path);
// `name` is what errors call the input ("job.json").
v1::TuningJob ParseJobText(std::string_view text, JobFileFormat format, const std::string& name);

// Checks what Protobuf cannot and any runner of a job needs: at least one
// workload, weights >= 0 and not all zero, trials (0 = unset) enough for
// every workload, a plausible timing. ParseJobText applies it. Throws
// JobFileError naming the field ("workloads[0].weight: -1; must be >= 0").
void ValidateJobShape(const v1::TuningJob& job);

// What the farm needs on top (job_service.cc): trials set, a target, and
// a strategy it runs ('replay'). `kiln tune --job` runs locally, where the
// command line may give the target and the trials and both strategies run,
// so it checks the shape only.
void ValidateJob(const v1::TuningJob& job);

}  // namespace kiln::rpc::farm
