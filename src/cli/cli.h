#pragma once
// The `kernelsweep` command line: parses the arguments and calls the stage that does the work
// (src/run, or the worker of src/cluster). Exit codes are the run stage's (src/run/run.h).
namespace ks {
class Registry;
}

namespace ks::cli {

// `registry` holds the built-in kernels; plugins named on the command line or in a sweep file are
// added to it.
int main(int argc, char** argv, Registry& registry);

}  // namespace ks::cli
