// The compiler toolchain Kiln's CPU backend was built with, for record
// fingerprints ("llvm 16.0.6"), without exposing LLVM headers.
#pragma once

#include <string>

namespace kiln::codegen {

std::string BackendVersion();

}  // namespace kiln::codegen
