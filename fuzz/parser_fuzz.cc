// Fuzzes the text parser: no input may crash it, and whatever parses must
// print to text that parses again and prints identically.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ir/text/parser.h"
#include "ir/text/printer.h"

namespace {

std::string PrintAll(const std::vector<kiln::ir::PrimFunc>& fs) {
  std::string out;
  for (const auto& f : fs) out += kiln::ir::ToText(f) + "\n";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<kiln::ir::PrimFunc> first;
  try {
    first = kiln::ir::ParseFuncs(text, "fuzz");
  } catch (const kiln::ir::ParseError&) {
    return 0;
  }
  std::string printed = PrintAll(first);
  std::string reprinted;
  try {
    reprinted = PrintAll(kiln::ir::ParseFuncs(printed, "printed"));
  } catch (const kiln::ir::ParseError& e) {
    std::fprintf(stderr, "printed text does not parse: %s\n---\n%s---\n", e.what(),
                 printed.c_str());
    std::abort();
  }
  if (reprinted != printed) {
    std::fprintf(stderr, "print is not a fixed point\n--- first\n%s--- second\n%s---\n",
                 printed.c_str(), reprinted.c_str());
    std::abort();
  }
  return 0;
}
