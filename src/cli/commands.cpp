#include "cli/commands.hpp"

#include "cli/subcommands.hpp"

namespace kopt::cli {

namespace {

// Every subcommand, in the order `kopt --help` lists them.
constexpr Subcommand kTable[] = {
    {"analyze",
     "ncu bottleneck report for a candidate's hottest kernel: one config per class, top limiter",
     setup_analyze},
    {"app",
     "the application A/B: BEST's and a candidate's variant side by side, beside the "
     "prediction from the keep test's traffic rows -> results/<id>/app.json",
     setup_app},
    {"bench", "run a candidate's harness on the family's configs -> measurement.json", setup_bench},
    {"build-report",
     "compile times of a build's newest ninja run: slowest TUs, parallel efficiency, ccache",
     setup_build_report},
    {"calibrate", "measure BEST beside itself: each class's resolution -> results/calibration.json",
     setup_calibrate},
    {"capture", "shape capture: `capture merge` turns KOPT_CAPTURE files into a configs file",
     setup_capture},
    {"check", "the correctness test: identity, hash and every err == 0 against the golden",
     setup_check},
    {"checkout",
     "write a candidate's files (BEST's by default) into a git worktree or a folder to edit",
     setup_checkout},
    {"decide",
     "the keep test: a candidate's measurement vs BEST's -> decision.json, exit 0 on keep",
     setup_decide},
    {"diff", "the change from one candidate's files to another's, as a patch kopt new takes",
     setup_diff},
    {"gen-instances", "generate each candidate's instance TUs, registry, dispatch and manifest",
     setup_gen_instances},
    {"gpus", "what the GPU gate sees: each GPU's use, memory and processes, the idle ones",
     setup_gpus},
    {"import",
     "import a CMake build tree's target: its flags for candidates, its artifact as baseline",
     setup_import},
    {"heuristic", "fit a shape heuristic from tuning results, or score one (fit, eval)",
     setup_heuristic},
    {"launch-compile",
     "compiler launcher: compile from the candidate's folder so ccache shares hits",
     setup_launch_compile},
    {"init",
     "scaffold a new family: family.json, kernel, instance template, harness, configs, CMake",
     setup_init},
    {"ledger", "repair the ledger: `ledger rebuild` remakes a lost state.json from attempts.jsonl",
     setup_ledger},
    {"land", "make BEST the family's own files: settled candidates go, the ledger carries on",
     setup_land},
    {"log", "the attempt history: each attempt's verdict, change per class, hypothesis", setup_log},
    {"ls", "the candidates: base, hash, built, measured, verdict, recorded", setup_ls},
    {"new",
     "a candidate folder from a patch, a worktree or a commit (editable files only, checked)",
     setup_new},
    {"record", "record a decision in the ledger: BEST, counters, performance.md, attempts.jsonl",
     setup_record},
    {"rebase",
     "keep BEST after a change of what every candidate compiles (family.json, tuned, heuristic)",
     setup_rebase},
    {"report",
     "one HTML page of figures: the loop's history, decisions, tuning, heuristic, compile",
     setup_report},
    {"round",
     "one agent round: build, identity, measure beside BEST, decide, record; --json answer",
     setup_round},
    {"resource-usage",
     "registers, stack, shared memory per kernel of each candidate's binary, changes vs BEST",
     setup_resource_usage},
    {"resources", "write a ctest resource spec file listing the idle GPUs", setup_resources},
    {"stamp-hash",
     "write a candidate's content hash into its linked harness (kopt_add_family runs it)",
     setup_stamp_hash},
    {"status", "the ledger's state: BEST, regression counter, repairs, stopped or not",
     setup_status},
    {"tune", "run every instance on every config -> full.csv and an aiter tuned table", setup_tune},
    {"version", "print kopt's version", setup_version},
};

} // namespace

std::span<const Subcommand> subcommands() { return kTable; }

} // namespace kopt::cli
