// How every farm client (kiln worker, submit, jobs, farm status, query
// --farm, farm_bench) dials the coordinator: TLS by default (the server's
// certificate checked against --ca, or the system's roots without it; a
// client certificate for mutual TLS with --cert/--key), plaintext only with
// --insecure; the principal's bearer token on every call; a deadline on
// every unary call and on the first message of every stream.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

namespace kiln::rpc::farm {

struct FarmClientOptions {
  std::string farm;  // HOST:PORT
  std::string ca_file, cert_file, key_file;
  bool insecure = false;
  std::string token;  // the bearer token; never printed
  double rpc_timeout_seconds = 30;
};

// The token of --token-file (its first line, trimmed), else $KILN_TOKEN,
// else empty. Throws std::runtime_error when the file cannot be read.
std::string ResolveToken(const std::string& token_file);

// Throws std::runtime_error for unreadable files or an incomplete key pair.
std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(const FarmClientOptions& o);
std::shared_ptr<grpc::Channel> DialFarm(const FarmClientOptions& o, grpc::ChannelArguments args = {});

// Adds the bearer token; with `deadline` (unary calls), the deadline too.
void PrepareCall(const FarmClientOptions& o, grpc::ClientContext* context, bool deadline);

// "farm HOST:PORT: MESSAGE (CODE_NAME)"; never quotes the token.
std::string DescribeFailure(const std::string& farm, const grpc::Status& s);
const char* StatusCodeName(grpc::StatusCode code);

std::string ReadFileOrThrow(const std::string& path, const std::string& what);

}  // namespace kiln::rpc::farm
