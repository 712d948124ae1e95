#include "rpc/farm/farm_client.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "rpc/farm/call_gate.h"

namespace kiln::rpc::farm {

std::string ReadFileOrThrow(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(what + " " + path + ": cannot read it");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string ResolveToken(const std::string& token_file) {
  std::string token;
  if (!token_file.empty()) {
    token = ReadFileOrThrow(token_file, "--token-file");
    token = token.substr(0, token.find('\n'));
  } else if (const char* env = std::getenv("KILN_TOKEN")) {
    token = env;
  }
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.erase(0, 1);
  return token;
}

std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(const FarmClientOptions& o) {
  if (o.insecure) {
    if (!o.ca_file.empty() || !o.cert_file.empty()) {
      throw std::runtime_error("--insecure with --ca or --cert: choose plaintext or TLS");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (o.cert_file.empty() != o.key_file.empty()) {
    throw std::runtime_error("--cert and --key go together (the client certificate and its key)");
  }
  grpc::SslCredentialsOptions ssl;
  if (!o.ca_file.empty()) ssl.pem_root_certs = ReadFileOrThrow(o.ca_file, "--ca");
  if (!o.cert_file.empty()) {
    ssl.pem_cert_chain = ReadFileOrThrow(o.cert_file, "--cert");
    ssl.pem_private_key = ReadFileOrThrow(o.key_file, "--key");
  }
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<grpc::Channel> DialFarm(const FarmClientOptions& o, grpc::ChannelArguments args) {
  args.SetMaxReceiveMessageSize(64 << 20);
  // A dead coordinator or a cut link is noticed by pings, not after hours.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  return grpc::CreateCustomChannel(o.farm, ClientCredentials(o), args);
}

void PrepareCall(const FarmClientOptions& o, grpc::ClientContext* context, bool deadline) {
  if (!o.token.empty()) context->AddMetadata(kAuthMetadataKey, "Bearer " + o.token);
  if (deadline) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(o.rpc_timeout_seconds * 1000)));
  }
}

const char* StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

std::string DescribeFailure(const std::string& farm, const grpc::Status& s) {
  return "farm " + farm + ": " + s.error_message() + " (" + StatusCodeName(s.error_code()) + ")";
}

}  // namespace kiln::rpc::farm
