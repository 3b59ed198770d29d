#pragma once
// SIGTERM (Slurm's time limit, scancel) and SIGINT (Ctrl-C) end a sweep cleanly: the loops notice
// the request between points, rank 0 writes what it has received, and the job ends. `--resume`
// completes it later. So does the death of the launcher (mpirun killed outright): ranks left without
// it would otherwise go on measuring and writing, unseen, beside whatever the user starts next.
#include <stdexcept>
#include <string>

namespace ks {

void install_stop_handlers();
bool stop_requested();
// Why a stop was requested: "SIGTERM", "SIGINT", "the launcher (pid N) is gone".
std::string stop_reason();

class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ks
