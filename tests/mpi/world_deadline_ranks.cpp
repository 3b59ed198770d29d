// Two MPI ranks, of which rank 1 stops (SIGSTOP) before a collective step that rank 0 takes: the
// step named by the argument ("duplicate": the copy of MPI_COMM_WORLD the gangs' communicators are
// made from; "finalize": the end of the run). Rank 0 must end the job once the step's deadline
// (2 s) has passed, instead of waiting inside MPI for good. Run under mpirun by
// tests/mpi/world_test.cpp.
#include <csignal>
#include <cstdio>
#include <string>

#include "cluster/mpi_world.h"

int main(int argc, char** argv) {
  const std::string step = argc > 1 ? argv[1] : "";
  if (step != "duplicate" && step != "finalize") {
    std::fprintf(stderr, "usage: %s duplicate|finalize\n", argv[0]);
    return 2;
  }
  ks::MpiWorld world(&argc, &argv);
  world.set_collective_deadline(std::chrono::seconds(2));
  if (world.rank() == 1) std::raise(SIGSTOP);
  if (step == "duplicate") {
    MPI_Comm copy = world.duplicate_world("the set-up of the gangs' communicators");
    MPI_Comm_free(&copy);
  }
  return 0;  // ~MpiWorld: the end of the run
}
