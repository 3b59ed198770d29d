#pragma once
// SIGTERM (Slurm's time limit, scancel) and SIGINT (Ctrl-C) end a sweep cleanly: the loops notice
// the request between points, rank 0 writes what it has received, and the job ends. `--resume`
// completes it later.
#include <stdexcept>

namespace ks {

void install_stop_handlers();
bool stop_requested();

class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ks
