// Two MPI ranks drive the gangs' communicators as a sweep does after a timeout that reached one member
// only: rank 1 loses the communicator of {0, 1}, rank 0 keeps it; then both take the next generation,
// which rank 0 of a sweep hands out once it hears of the loss. Run under mpirun by
// tests/mpi/collective_test.cpp; prints each check that fails and exits 1 if any did.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "cluster/gang.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0;
  const auto expect = [&](bool holds, const char* what) {
    if (holds) return;
    std::fprintf(stderr, "rank %d: not so: %s\n", rank, what);
    ++failures;
  };
  {
    ks::GangCommunicators gangs;
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    gangs.open(parent);
    const std::vector<int> members{0, 1};
    const MPI_Comm first = gangs.of(members, 0);
    expect(first != MPI_COMM_NULL, "the first generation is made");
    expect(gangs.of(members, 0) == first, "it is kept for the gang's next point");

    if (rank == 1) gangs.abandon(members, {});
    const auto lost = gangs.take_lost();
    expect(rank == 1 ? lost == std::vector<std::vector<int>>{members} : lost.empty(), "each rank reports what it lost");
    expect(gangs.take_lost().empty(), "a loss is reported once");
    if (rank == 1) expect(gangs.of(members, 0) == MPI_COMM_NULL, "a lost communicator is not used again");
    else expect(gangs.of(members, 0) == first, "the member that did not lose it still holds it");

    const MPI_Comm second = gangs.of(members, 1);  // together, whatever each held
    expect(second != MPI_COMM_NULL && second != first, "the next generation is made anew on both ranks");
    int mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, second);
    expect(sum == 3, "both ranks meet on the next generation");
    expect(gangs.of(members, 1) == second, "and keep it");
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
