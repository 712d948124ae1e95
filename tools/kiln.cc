// kiln: the command-line front end. Thin by design: it parses flags and calls
// the libraries; every subcommand has --help and exits non-zero on error.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "tools/commands.h"

int main(int argc, char** argv) {
  // stdout carries results (JSON a script parses, text a person reads); the
  // libraries' log goes to stderr with the rest of the diagnostics.
  spdlog::set_default_logger(spdlog::stderr_color_mt("kiln"));
  CLI::App app{"Kiln: a MetaSchedule-style autotuner for tensor programs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION_STRING);
  int exit_code = 0;
  kiln::tools::RegisterIrCommands(app, &exit_code);
  kiln::tools::RegisterScheduleCommands(app, &exit_code);
  kiln::tools::RegisterLowerCommands(app, &exit_code);
  kiln::tools::RegisterDbCommands(app, &exit_code);
  kiln::tools::RegisterDbVerifyCommand(app, &exit_code);
  kiln::tools::RegisterRunCommands(app, &exit_code);
  kiln::tools::RegisterCompileCommands(app, &exit_code);
  kiln::tools::RegisterTuneCommands(app, &exit_code);
  kiln::tools::RegisterTargetCommands(app, &exit_code);
  kiln::tools::RegisterModelCommands(app, &exit_code);
  kiln::tools::RegisterFarmCommands(app, &exit_code);
  kiln::tools::RegisterReportCommands(app, &exit_code);
  kiln::tools::RegisterConfigCommands(app, &exit_code);
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
