#include "cluster/messaging.h"

#include <array>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "cluster/gang.h"
#include "common/bytes.h"
#include "common/point_id_set.h"

namespace ks {
namespace {

using namespace std::chrono_literals;

constexpr int kTagRequest = 101;      // rank -> 0: give me work (and the gangs' communicators I lost)
constexpr int kTagAssign = 102;       // 0 -> rank: the points of its next groups (none: no more work)
constexpr int kTagResult = 103;       // rank -> 0: one record
constexpr int kTagHeartbeat = 104;    // rank -> 0: still here (sent while a rank works)
constexpr int kTagStop = 105;         // 0 -> rank: the run is interrupted; abandon the point in hand
constexpr int kTagStopped = 106;      // rank -> 0: stopped, nothing more follows (payload: why)
constexpr int kTagStillParked = 107;  // 0 -> rank: your gang is not formed yet, keep waiting
constexpr int kTagNote = 108;         // rank -> 0: a line for the log (its sentinel found drift)

std::string encode_assignment(const std::vector<Assigned>& points) {
  std::string out;
  append_value(out, static_cast<std::uint64_t>(points.size()));
  for (const Assigned& a : points) {
    append_value(out, static_cast<std::uint64_t>(a.point.index));
    append_sized_bytes(out, a.point.kernel);
    append_sized_bytes(out, a.point.implementation);
    append_sized_bytes(out, a.point.mode);
    append_sized_bytes(out, a.point.params.dump());
    append_value(out, a.point.timeout_s);
    append_value(out, a.point.key);
    append_value(out, a.point.repetition);
    append_value(out, static_cast<std::uint8_t>(a.check));
    append_values(out, a.gang);
    append_value(out, a.generation);
  }
  return out;
}

std::vector<Assigned> decode_assignment(std::string_view bytes) {
  std::size_t offset = 0;
  const auto count = value_at<std::uint64_t>(bytes, offset);
  need_bytes(bytes, offset, count);  // a point takes more than a byte: a count beyond the bytes is refused
  std::vector<Assigned> out(count);
  for (Assigned& a : out) {
    a.point.index = value_at<std::uint64_t>(bytes, offset);
    a.point.kernel = sized_bytes_at(bytes, offset);
    a.point.implementation = sized_bytes_at(bytes, offset);
    a.point.mode = sized_bytes_at(bytes, offset);
    a.point.params = Json::parse(sized_bytes_at(bytes, offset));
    a.point.timeout_s = value_at<double>(bytes, offset);
    a.point.key = value_at<PointKey>(bytes, offset);
    a.point.repetition = value_at<std::int32_t>(bytes, offset);
    a.check = value_at<std::uint8_t>(bytes, offset) != 0;
    a.gang = values_at<int>(bytes, offset);
    a.generation = value_at<std::uint32_t>(bytes, offset);
  }
  return out;
}

// The texts of a record's documents, in the order a result carries them (encode_result, documents_at).
template <class Documents> auto travelling_texts(Documents& d) {
  return std::array{&d.cited.protocol_digest,
                    &d.cited.environment_digest,
                    &d.cited.workload_digest,
                    &d.cited.implementation_digest,
                    &d.run.text,
                    &d.run.name,
                    &d.workload};
}

// A result as a rank sends it to rank 0: the record's bytes (append_run_record_bytes), the JSON text
// of the protocol and of the implementation's provenance, each after its length, then whether the
// rank made the record's documents and, if it did, their citations and texts.
std::string encode_result(const RunRecord& record, const MeasureResult& result, const RecordDocuments* documents) {
  std::string out;
  append_run_record_bytes(out, record);
  append_sized_bytes(out, result.protocol.dump());
  append_sized_bytes(out, result.implementation.dump());
  append_value(out, static_cast<std::uint8_t>(documents != nullptr));
  if (!documents) return out;
  for (const std::string* text : travelling_texts(*documents)) append_sized_bytes(out, *text);
  return out;
}

std::optional<RecordDocuments> documents_at(std::string_view bytes, std::size_t& offset) {
  if (value_at<std::uint8_t>(bytes, offset) == 0) return std::nullopt;
  RecordDocuments documents;
  for (std::string* text : travelling_texts(documents)) *text = sized_bytes_at(bytes, offset);
  return documents;
}

// An empty message that nobody waits on.
void post_word(int rank, int tag) {
  MPI_Request request;
  MPI_Isend(nullptr, 0, MPI_CHAR, rank, tag, MPI_COMM_WORLD, &request);
  MPI_Request_free(&request);
}

// Takes in an empty message of `tag` from rank 0, if one arrived.
bool take_word(int tag) {
  int arrived = 0;
  MPI_Iprobe(0, tag, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
  if (arrived) MPI_Recv(nullptr, 0, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return arrived != 0;
}

std::string receive_bytes(const MPI_Status& status) {
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string bytes(static_cast<std::size_t>(length), '\0');
  MPI_Recv(bytes.data(), length, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

FromRank::Kind kind_of(int tag) {
  switch (tag) {
    case kTagRequest: return FromRank::Kind::work_request;
    case kTagResult: return FromRank::Kind::result;
    case kTagNote: return FromRank::Kind::note;
    case kTagHeartbeat: return FromRank::Kind::heartbeat;
    case kTagStopped: return FromRank::Kind::stopped;
  }
  throw std::logic_error(fmt::format("rank 0 got a message with unknown tag {}", tag));
}

}  // namespace

// A message still on its way at the end is to a rank that stopped answering: the others took in
// every message before theirs ended. Its request is let go and its bytes are kept to the process's
// end, since MPI may still read them until the job (which cannot end in order with a stopped rank)
// is aborted.
Outbox::~Outbox() {
  static std::list<std::string> kept_for_mpi;
  progress();
  for (auto& [bytes, request] : in_flight_) {
    MPI_Request_free(&request);
    kept_for_mpi.push_back(std::move(bytes));
  }
}

void Outbox::post(std::string bytes, int rank, int tag) {
  auto& item = in_flight_.emplace_back(std::move(bytes), MPI_REQUEST_NULL);
  MPI_Isend(item.first.data(), static_cast<int>(item.first.size()), MPI_CHAR, rank, tag, MPI_COMM_WORLD, &item.second);
}

void Outbox::progress() {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    int done = 0;
    MPI_Test(&it->second, &done, MPI_STATUS_IGNORE);
    it = done ? in_flight_.erase(it) : std::next(it);
  }
}

std::optional<FromRank> MpiCoordinatorLink::receive(bool results) {
  answers_.progress();
  int waiting = 0;
  MPI_Status status;
  if (results) {
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
  } else {
    for (const int tag : {kTagRequest, kTagHeartbeat}) {
      MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &waiting, &status);
      if (waiting) break;
    }
  }
  if (!waiting) return std::nullopt;
  const std::string bytes = receive_bytes(status);
  FromRank message;
  message.rank = status.MPI_SOURCE;
  message.kind = kind_of(status.MPI_TAG);
  if (message.kind == FromRank::Kind::work_request) {
    message.lost_gangs = decode_member_sets(bytes);
  } else if (message.kind == FromRank::Kind::result) {
    std::size_t offset = 0;
    message.record = run_record_from_bytes(bytes, offset);
    message.protocol = &protocol_texts_.parse(sized_bytes_at(bytes, offset));
    message.implementation = &implementation_texts_.parse(sized_bytes_at(bytes, offset));
    message.documents = documents_at(bytes, offset);
  } else {
    message.text = bytes;
  }
  return message;
}

void MpiCoordinatorLink::answer(int rank, const std::vector<Assigned>& points) {
  answers_.post(points.empty() ? std::string() : encode_assignment(points), rank, kTagAssign);
}

void MpiCoordinatorLink::tell_stop(int rank) { post_word(rank, kTagStop); }

void MpiCoordinatorLink::tell_still_parked(int rank) { post_word(rank, kTagStillParked); }

void ParticipantLink::ask_for_work(const std::vector<std::vector<int>>& lost_gangs) {
  const std::string lost = encode_member_sets(lost_gangs);
  MPI_Send(lost.data(), static_cast<int>(lost.size()), MPI_CHAR, 0, kTagRequest, MPI_COMM_WORLD);
}

std::optional<std::vector<Assigned>> ParticipantLink::answer() {
  int arrived = 0;
  MPI_Status status;
  MPI_Iprobe(0, kTagAssign, MPI_COMM_WORLD, &arrived, &status);
  if (!arrived) return std::nullopt;
  const std::string bytes = receive_bytes(status);
  return bytes.empty() ? std::vector<Assigned>() : decode_assignment(bytes);
}

bool ParticipantLink::still_parked() { return take_word(kTagStillParked); }

bool ParticipantLink::stop_arrived() { return take_word(kTagStop); }

void ParticipantLink::send_result(const RunRecord& record, const MeasureResult& result,
                                  const RecordDocuments* documents) {
  post(encode_result(record, result, documents), kTagResult);
}

void ParticipantLink::send_note(std::string line) { post(std::move(line), kTagNote); }

void ParticipantLink::heartbeat() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_heartbeat_ < heartbeat_interval()) return;
  last_heartbeat_ = now;
  post(std::string(), kTagHeartbeat);
}

void ParticipantLink::post(std::string bytes, int tag) { outbox_.post(std::move(bytes), 0, tag); }

void ParticipantLink::progress() { outbox_.progress(); }

void ParticipantLink::wait_all_sent() {
  while (!outbox_.empty()) {
    progress();
    if (!outbox_.empty()) std::this_thread::sleep_for(50us);
  }
}

void ParticipantLink::say_stopped(const std::string& why) {
  MPI_Send(why.data(), static_cast<int>(why.size()), MPI_CHAR, 0, kTagStopped, MPI_COMM_WORLD);
}

}  // namespace ks
