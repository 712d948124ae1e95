// libFuzzer target for trace JSON: any byte string either fails with a
// TraceError / ScheduleError or replays; it never crashes. A trace that
// replays must serialize to JSON that parses and replays to the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln::ir;
  static const PrimFunc kWorkload = BatchMatmulNKKM(1, 16, 16, 16);
  const std::string text(reinterpret_cast<const char*>(data), size);
  Trace trace;
  try {
    trace = Trace::FromJSONString(text);
  } catch (const TraceError&) {
    return 0;
  }
  Schedule sch(kWorkload, /*seed=*/1);
  try {
    trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
  } catch (const TraceError&) {
    return 0;
  } catch (const ScheduleError&) {
    return 0;
  }
  // Replayed: the recorded trace must itself round-trip and replay.
  const std::string again = sch.trace().AsJSONString();
  Schedule second(kWorkload, /*seed=*/1);
  Trace::FromJSONString(again).ApplyToSchedule(&second, false);
  if (second.trace().AsJSONString() != again) std::abort();
  return 0;
}
