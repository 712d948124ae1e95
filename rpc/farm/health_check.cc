#include "rpc/farm/health_check.h"

#include <grpcpp/generic/generic_stub.h>

#include <vector>

namespace kiln::rpc::farm {
namespace {

std::string EncodeRequest(const std::string& service) {
  if (service.empty()) return "";
  std::string out;
  out += static_cast<char>(0x0a);  // field 1, length-delimited
  size_t n = service.size();
  while (n >= 0x80) {
    out += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  out += static_cast<char>(n);
  return out + service;
}

// Field 1 (varint) of the response; other fields are skipped.
int DecodeStatus(const std::string& bytes) {
  size_t i = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; i < bytes.size() && shift < 64; shift += 7) {
      const auto b = static_cast<uint8_t>(bytes[i++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  };
  int status = 0;
  while (i < bytes.size()) {
    uint64_t key = 0, v = 0;
    if (!varint(&key)) return -1;
    const int wire = static_cast<int>(key & 7);
    if (wire == 0) {
      if (!varint(&v)) return -1;
      if ((key >> 3) == 1) status = static_cast<int>(v);
    } else if (wire == 2) {
      if (!varint(&v) || v > bytes.size() - i) return -1;
      i += static_cast<size_t>(v);
    } else {
      return -1;
    }
  }
  return status;
}

}  // namespace

HealthAnswer CheckHealth(const FarmClientOptions& client, const std::string& service) {
  HealthAnswer out;
  auto channel = DialFarm(client);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  PrepareCall(client, &context, /*deadline=*/true);
  const std::string req = EncodeRequest(service);
  grpc::Slice slice(req);
  grpc::ByteBuffer request(&slice, 1);
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  call->Finish(&response, &out.status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  if (!out.status.ok()) return out;
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  switch (DecodeStatus(bytes)) {
    case 0: out.serving = "UNKNOWN"; break;
    case 1: out.serving = "SERVING"; break;
    case 2: out.serving = "NOT_SERVING"; break;
    case 3: out.serving = "SERVICE_UNKNOWN"; break;
    default: out.serving = "MALFORMED"; break;
  }
  return out;
}

}  // namespace kiln::rpc::farm
