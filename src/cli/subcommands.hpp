#pragma once

#include "cli/cli.hpp"

namespace kopt::cli {

/// Each function adds one subcommand's options to `app` and returns its handler; the table in
/// commands.cpp lists them. Defined in the cli/<name>.cpp file of the same name.
Handler setup_version(CLI::App &app);
Handler setup_app(CLI::App &app);
Handler setup_bench(CLI::App &app);
Handler setup_build_report(CLI::App &app);
Handler setup_check(CLI::App &app);
Handler setup_capture(CLI::App &app);
Handler setup_analyze(CLI::App &app);
Handler setup_resource_usage(CLI::App &app);
Handler setup_gen_instances(CLI::App &app);
Handler setup_gpus(CLI::App &app);
Handler setup_import(CLI::App &app);
Handler setup_init(CLI::App &app);
Handler setup_launch_compile(CLI::App &app);
Handler setup_resources(CLI::App &app);
Handler setup_decide(CLI::App &app);
Handler setup_calibrate(CLI::App &app);
Handler setup_new(CLI::App &app);
Handler setup_checkout(CLI::App &app);
Handler setup_diff(CLI::App &app);
Handler setup_land(CLI::App &app);
Handler setup_record(CLI::App &app);
Handler setup_rebase(CLI::App &app);
Handler setup_round(CLI::App &app);
Handler setup_stamp_hash(CLI::App &app);
Handler setup_status(CLI::App &app);
Handler setup_tune(CLI::App &app);
Handler setup_heuristic(CLI::App &app);
Handler setup_ls(CLI::App &app);
Handler setup_log(CLI::App &app);
Handler setup_ledger(CLI::App &app);
Handler setup_report(CLI::App &app);

} // namespace kopt::cli
