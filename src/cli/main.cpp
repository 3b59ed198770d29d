#include "cli/cli.h"
#include "kernels/kernel.h"

int main(int argc, char** argv) {
  ks::Registry registry;
  ks::register_builtin_kernels(registry);
  return ks::cli::main(argc, argv, registry);
}
