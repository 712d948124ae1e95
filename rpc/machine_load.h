// How busy the rest of the machine was while a candidate ran: the CPU time of
// every process but the measured child, as a share of all CPU time, from
// /proc/stat and /proc/<pid>/stat (Linux; elsewhere the load is unknown).
// A kernel timed while a compiler runs on the same cores is slower than it
// is, and the record should say so (search::MeasureResult::machine_load).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace kiln::rpc {

struct CpuSample {
  uint64_t busy = 0;   // ticks spent not idle, all CPUs
  uint64_t total = 0;  // all ticks, all CPUs
  uint64_t child = 0;  // ticks of the measured process (user + system, all its threads)
  pid_t pid = -1;      // the measured process
};

// Reads the machine's counters and those of process `pid`; nullopt when
// /proc cannot be read (not Linux, or the process is gone).
std::optional<CpuSample> SampleCpu(pid_t pid);

// The share (0..1) of CPU time others used between two samples of the same
// process; -1 when it cannot be told (no sample, samples of two processes,
// or no tick elapsed: the counters tick every 10 ms).
double OtherLoad(const std::optional<CpuSample>& before, const std::optional<CpuSample>& after);

}  // namespace kiln::rpc
