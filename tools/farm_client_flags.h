// The flags every farm client command shares (kiln worker, submit, jobs,
// farm status, query --farm): where the coordinator is and how to reach it
// safely (rpc/farm/farm_client.h).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "rpc/farm/farm_client.h"

namespace kiln::tools {

struct FarmClientFlags {
  rpc::farm::FarmClientOptions options;
  std::string token_file;
};

// Adds --ca, --cert, --key, --insecure, --token-file and --rpc-timeout (and
// --farm, required unless `farm_optional`).
void AddFarmClientFlags(CLI::App* cmd, FarmClientFlags& f, bool farm_optional = false);
// The options with the token read (--token-file or KILN_TOKEN); warns on
// stderr about --insecure to a non-loopback address.
rpc::farm::FarmClientOptions ResolveFarmClient(const FarmClientFlags& f);

}  // namespace kiln::tools
