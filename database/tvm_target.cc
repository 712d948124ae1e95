#include "database/tvm_target.h"

#include <nlohmann/json.hpp>

namespace kiln::database {

using nlohmann::json;

namespace {

int IntOption(const json& config, const char* key) {
  if (!config.contains(key)) return 0;
  const json& v = config[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (1 << 30)) {
    throw ir::TargetError(std::string("TVM target option '") + key +
                          "' must be a non-negative integer");
  }
  return static_cast<int>(v.get<int64_t>());
}

std::string StringOption(const json& config, const char* key) {
  if (!config.contains(key)) return "";
  if (!config[key].is_string()) {
    throw ir::TargetError(std::string("TVM target option '") + key + "' must be a string");
  }
  return config[key].get<std::string>();
}

}  // namespace

ir::Target TargetFromTvm(const json& config) {
  if (!config.is_object()) throw ir::TargetError("a TVM target config is a JSON object");
  std::string kind = StringOption(config, "kind");
  std::string text;
  if (kind == "llvm") {
    text = "llvm";
    if (std::string mcpu = StringOption(config, "mcpu"); !mcpu.empty()) text += " -mcpu=" + mcpu;
    if (config.contains("mattr")) {
      const json& m = config["mattr"];
      if (!m.is_array()) throw ir::TargetError("TVM target option 'mattr' must be a list");
      std::string attrs;
      for (const json& a : m) {
        if (!a.is_string()) throw ir::TargetError("TVM target 'mattr' holds strings");
        attrs += (attrs.empty() ? "" : ",") + a.get<std::string>();
      }
      if (!attrs.empty()) text += " -mattr=" + attrs;
    }
    if (int n = IntOption(config, "num-cores"); n > 0) text += " -num-cores=" + std::to_string(n);
  } else if (kind == "cuda") {
    text = "cuda";
    if (std::string arch = StringOption(config, "arch"); !arch.empty()) text += " -arch=" + arch;
    if (int n = IntOption(config, "max_threads_per_block"); n > 0) {
      text += " -max_threads_per_block=" + std::to_string(n);
    }
    if (int n = IntOption(config, "max_shared_memory_per_block"); n > 0) {
      text += " -max_shared_memory_per_block=" + std::to_string(n);
    }
    if (int n = IntOption(config, "thread_warp_size"); n > 0) {
      text += " -thread_warp_size=" + std::to_string(n);
    }
  } else {
    throw ir::TargetError("TVM target kind '" + kind + "' has no Kiln equivalent (llvm, cuda)");
  }
  return ir::Target::Parse(text);
}

json TargetToTvm(const ir::Target& t) {
  json out = json::object();
  out["kind"] = t.KindName();
  if (t.kind == ir::Target::Kind::kLLVM) {
    if (!t.mcpu.empty()) out["mcpu"] = t.mcpu;
    if (!t.mtriple.empty()) out["mtriple"] = t.mtriple;
    if (!t.mattr.empty()) out["mattr"] = t.mattr;
    if (t.num_cores > 0) out["num-cores"] = t.num_cores;
  } else {
    if (!t.arch.empty()) out["arch"] = t.arch;
    if (t.max_threads_per_block > 0) out["max_threads_per_block"] = t.max_threads_per_block;
    if (t.max_shared_memory_per_block > 0) {
      out["max_shared_memory_per_block"] = t.max_shared_memory_per_block;
    }
    if (t.thread_warp_size > 0) out["thread_warp_size"] = t.thread_warp_size;
  }
  return out;
}

}  // namespace kiln::database
