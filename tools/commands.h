// Registration of the kiln CLI's subcommands, one function per command group.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::tools {

// Each Register* adds its subcommands to `app`; a subcommand's callback sets
// *exit_code (0 success, non-zero on error) and reports errors on stderr.
void RegisterIrCommands(CLI::App& app, int* exit_code);
void RegisterScheduleCommands(CLI::App& app, int* exit_code);
void RegisterLowerCommands(CLI::App& app, int* exit_code);
void RegisterDbCommands(CLI::App& app, int* exit_code);
void RegisterDbVerifyCommand(CLI::App& app, int* exit_code);  // after RegisterDbCommands
void RegisterRunCommands(CLI::App& app, int* exit_code);
void RegisterCompileCommands(CLI::App& app, int* exit_code);
void RegisterTuneCommands(CLI::App& app, int* exit_code);
void RegisterTargetCommands(CLI::App& app, int* exit_code);
void RegisterModelCommands(CLI::App& app, int* exit_code);
void RegisterFarmCommands(CLI::App& app, int* exit_code);
// After RegisterDbCommands: it adds `kiln db peer`.
void RegisterReportCommands(CLI::App& app, int* exit_code);
void RegisterConfigCommands(CLI::App& app, int* exit_code);

}  // namespace kiln::tools
