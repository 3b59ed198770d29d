// kernelsweep with the test kernels registered: what the MPI and CLI tests run.
#include "cli/cli.h"
#include "kernels/kernel.h"
#include "support/test_kernels.h"

int main(int argc, char** argv) {
  ks::Registry registry;
  ks::register_builtin_kernels(registry);
  ks::testing::register_test_kernels(registry);
  return ks::cli::main(argc, argv, registry);
}
