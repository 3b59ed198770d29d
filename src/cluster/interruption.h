#pragma once
// SIGTERM (Slurm's time limit, scancel) and SIGINT (Ctrl-C) end a sweep cleanly: the loops notice
// the request between points, rank 0 writes what it has received, and the job ends. `--resume`
// completes it later. So does the death of the launcher (mpirun killed outright): ranks left without
// it would otherwise go on measuring and writing, unseen, beside whatever the user starts next.
#include <stdexcept>
#include <string>

namespace ks {

void install_stop_handlers();
// A file whose appearance requests the stop as SIGTERM does (run --stop-file): a batch script's
// way to stop a job step without signalling it (a step signalled while it starts is torn down).
// Its first line, when it has one, is the reason stop_reason() gives.
void watch_stop_file(const std::string& path);
bool stop_requested();
// Why a stop was requested: "SIGTERM", "SIGINT", "the launcher (pid N) is gone", the stop file's line.
std::string stop_reason();

struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ks
