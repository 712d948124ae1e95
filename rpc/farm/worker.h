// The farm worker (`kiln worker --farm HOST:PORT`): dials the coordinator
// (so it needs no open port), registers its target, fingerprint and slots,
// and measures the leases it receives over one bidirectional stream with
// the isolated LocalRunner (rpc/local_runner.h): a candidate that crashes or
// hangs costs an error result, never the worker. Each slot is a thread with
// its own LocalRunner. While it holds leases it renews them by heartbeat.
// When the coordinator goes away it reconnects with exponential backoff; a
// refusal that retrying cannot fix (bad token, wrong role, a simulated
// worker on a coordinator without --allow-simulated) ends it with exit 1.
// With `simulate` it measures nothing (rpc/farm/simulated_timing.h) and
// says so in its hello.
#pragma once

#include <atomic>
#include <string>

#include "rpc/farm/farm_client.h"
#include "rpc/local_runner.h"

namespace kiln::rpc::farm {

struct WorkerOptions {
  FarmClientOptions client;  // the coordinator's HOST:PORT, TLS, token
  std::string target;       // normalized target this worker measures for
  std::string fingerprint;  // the machine (tools/target_spec.h MachineFingerprint)
  int slots = 1;
  std::string name;         // for people; default host:pid
  LocalRunnerOptions runner;
  std::string simulate;     // a SimulatedTiming model; empty: really measure
  double max_backoff_seconds = 10;
  const std::atomic<bool>* stop = nullptr;  // ends the worker (Ctrl-C)
};

// Runs until *stop is set; returns the process exit code.
int RunWorker(const WorkerOptions& options);

}  // namespace kiln::rpc::farm
