#include "tools/farm_client_flags.h"

#include <iostream>

#include "rpc/farm/coordinator.h"

namespace kiln::tools {

void AddFarmClientFlags(CLI::App* cmd, FarmClientFlags& f, bool farm_optional) {
  auto* farm = cmd->add_option("--farm", f.options.farm, "Coordinator HOST:PORT");
  if (!farm_optional) farm->required();
  cmd->add_option("--ca", f.options.ca_file, "CA certificate (PEM) the coordinator's certificate is checked "
                                             "against (default: the system's roots)");
  cmd->add_option("--cert", f.options.cert_file, "Client certificate (PEM), for a coordinator with --client-ca");
  cmd->add_option("--key", f.options.key_file, "The client certificate's private key (PEM)");
  cmd->add_flag("--insecure", f.options.insecure, "Plaintext gRPC (only for a coordinator run with --insecure)");
  cmd->add_option("--token-file", f.token_file, "File holding this principal's bearer token (default: $KILN_TOKEN)");
  cmd->add_option("--rpc-timeout", f.options.rpc_timeout_seconds,
                  "Deadline in seconds for each call and for a stream's first answer")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
}

rpc::farm::FarmClientOptions ResolveFarmClient(const FarmClientFlags& f) {
  rpc::farm::FarmClientOptions o = f.options;
  o.token = rpc::farm::ResolveToken(f.token_file);
  // On loopback, plaintext crosses no network (and a coordinator serves
  // plaintext elsewhere only with --insecure-any-address, which warns there).
  if (o.insecure && !rpc::farm::IsLoopbackAddress(o.farm)) {
    std::cerr << "kiln: warning: --insecure: plaintext connection to " << o.farm
              << " (the token and workloads are not encrypted)\n";
  }
  return o;
}

}  // namespace kiln::tools
