// libFuzzer target for the coordinator's other requests: QueryRequest (its
// workload text is parsed, its target normalized), WatchRequest,
// CancelJobRequest, ListJobsRequest and FarmStatusRequest (ids and empty
// messages: only the parse). The first byte picks the message.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <google/protobuf/stubs/logging.h>

#include "kiln/v1/farm.pb.h"
#include "rpc/farm/farm_service.h"

// Protobuf logs every string field with invalid UTF-8 it refuses; the
// refusal is the answer, the log only noise.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t* rest = data + 1;
  const int n = static_cast<int>(size - 1);
  switch (data[0] % 5) {
    case 0: {
      kiln::v1::QueryRequest q;
      if (!q.ParseFromArray(rest, n)) return 0;
      try {
        kiln::rpc::farm::ParseQueryRequest(q);
      } catch (const std::invalid_argument&) {
      }
      return 0;
    }
    case 1: {
      kiln::v1::WatchRequest m;
      (void)m.ParseFromArray(rest, n);
      return 0;
    }
    case 2: {
      kiln::v1::CancelJobRequest m;
      (void)m.ParseFromArray(rest, n);
      return 0;
    }
    case 3: {
      kiln::v1::ListJobsRequest m;
      (void)m.ParseFromArray(rest, n);
      return 0;
    }
    default: {
      kiln::v1::FarmStatusRequest m;
      (void)m.ParseFromArray(rest, n);
      return 0;
    }
  }
}
