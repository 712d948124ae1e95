// libFuzzer target for importing TVM MetaSchedule databases
// (database/tvm_import.h, database/tvm_graph.h). The input is either a raw
// IRModule JSON graph (it starts with '{') or a workload file and a record
// file separated by the first blank line. Any input either converts or is
// refused with an error; it never crashes. A converted function that
// verifies must print to text that parses again, since the database stores
// workloads as text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "database/database.h"
#include "database/tvm_graph.h"
#include "database/tvm_import.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verify.h"

namespace {

void GraphInput(const std::string& text) {
  using namespace kiln;
  nlohmann::json graph = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (graph.is_discarded()) return;
  ir::PrimFunc f;
  try {
    f = database::PrimFuncFromTvmGraph(graph);
  } catch (const database::TvmImportError&) {
    return;
  }
  try {
    ir::Verify(f);
  } catch (const ir::VerifyError&) {
    return;
  }
  // Throws (and so fails the run) when the stored text would not read back.
  ir::ParseFunc(ir::ToText(f));
}

void DatabaseInput(const std::string& text) {
  using namespace kiln;
  size_t split = text.find("\n\n");
  std::istringstream workloads(text.substr(0, split));
  std::istringstream records(split == std::string::npos ? "" : text.substr(split + 2));
  database::Database db = database::Database::InMemory();
  database::TvmImportOptions opts;
  database::ImportTvmDatabase(db, workloads, records, opts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!text.empty() && text[0] == '{') {
    GraphInput(text);
  } else {
    DatabaseInput(text);
  }
  return 0;
}
