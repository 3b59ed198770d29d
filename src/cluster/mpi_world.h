#pragma once
// The MPI world of a run: ranks, the ranks that share a node, and the few collective steps taken
// before and after the sweep loop (never inside it, so one slow rank never stalls the others).
// Each collective step has a deadline: past it, the job is ended (MPI_Abort) rather than left
// waiting for a rank that stopped.
#include <chrono>
#include <string>
#include <vector>

#include <mpi.h>

namespace ks {

class MpiWorld {
 public:
  MpiWorld(int* argc, char*** argv);
  ~MpiWorld();  // meets the other ranks (with the deadline), then MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // rank among the ranks of this node
  int local_size() const { return local_size_; }

  // Every rank's string, on rank 0 (empty elsewhere).
  std::vector<std::string> gather_to_root(const std::string& mine) const;
  // Every node-local rank's string, on each of them.
  std::vector<std::string> allgather_node(const std::string& mine) const;
  // Rank 0's string, on every rank.
  std::string broadcast_from_root(const std::string& root_value) const;
  // True on every rank when `ok` is true on every rank.
  bool all(bool ok) const;
  // A communicator of every rank apart from MPI_COMM_WORLD (its messages never meet the run's),
  // made by every rank together: `step` names what it is for in the error of a rank that never came.
  MPI_Comm duplicate_world(const char* step) const;
  // How long a collective step may wait for the other ranks (default 10 minutes).
  void set_collective_deadline(std::chrono::seconds deadline) { collective_deadline_ = deadline; }
  // Ends the job from any rank (an MPI rank that returns alone would hang the others).
  [[noreturn]] void abort(int code) const;

  static std::string library_version();

 private:
  void wait(MPI_Request& request, const char* step) const;
  // Every rank's string of `comm`: on its rank 0 (`to_root`; `received`, the ranks' count there, 0
  // elsewhere) or on each of its `received` ranks.
  std::vector<std::string> gather(const std::string& mine, MPI_Comm comm, int received, bool to_root,
                                  const char* step) const;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::chrono::seconds collective_deadline_{600};
  MPI_Comm node_ = MPI_COMM_NULL;
};

}  // namespace ks
