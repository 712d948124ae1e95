#include "tools/workload_spec.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <filesystem>

#include "ir/text/parser.h"
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

namespace {

// "C2D(1, 56, 56, 64, 256, 1, 1, 0)": a suite family at its own shapes.
ResolvedWorkload ResolveParameterized(const std::string& spec, size_t open) {
  const std::string name = spec.substr(0, open);
  auto fail = [&](const std::string& why) -> ResolvedWorkload {
    throw std::runtime_error("workload spec '" + spec + "': " + why);
  };
  if (name.empty()) fail("a family name must come before '('");
  if (spec.back() != ')') fail("expected ')' at the end");
  std::vector<int64_t> params;
  std::stringstream in(spec.substr(open + 1, spec.size() - open - 2));
  for (std::string item; std::getline(in, item, ',');) {
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b == std::string::npos) fail("empty parameter " + std::to_string(params.size() + 1));
    item = item.substr(b, e - b + 1);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size()) fail("parameter " + std::to_string(params.size() + 1) + " '" + item + "' is not an integer");
    params.push_back(v);
  }
  std::string label = name + "(";
  for (size_t i = 0; i < params.size(); ++i) label += (i ? "," : "") + std::to_string(params[i]);
  label += ")";
  try {
    return {ir::MakeWorkloadWithParams(name, params), label};
  } catch (const std::invalid_argument& e) {
    return fail(e.what());
  }
}

}  // namespace

ResolvedWorkload ResolveWorkload(const std::string& spec) {
  if (spec == "-" || std::filesystem::exists(spec) || spec.find('/') != std::string::npos ||
      spec.ends_with(".py") || spec.ends_with(".tir")) {
    std::string text = ReadTextFile(spec);
    return {ir::ParseFunc(text, spec == "-" ? "<stdin>" : spec), spec};
  }
  if (auto open = spec.find('('); open != std::string::npos) return ResolveParameterized(spec, open);
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
