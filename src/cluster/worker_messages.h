#pragma once
// What a rank and its worker process say to each other (JSON; a measure request and its result as
// bytes between a rank and the C++ worker of its own executable, below), over a PipeChannel (last):
//   worker -> rank, once at start:  {"type":"hello","gpu_count":N,"gpu":{…},"host":{…}}
//   rank -> worker:                 {"type":"measure","point":{kernel,implementation,mode,params},
//                                    "protocol":{ProtocolSpec},"check":bool[,"gang":{GangSeat}]}
//   worker -> rank:                 {"type":"result","record":{RunRecord fields},"protocol":{…},
//                                    "worker_exits":bool[,"implementation":{…}]}
//   rank -> worker:                 {"type":"release"} (idle: let go of the last shape's instance)
//   rank -> worker:                 {"type":"nccl_id"} (C++ worker: a new NCCL unique id)
//   worker -> rank:                 {"type":"nccl_id","id":hex} or {"type":"nccl_id","error":text}
//   rank -> worker:                 {"type":"stop"}
// docs/worker-protocol.md describes each field, for workers written in other languages.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/sweep_spec.h"
#include "env/environment.h"
#include "plan/point.h"
#include "record/run_record.h"

namespace ks {

using Json = nlohmann::json;

// A collective point's place in its gang, for the worker that measures it through NCCL (a member's
// worker runs the collective with the other members' workers: cluster/nccl_member.h).
struct GangSeat {
  std::vector<int> members;  // the gang's world ranks, ascending
  int me = 0;                // this member's index in `members`
  // Hex of a fresh ncclUniqueId (NCCL_UNIQUE_ID_BYTES bytes): make the gang's communicator anew with
  // it. Empty: use the one this worker keeps for these members.
  std::string nccl_id;
  double timeout_s = 300;  // the point's: past it the worker aborts the communicator
};

struct MeasureRequest {
  Point point;
  ProtocolSpec protocol;
  bool check = true;
  std::optional<GangSeat> gang;  // a collective point measured by a gang's workers
};

struct MeasureResult {
  // The measurement's fields: status (passed, failed, error, skipped; crashed and timeout are decided
  // by the rank), message, times, repetitions, statistics, work, memory and samples. The rank adds
  // the point and where it ran.
  RunRecord record;
  Json protocol;              // the resolved protocol (protocol_to_json) the point was timed with
  bool worker_exits = false;  // the worker leaves after this result (its CUDA context may be broken)
  // Where a Python implementation came from (its module, the source's SHA-256, the versions of the
  // packages it names, the labels of its run documents); null from the C++ worker.
  Json implementation;
};

// The worker's first message: the GPUs it sees, the one it measures on (or why none), its host.
Json hello_message(int gpu_count, const GpuInfo& gpu, const std::string& problem);

Json to_json(const ProtocolSpec& spec);
ProtocolSpec protocol_spec_from_json(const Json& j);

std::string encode(const MeasureRequest& request);
MeasureRequest decode_request(const Json& j);
std::string encode(const MeasureResult& result);
MeasureResult decode_result(const Json& j);

// JSON that one message after another repeats (the protocol, the implementation's provenance), parsed
// again only when its text changes.
class ParsedText {
 public:
  const Json& parse(std::string_view text);

 private:
  bool parsed_ = false;
  std::string text_;
  Json value_;
};

// A measure request and its result as bytes (common/bytes.h): how a rank and the C++ worker of its
// own executable exchange them, since writing and reading them as JSON took a quarter of the CPU time
// of a point that measures nothing. A message of bytes starts with kBytesMessage, which no JSON text
// does; the C++ worker answers a request in the encoding it came in. The protocols and the
// implementation's provenance travel as their JSON text, which `protocols` and `implementations`
// parse. The decoders throw std::runtime_error on bytes that end early or go on past the message.
inline constexpr char kBytesMessage = '\0';
inline bool is_bytes_message(std::string_view message) { return !message.empty() && message.front() == kBytesMessage; }
std::string encode_bytes(const MeasureRequest& request);
MeasureRequest request_from_bytes(std::string_view message, ParsedText& protocols);
std::string encode_bytes(const MeasureResult& result);
MeasureResult result_from_bytes(std::string_view message, ParsedText& protocols, ParsedText& implementations);

// Length-prefixed messages over a pair of pipe file descriptors: a message is a 4-byte little-endian
// length followed by that many bytes.
enum class ReadOutcome { message, timeout, closed };

class PipeChannel {
 public:
  PipeChannel() = default;
  PipeChannel(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}

  // Writes a whole message; returns false when the other end has gone (EPIPE).
  bool send(const std::string& message);
  // Reads one message, waiting at most `timeout` (negative: forever). Partial messages are kept
  // across calls, so a timeout never loses bytes.
  ReadOutcome receive(std::string& message, std::chrono::microseconds timeout);
  void close();

 private:
  bool take_buffered(std::string& message);
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::string buffer_;
};

}  // namespace ks
