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

// Its answers go without waiting for the rank to take them in (the serving loop never waits on a
// busy rank): each buffer lives until MPI is done with it.
class MpiCoordinatorLink final : public CoordinatorLink {
 public:
  MpiCoordinatorLink() = default;
  MpiCoordinatorLink(const MpiCoordinatorLink&) = delete;
  MpiCoordinatorLink& operator=(const MpiCoordinatorLink&) = delete;
  // Waits for the answers still on their way, a bounded time (a rank that is gone never takes its own).
  ~MpiCoordinatorLink() override;

  std::optional<FromRank> receive(bool results) override;
  void answer(int rank, const std::vector<Assigned>& points) override;
  void tell_stop(int rank) override;
  void tell_still_parked(int rank) override;

 private:
  void forget_answers_sent();

  ParsedText protocol_texts_, implementation_texts_;  // of the results received
  // The answers on their way, a request and its buffer each (the buffer apart, so that it stays where
  // MPI reads it when the vector grows).
  std::vector<MPI_Request> answer_requests_;
  std::vector<std::unique_ptr<std::string>> answer_buffers_;
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
  bool all_sent() const { return in_flight_.empty(); }
  void wait_all_sent();
  // Nothing more follows from this rank, and why.
  void say_stopped(const std::string& why);

 private:
  void post(std::string bytes, int tag);
  std::list<std::pair<std::string, MPI_Request>> in_flight_;
  std::chrono::steady_clock::time_point last_heartbeat_ = std::chrono::steady_clock::now();
};

}  // namespace ks
