#pragma once
// The messages of the sweep loop (cluster/rank_messages.h) over MPI_COMM_WORLD: rank 0's side
// (MpiCoordinatorLink) and every other rank's (ParticipantLink). Points and results travel as bytes
// (common/bytes.h); no side ever blocks on a receive, so one slow rank never stalls the others.
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "cluster/rank_messages.h"
#include "cluster/worker_messages.h"

namespace ks {

// Messages sent without waiting for their receiver (MPI_Isend): each one's bytes live until MPI is
// done with them. A blocking send of a message above MPI's eager limit waits until the receiver
// takes it in, so a sender that used one would stop with a receiver that stopped.
class Outbox {
 public:
  Outbox() = default;
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;
  ~Outbox();

  void post(std::string bytes, int rank, int tag);
  // Moves the messages on their way (MPI moves a large one only while its sender looks), and lets
  // go of those delivered.
  void progress();
  bool empty() const { return in_flight_.empty(); }

 private:
  std::list<std::pair<std::string, MPI_Request>> in_flight_;
};

class MpiCoordinatorLink final : public CoordinatorLink {
 public:
  std::optional<FromRank> receive(bool results) override;
  void answer(int rank, const std::vector<Assigned>& points) override;
  void tell_stop(int rank) override;
  void tell_still_parked(int rank) override;

 private:
  ParsedText protocol_texts_, implementation_texts_;  // of the results received
  // The answers on their way: a rank that stopped (SIGSTOP, a frozen node) right after it asked
  // never takes its answer in, and rank 0 goes on serving the others meanwhile.
  Outbox answers_;
};

// A rank's side: its requests and answers, and the messages it sends to rank 0 without waiting
// (their buffers live until MPI is done with them).
class ParticipantLink {
 public:
  // Asks for work, with the gangs' communicators this rank lost since it last asked.
  void ask_for_work(const std::vector<std::vector<int>>& lost_gangs);
  // Rank 0's answer, once it arrived: the points (none: no more work).
  std::optional<std::vector<Assigned>> answer();
  // Whether rank 0 said (since the last look) that this rank's gang is not formed yet.
  bool still_parked();
  // Whether rank 0 said (since the last look) that the run is interrupted.
  bool stop_arrived();

  // `documents`: the record's documents as this rank made them (null: rank 0 makes them).
  void send_result(const RunRecord& record, const MeasureResult& result, const RecordDocuments* documents);
  void send_note(std::string line);
  // A heartbeat when the last one is heartbeat_interval() old.
  void heartbeat();
  // Moves the messages on their way (MPI moves a large one only while its sender looks).
  void progress();
  bool all_sent() const { return outbox_.empty(); }
  void wait_all_sent();
  // Nothing more follows from this rank, and why.
  void say_stopped(const std::string& why);

 private:
  void post(std::string bytes, int tag);
  Outbox outbox_;
  std::chrono::steady_clock::time_point last_heartbeat_ = std::chrono::steady_clock::now();
};

}  // namespace ks
