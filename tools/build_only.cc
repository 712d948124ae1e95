#include "tools/build_only.h"

#include <initializer_list>
#include <iostream>
#include <map>
#include <string_view>
#include <nlohmann/json.hpp>

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "codegen/llvm_backend.h"
#include "search/postproc.h"
#include "search/space_generator.h"
#include "search/tune_context.h"

namespace kiln::tools {

namespace {

// PTX instructions whose opcode starts with one of `prefixes`.
int64_t CountInstructions(const std::string& ptx, std::initializer_list<std::string_view> prefixes) {
  int64_t n = 0;
  size_t line = 0;
  while (line < ptx.size()) {
    size_t end = ptx.find('\n', line);
    if (end == std::string::npos) end = ptx.size();
    size_t p = ptx.find_first_not_of(" \t", line);
    if (p < end && ptx[p] == '@') {  // a guarded instruction ("@%p1 shfl...") counts too
      const size_t space = ptx.find_first_of(" \t", p);
      p = space < end ? ptx.find_first_not_of(" \t", space) : end;
    }
    for (std::string_view prefix : prefixes) {
      if (p < end && ptx.compare(p, prefix.size(), prefix) == 0) {
        ++n;
        break;
      }
    }
    line = end + 1;
  }
  return n;
}

// Tensor-core instructions: the wmma.* and mma.* ones.
int64_t TensorCoreInstructions(const std::string& ptx) {
  return CountInstructions(ptx, {"wmma.", "mma."});
}

// Warp shuffles (cross-thread reductions, ir/transform/lower_cross_thread_reduction.cc).
int64_t WarpShuffleInstructions(const std::string& ptx) { return CountInstructions(ptx, {"shfl."}); }

}  // namespace

int BuildOnly(const ResolvedWorkload& w, const ir::Target& target, int64_t candidates,
              uint64_t seed, bool as_json) {
  search::TuneContext ctx =
      search::MakeDefaultTuneContext(w.func, target, static_cast<int64_t>(seed), 1);
  std::vector<ir::Schedule> spaces = ctx.space_generator->Generate(ctx);
  if (spaces.empty()) throw std::runtime_error("the design space of " + w.label + " is empty");
  std::vector<ir::Trace> sketches;
  for (const auto& s : spaces) sketches.push_back(s.trace().Simplified(true).WithoutDecisions());
  int64_t built = 0, build_failed = 0, tensor_core = 0, shuffling = 0;
  std::map<std::string, int64_t> rejected;  // by postprocessor
  std::map<std::string, std::string> example;  // the first reason each gave
  nlohmann::json rows = nlohmann::json::array();
  // Like ReplayTrace: draw until `candidates` samples passed the
  // postprocessors (or 64 draws per wanted candidate were spent), and build
  // each one that passed.
  const int64_t max_draws = candidates * 64;
  int64_t draws = 0;
  for (int64_t i = 0; i < max_draws && built + build_failed < candidates; ++i) {
    ++draws;
    // Draw i: sketch i mod n, decisions drawn from its own stream.
    const ir::Trace& sketch = sketches[static_cast<size_t>(i) % sketches.size()];
    ir::Schedule sch(w.func, static_cast<int64_t>(seed * 1000003 + static_cast<uint64_t>(i)));
    std::string status = "built", detail;
    try {
      sketch.ApplyToSchedule(&sch, true);
      sch.EnterPostproc();
      for (const auto& p : ctx.postprocs) {
        std::string why;
        if (!p->Apply(&sch, &why)) {
          status = "rejected by " + p->Name();
          detail = why;
          ++rejected[p->Name()];
          example.emplace(p->Name(), why);
          break;
        }
      }
    } catch (const std::exception& e) {
      status = "rejected by sampling";
      detail = e.what();
      ++rejected["sampling"];
      example.emplace("sampling", detail);
    }
    size_t ptx_bytes = 0;
    int64_t tc_instructions = 0, shuffles = 0;
    if (status == "built") {
      try {
        if (target.kind == ir::Target::Kind::kCUDA) {
          codegen::CudaModule m = codegen::BuildCudaSource(sch.func(), target);
          codegen::CudaBinary bin = codegen::CompileCuda(m.source, target.arch, w.label + ".cu");
          ptx_bytes = bin.ptx.size();
          tc_instructions = TensorCoreInstructions(bin.ptx);
          tensor_core += tc_instructions > 0;
          shuffles = WarpShuffleInstructions(bin.ptx);
          shuffling += shuffles > 0;
        } else {
          ptx_bytes = codegen::BuildObject(sch.func(), target).object.size();
        }
        ++built;
      } catch (const std::exception& e) {
        status = "build failed";
        detail = e.what();
        ++build_failed;
      }
    }
    if (status.rfind("rejected", 0) == 0) continue;  // counted; the summary names them
    if (as_json) {
      rows.push_back({{"draw", i},
                      {"status", status},
                      {"detail", detail},
                      {"bytes", ptx_bytes},
                      {"tensor_core_instructions", tc_instructions},
                      {"warp_shuffle_instructions", shuffles}});
    } else {
      std::cout << "draw " << i << ": " << status;
      if (ptx_bytes) {
        std::cout << " (" << ptx_bytes << " bytes of "
                  << (target.kind == ir::Target::Kind::kCUDA ? "PTX" : "object");
        if (tc_instructions > 0) {
          std::cout << ", " << tc_instructions << " tensor-core (wmma/mma) instructions";
        }
        if (shuffles > 0) std::cout << ", " << shuffles << " warp shuffles";
        std::cout << ")";
      }
      if (!detail.empty()) std::cout << ": " << detail.substr(0, detail.find('\n'));
      std::cout << "\n";
    }
  }
  if (as_json) {
    nlohmann::json out = {{"workload", w.label},     {"target", target.ToString()},
                          {"sketches", spaces.size()}, {"draws", draws}, {"built", built},
                          {"build_failed", build_failed}, {"rejected", rejected},
                          {"rejected_example", example},
                          {"tensor_core_candidates", tensor_core},
                          {"warp_shuffle_candidates", shuffling},
                          {"candidates", rows}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << w.label << " on '" << target.ToString() << "': " << spaces.size()
              << " sketch(es), " << draws << " draws: " << built << " of " << candidates
              << " candidates built";
    if (target.kind == ir::Target::Kind::kCUDA) {
      std::cout << " and assembled for " << target.arch;
      if (tensor_core > 0) std::cout << " (" << tensor_core << " on tensor cores)";
      if (shuffling > 0) std::cout << " (" << shuffling << " with warp shuffles)";
    }
    for (const auto& [name, n] : rejected) std::cout << ", " << n << " draws rejected by " << name;
    if (build_failed) std::cout << ", " << build_failed << " FAILED to build";
    std::cout << "\n";
    for (const auto& [name, why] : example) {
      std::cout << "  " << name << ", first rejection: " << why.substr(0, why.find('\n')) << "\n";
    }
  }
  return built == candidates && build_failed == 0 ? 0 : 1;
}

}  // namespace kiln::tools
