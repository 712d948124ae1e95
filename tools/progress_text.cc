#include "tools/progress_text.h"

#include <iomanip>
#include <sstream>

namespace kiln::tools {

std::string ErrorsText(const std::map<std::string, int64_t>& errors) {
  std::string s;
  for (const auto& [kind, n] : errors) s += (s.empty() ? "" : ", ") + kind + " " + std::to_string(n);
  return s.empty() ? "none" : s;
}

std::string LatencyText(double secs) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(secs < 1e-5 || (secs >= 1e-3 && secs < 1e-2) ? 2 : 1);
  if (secs < 1e-3) o << secs * 1e6 << " us";
  else if (secs < 1) o << secs * 1e3 << " ms";
  else o << std::setprecision(2) << secs << " s";
  return o.str();
}

std::string DurationText(double secs) {
  const auto s = static_cast<int64_t>(secs + 0.5);
  std::ostringstream o;
  if (s < 60) o << s << " s";
  else if (s < 3600) o << s / 60 << "m" << std::setw(2) << std::setfill('0') << s % 60 << "s";
  else o << s / 3600 << "h" << std::setw(2) << std::setfill('0') << s / 60 % 60 << "m";
  return o.str();
}

std::string ProgressText(const search::TuneProgress& p) {
  std::ostringstream line;
  line << "[" << p.trials_done << "/" << p.trials_target << " trials] ";
  if (p.best_gflops > 0) {
    line << "best " << std::fixed << std::setprecision(2) << p.best_gflops << " GFLOP/s, "
         << LatencyText(p.best_secs);
  } else {
    line << "no verified result yet";
  }
  line << "; errors: " << ErrorsText(p.errors_by_kind);
  if (p.eta_secs > 0) line << "; ETA " << DurationText(p.eta_secs);
  return line.str();
}

std::string BusyMachineWarning(int64_t busy, int64_t ok) {
  if (busy <= 0) return "";
  std::ostringstream o;
  o << "kiln: warning: the machine was busy during " << busy << " of " << ok
    << " measurement(s) (other processes used more than " << search::kBusyMachineLoad * 100
    << "% of the CPUs): timings may be slow; check them with `kiln db verify`\n";
  return o.str();
}

}  // namespace kiln::tools
