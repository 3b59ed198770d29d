#pragma once
// The communicators of the gangs that measure collective points together (cluster/gang.h): one per
// set of members, made from a copy of MPI_COMM_WORLD on first use and kept for the next point of the
// same members, in generations that rank 0 hands out (a member that lost one makes the next anew
// with the others).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

namespace ks {

class GangCommunicators {
 public:
  GangCommunicators() = default;
  GangCommunicators(const GangCommunicators&) = delete;
  GangCommunicators& operator=(const GangCommunicators&) = delete;
  ~GangCommunicators();

  // Takes the copy of MPI_COMM_WORLD (MpiWorld::duplicate_world, made by every rank together before
  // the sweep) that the gangs' communicators are made from, so that making them never meets the
  // run's own messages.
  void open(MPI_Comm parent) { parent_ = parent; }
  // The communicator of `members` (world ranks, ascending) in `generation`: every member asks for it
  // at the same time, with the generation rank 0 handed out with the point. Made anew, by all members
  // together, when the one held is of an earlier generation; MPI_COMM_NULL when this rank lost it in
  // this generation.
  MPI_Comm of(const std::vector<int>& members, std::uint32_t generation);
  // Lost: an operation on it did not complete here. It is never used again, nor freed (MPI may still
  // be busy with it); `in_flight`, the memory of the operations left unfinished, is kept for the rest
  // of the process, for the same reason.
  void abandon(const std::vector<int>& members, std::vector<std::shared_ptr<void>> in_flight);
  // The member sets whose communicators this rank lost since the last call. A timeout need not reach
  // every member (a member stopped just before the gang's last operation may find it completed when it
  // resumes, and keep the communicator the others left), so each rank tells rank 0, which starts a new
  // generation of the set before handing out its next point: all of its members then make a new
  // communicator together, where a member that kept the old one would wait on it alone, or pair its
  // next point with another's.
  std::vector<std::vector<int>> take_lost();

 private:
  struct Held {
    MPI_Comm comm = MPI_COMM_NULL;
    std::uint32_t generation = 0;
    bool lost = false;
  };
  MPI_Comm parent_ = MPI_COMM_NULL;
  std::map<std::vector<int>, Held> held_;
  std::vector<std::vector<int>> lost_since_taken_;
};

// A gang's member sets as bytes (common/bytes.h), as a rank's request for work carries the ones it
// lost; and back.
std::string encode_member_sets(const std::vector<std::vector<int>>& sets);
std::vector<std::vector<int>> decode_member_sets(std::string_view bytes);

}  // namespace ks
