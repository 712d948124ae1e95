// The error guard every kiln subcommand runs its body under.
#pragma once

#include <exception>
#include <iostream>
#include <type_traits>

namespace kiln::tools {

// Runs `fn`, a subcommand's body. A body that returns an int sets
// *exit_code to it (one that returns nothing leaves *exit_code as it is);
// an exception is reported as "kiln: error: <what>" on stderr and sets
// *exit_code to 1.
template <typename F>
void Guard(int* exit_code, F fn) {
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
      fn();
    } else {
      *exit_code = fn();
    }
  } catch (const std::exception& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    *exit_code = 1;
  }
}

}  // namespace kiln::tools
