// The main() of a benchmark whose work is a Run(argc, argv) function: an
// exception (a bad flag, a missing database) becomes one line on stderr
// naming the bench, and exit status 1.
#pragma once

#include <exception>
#include <iostream>

namespace kiln::bench {

inline int BenchMain(const char* name, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace kiln::bench
