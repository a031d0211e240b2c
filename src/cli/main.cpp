#include "cli/cli.hpp"

int main(int argc, char **argv) { return kopt::cli::main(argc, argv); }
