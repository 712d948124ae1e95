// libFuzzer target for the jobs the coordinator accepts
// (kiln.v1.SubmitRequest on JobService.Submit): the Protobuf parse and every
// check the coordinator makes before storing a job (job_file.h rules,
// workload text parsed and hashed, target) must refuse bad input with
// std::invalid_argument, never crash. The first byte picks the form: 0 reads
// the rest as the wire message, 1 and 2 as a job file in text format / JSON.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "kiln/v1/farm.pb.h"
#include "rpc/farm/job_file.h"
#include "rpc/farm/job_service.h"

// Protobuf logs every string field with invalid UTF-8 it refuses; the
// refusal is the answer, the log only noise.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  kiln::v1::TuningJob job;
  if (data[0] == 1 || data[0] == 2) {
    try {
      job = kiln::rpc::farm::ParseJobText(
          rest, data[0] == 1 ? kiln::rpc::farm::JobFileFormat::kText : kiln::rpc::farm::JobFileFormat::kJson,
          "fuzz");
    } catch (const kiln::rpc::farm::JobFileError&) {
      return 0;
    }
  } else {
    kiln::v1::SubmitRequest req;
    if (!req.ParseFromArray(rest.data(), static_cast<int>(rest.size()))) return 0;
    job = req.job();
  }
  try {
    kiln::rpc::farm::ValidateSubmittedJob(&job);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
