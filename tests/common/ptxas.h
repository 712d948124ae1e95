// Runs the CUDA Toolkit's ptxas over generated PTX, the check every machine
// can make without a GPU (tests/codegen/cuda_codegen_test.cc,
// tests/search/tensor_core_space_test.cc). KILN_PTXAS is set for every test
// by tests/CMakeLists.txt.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kiln::testing {

// Assembles `ptx` for `arch` (e.g. "sm_90"); returns ptxas's exit status and
// fills *log with what it printed. Works in a folder of its own per test.
inline int RunPtxas(const std::string& ptx, const std::string& arch, std::string* log) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() /
                 ("kiln_ptxas_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                  "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  fs::path in = dir / "k.ptx", out = dir / "k.cubin", msg = dir / "log.txt";
  std::ofstream(in) << ptx;
  std::string cmd = std::string("\"") + KILN_PTXAS + "\" -arch=" + arch + " -o \"" +
                    out.string() + "\" \"" + in.string() + "\" > \"" + msg.string() + "\" 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream m(msg);
  log->assign(std::istreambuf_iterator<char>(m), {});
  fs::remove_all(dir);
  return rc;
}

}  // namespace kiln::testing
