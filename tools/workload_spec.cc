#include "tools/workload_spec.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <filesystem>

#include "ir/parser.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/workloads/suite.h"

namespace kiln::tools {

std::string ReadTextFile(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read '" + path + "': " +
                             std::error_code(errno, std::generic_category()).message());
  }
  ss << in.rdbuf();
  return ss.str();
}

ResolvedWorkload ResolveWorkload(const std::string& spec) {
  if (spec == "-" || std::filesystem::exists(spec) || spec.find('/') != std::string::npos ||
      spec.ends_with(".py") || spec.ends_with(".tir")) {
    std::string text = ReadTextFile(spec);
    return {ir::ParseFunc(text, spec == "-" ? "<stdin>" : spec), spec};
  }
  std::string name = spec;
  int index = 0;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    name = spec.substr(0, colon);
    const std::string idx = spec.substr(colon + 1);
    size_t used = 0;
    try {
      index = std::stoi(idx, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != idx.size() || idx.empty()) {
      throw std::runtime_error("workload spec '" + spec + "': the part after ':' must be a config "
                               "index such as GMM:3");
    }
  }
  ir::PrimFunc f = ir::MakeWorkload(name, index);
  return {std::move(f), name + ":" + std::to_string(index)};
}

ir::PrimFunc ApplyTraceJson(const ir::PrimFunc& func, const std::string& trace_json) {
  ir::Trace trace = ir::Trace::FromJSONString(trace_json);
  ir::Schedule sch(func);
  trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
  return sch.func();
}

}  // namespace kiln::tools
