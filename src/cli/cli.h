#pragma once
// The `kernelsweep` command. Exit codes: 0 success, 1 a run finished with failed points or an
// internal error, 2 bad input (sweep file, arguments, results file).
namespace ks::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

int main(int argc, char** argv);

}  // namespace ks::cli
