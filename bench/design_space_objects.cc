// Writes the code Kiln emits for a fixed sample of the suite's design space:
// for each suite workload (config 0), the first `n` candidates a seeded
// ReplayTrace-style draw passes through the postprocessors, built as an
// object file for a fixed CPU target and as CUDA source for a fixed GPU
// target. scripts/check_objects.sh hashes the files, so that a refactor can
// show that it changed no emitted byte. Not a timed benchmark.
// A workload whose space or build fails leaves its error message instead.
//
// Usage: design_space_objects OUT_DIR [candidates per workload (4)] [seed (7)]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/llvm_backend.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "search/postproc.h"
#include "search/space_generator.h"
#include "search/tune_context.h"

namespace {

using namespace kiln;

void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// Draws as tools/build_only.cc does (sketch i mod n, decisions from a stream
// seeded by (seed, i)) until `wanted` candidates passed the postprocessors;
// emits each through `emit` and returns how many were emitted.
template <typename Emit>
int EmitCandidates(const ir::PrimFunc& func, const ir::Target& target, int wanted, uint64_t seed,
                   Emit emit) {
  search::TuneContext ctx = search::MakeDefaultTuneContext(func, target,
                                                           static_cast<int64_t>(seed), 1);
  std::vector<ir::Trace> sketches;
  for (const auto& s : ctx.space_generator->Generate(ctx)) {
    sketches.push_back(s.trace().Simplified(true).WithoutDecisions());
  }
  if (sketches.empty()) return 0;
  int emitted = 0;
  for (int64_t i = 0; i < int64_t{wanted} * 64 && emitted < wanted; ++i) {
    const ir::Trace& sketch = sketches[static_cast<size_t>(i) % sketches.size()];
    ir::Schedule sch(func, static_cast<int64_t>(seed * 1000003 + static_cast<uint64_t>(i)));
    bool ok = true;
    try {
      sketch.ApplyToSchedule(&sch, true);
      sch.EnterPostproc();
      for (const auto& p : ctx.postprocs) {
        std::string why;
        if (!p->Apply(&sch, &why)) {
          ok = false;
          break;
        }
      }
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok) continue;
    emit(sch.func(), emitted++);
  }
  return emitted;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [candidates per workload] [seed]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path out = argv[1];
  const int wanted = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 7;
  std::filesystem::create_directories(out);
  const ir::Target cpu = codegen::ResolveTarget("llvm -mcpu=skylake-avx512 -num-cores=4");
  const ir::Target gpu = codegen::ResolveTarget("cuda -arch=sm_90");
  int total = 0;
  for (const std::string& name : ir::SuiteNames()) {
    const ir::PrimFunc func = ir::MakeWorkload(name, 0);
    // A workload whose space cannot be made or built says so in a file of
    // its own: the error is part of what must stay the same.
    auto guarded = [&](const char* side, auto run) {
      try {
        return run();
      } catch (const std::exception& e) {
        WriteFile(out / (name + "_" + side + "_error.txt"), std::string(e.what()) + "\n");
        return -1;
      }
    };
    int n = guarded("cpu", [&] {
      return EmitCandidates(func, cpu, wanted, seed, [&](const ir::PrimFunc& f, int k) {
        WriteFile(out / (name + "_cpu_" + std::to_string(k) + ".o"),
                  codegen::BuildObject(f, cpu).object);
      });
    });
    int m = guarded("gpu", [&] {
      return EmitCandidates(func, gpu, wanted, seed, [&](const ir::PrimFunc& f, int k) {
        WriteFile(out / (name + "_gpu_" + std::to_string(k) + ".cu"),
                  codegen::BuildCudaSource(f, gpu).source);
      });
    });
    std::printf("%s: %d CPU objects, %d CUDA sources\n", name.c_str(), n, m);
    std::fflush(stdout);
    total += std::max(n, 0) + std::max(m, 0);
  }
  std::printf("%d files in %s\n", total, out.c_str());
  return total > 0 ? 0 : 1;
}
