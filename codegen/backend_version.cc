#include "codegen/backend_version.h"

#include <llvm/Config/llvm-config.h>

namespace kiln::codegen {

std::string BackendVersion() { return std::string("llvm ") + LLVM_VERSION_STRING; }

}  // namespace kiln::codegen
