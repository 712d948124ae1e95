// libFuzzer target for what a worker sends the coordinator
// (kiln.v1.WorkerMessage on WorkerService.Work): no byte string may crash
// the Protobuf parse or the coordinator's checks of a hello (targets,
// fingerprint, slots) or a result (status, times); each is accepted or
// refused with std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <google/protobuf/stubs/logging.h>

#include "kiln/v1/farm.pb.h"
#include "rpc/farm/worker_service.h"
#include "rpc/proto_convert.h"

// Protobuf logs every string field with invalid UTF-8 it refuses; the
// refusal is the answer, the log only noise.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::v1::WorkerMessage m;
  if (!m.ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    if (m.has_hello()) {
      kiln::v1::WorkerInfo info = m.hello();
      kiln::rpc::farm::ValidateWorkerInfo(&info);
    } else if (m.has_result()) {
      kiln::search::MeasureResult r = kiln::rpc::FromProto(m.result().result());
      // What is accepted converts back to the same values.
      kiln::search::MeasureResult again = kiln::rpc::FromProto(kiln::rpc::ToProto(r));
      if (again.run_secs != r.run_secs || again.status != r.status) __builtin_trap();
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
