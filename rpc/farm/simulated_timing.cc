#include "rpc/farm/simulated_timing.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>

namespace kiln::rpc::farm {

double ParseDuration(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("duration '" + text + "': expected a number with a unit (ns, us, ms, s)");
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit == "ns") scale = 1e-9;
  else if (unit == "us") scale = 1e-6;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "s") scale = 1;
  else throw std::invalid_argument("duration '" + text + "': the unit must be ns, us, ms or s");
  const double seconds = v * scale;
  if (!(seconds > 0) || seconds > 3600) {
    throw std::invalid_argument("duration '" + text + "': must be positive and at most an hour");
  }
  return seconds;
}

SimulatedTiming SimulatedTiming::Parse(const std::string& model) {
  SimulatedTiming t;
  t.model_ = model;
  const size_t colon = model.find(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("--simulate '" + model + "': expected fixed:D or lognormal:D,SIGMA");
  }
  const std::string kind = model.substr(0, colon);
  const std::string args = model.substr(colon + 1);
  if (kind == "fixed") {
    t.median_seconds_ = ParseDuration(args);
  } else if (kind == "lognormal") {
    const size_t comma = args.find(',');
    if (comma == std::string::npos) {
      throw std::invalid_argument("--simulate '" + model + "': lognormal needs D,SIGMA (e.g. lognormal:50ms,0.1)");
    }
    t.median_seconds_ = ParseDuration(args.substr(0, comma));
    size_t used = 0;
    try {
      t.sigma_ = std::stod(args.substr(comma + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != args.size() - comma - 1 || !(t.sigma_ >= 0) || t.sigma_ > 5) {
      throw std::invalid_argument("--simulate '" + model + "': SIGMA must be a number from 0 to 5");
    }
  } else {
    throw std::invalid_argument("--simulate '" + model + "': unknown model '" + kind + "' (fixed or lognormal)");
  }
  return t;
}

double SimulatedTiming::Sample(std::string_view trace_json) const {
  if (sigma_ == 0) return median_seconds_;
  // FNV-1a of the trace seeds the draw: the same candidate, the same time.
  uint64_t h = 1469598103934665603ULL;
  for (char c : trace_json) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  std::mt19937_64 rng(h);
  std::normal_distribution<double> normal(0.0, sigma_);
  return std::min(3600.0, median_seconds_ * std::exp(normal(rng)));
}

}  // namespace kiln::rpc::farm
