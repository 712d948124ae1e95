// libFuzzer target for the coordinator's auth file (rpc/farm/auth_file.h)
// and the worker's --simulate model (rpc/farm/simulated_timing.h): no text
// may crash either parser; each is accepted or refused with its error type,
// and an accepted auth file finds each principal by the token on its line.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "rpc/farm/auth_file.h"
#include "rpc/farm/simulated_timing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const kiln::rpc::farm::AuthTable t = kiln::rpc::farm::AuthTable::Parse(text, "fuzz");
    for (const auto& p : t.principals()) {
      if (!t.FindDigest(p.digest) || t.FindDigest(p.digest)->name != p.name) __builtin_trap();
    }
  } catch (const kiln::rpc::farm::AuthFileError&) {
  }
  try {
    const double s = kiln::rpc::farm::SimulatedTiming::Parse(text).Sample(text);
    if (!(s > 0) || s > 3600) __builtin_trap();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
