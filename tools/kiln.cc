// kiln: the command-line front end. Thin by design: it parses flags and calls
// the libraries; every subcommand has --help and exits non-zero on error.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Kiln: a MetaSchedule-style autotuner for tensor programs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kiln 0.1.0"));
  int exit_code = 0;
  kiln::tools::RegisterIrCommands(app, &exit_code);
  kiln::tools::RegisterScheduleCommands(app, &exit_code);
  kiln::tools::RegisterLowerCommands(app, &exit_code);
  kiln::tools::RegisterDbCommands(app, &exit_code);
  kiln::tools::RegisterRunCommands(app, &exit_code);
  kiln::tools::RegisterCompileCommands(app, &exit_code);
  kiln::tools::RegisterTuneCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
