#include "rpc/machine_load.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace kiln::rpc {
namespace {

// The first line of /proc/stat: "cpu user nice system idle iowait irq softirq steal ...".
bool ReadMachine(CpuSample* s) {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      cpu != "cpu") {
    return false;
  }
  s->busy = user + nice + system + irq + softirq + steal;
  s->total = s->busy + idle + iowait;
  return true;
}

// Fields 14 and 15 of /proc/<pid>/stat (utime, stime), counted after the
// command name, which is in parentheses and may itself hold spaces.
bool ReadProcess(pid_t pid, uint64_t* ticks) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  // After ")": state is field 3, so utime (14) is the 12th token.
  for (int i = 3; i < 14; ++i) {
    if (!(rest >> field)) return false;
  }
  uint64_t utime = 0, stime = 0;
  if (!(rest >> utime >> stime)) return false;
  *ticks = utime + stime;
  return true;
}

}  // namespace

std::optional<CpuSample> SampleCpu(pid_t pid) {
  CpuSample s;
  s.pid = pid;
  if (!ReadMachine(&s) || !ReadProcess(pid, &s.child)) return std::nullopt;
  return s;
}

double OtherLoad(const std::optional<CpuSample>& before, const std::optional<CpuSample>& after) {
  if (!before || !after || before->pid != after->pid || after->total <= before->total) return -1;
  const double total = static_cast<double>(after->total - before->total);
  const double busy = static_cast<double>(after->busy - before->busy);
  const double child = static_cast<double>(after->child - before->child);
  return std::clamp((busy - child) / total, 0.0, 1.0);
}

}  // namespace kiln::rpc
