// `kiln worker --simulate MODEL`: synthetic measurements for scale tests of
// the farm (bench/farm_bench.cc). A simulated slot builds nothing and runs
// nothing: it sleeps for a duration drawn from MODEL and reports that
// duration as the candidate's run time. The draw is a pure function of the
// candidate's trace, so a candidate measured twice reports the same time.
//
// MODEL:
//   fixed:D              every measurement takes D
//   lognormal:D,SIGMA    log-normal with median D and shape SIGMA (0 to 5)
// D is a number with a unit: ns, us, ms or s ("50ms", "0.05s").
#pragma once

#include <string>
#include <string_view>

namespace kiln::rpc::farm {

class SimulatedTiming {
 public:
  // Throws std::invalid_argument naming what is wrong with MODEL.
  static SimulatedTiming Parse(const std::string& model);
  // Seconds for the candidate with this trace.
  double Sample(std::string_view trace_json) const;
  const std::string& model() const { return model_; }

 private:
  std::string model_;
  double median_seconds_ = 0;
  double sigma_ = 0;
};

// "50ms" -> 0.05; throws std::invalid_argument.
double ParseDuration(const std::string& text);

}  // namespace kiln::rpc::farm
