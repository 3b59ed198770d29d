#include "cli/cli.h"
#include "kernels/kernel.h"

int main(int argc, char** argv) {
  ks::register_builtin_kernels(ks::Registry::global());
  return ks::cli::main(argc, argv);
}
