#include "cluster/worker_messages.h"

#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/bytes.h"

namespace ks {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GangSeat, members, me, nccl_id, timeout_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ColdRule, max_noise, min_samples, min_time_s, timeout_s,
                                                throttle_threshold, throttle_pause_s)

Json hello_message(int gpu_count, const GpuInfo& gpu, const std::string& problem) {
  return {{"type", "hello"},
          {"gpu_count", gpu_count},
          {"gpu", to_json(gpu)},
          {"host", to_json(read_host_info())},
          {"problem", problem}};
}

Json to_json(const ProtocolSpec& s) {
  Json j = {{"name", s.name},
            {"warmup_ms", s.warmup_ms},
            {"rep_ms", s.rep_ms},
            {"max_repeat", s.max_repeat},
            {"quantiles", s.quantiles}};
  if (s.flush_bytes) j["flush_bytes"] = *s.flush_bytes;
  if (s.min_repeat) j["min_repeat"] = *s.min_repeat;
  if (s.repetitions != 1) j["repetitions"] = s.repetitions;
  if (s.name == "cold") j.update(Json(s.cold));
  if (s.name == "graph") j["replays"] = s.replays;
  if (!s.sm_clock_per_sample) j["sm_clock_per_sample"] = false;
  if (s.energy) j["energy"] = true;
  return j;
}

ProtocolSpec protocol_spec_from_json(const Json& j) {
  ProtocolSpec s;
  s.name = j.at("name").get<std::string>();
  s.warmup_ms = j.at("warmup_ms").get<double>();
  s.rep_ms = j.at("rep_ms").get<double>();
  s.max_repeat = j.at("max_repeat").get<std::int64_t>();
  s.quantiles = j.at("quantiles").get<std::vector<double>>();
  if (j.contains("flush_bytes")) s.flush_bytes = j["flush_bytes"].get<std::int64_t>();
  if (j.contains("min_repeat")) s.min_repeat = j["min_repeat"].get<std::int64_t>();
  s.cold = j.get<ColdRule>();  // its keys sit beside the protocol's own
  s.replays = j.value("replays", s.replays);
  s.repetitions = j.value("repetitions", s.repetitions);
  s.sm_clock_per_sample = j.value("sm_clock_per_sample", s.sm_clock_per_sample);
  s.energy = j.value("energy", s.energy);
  return s;
}

std::string encode(const MeasureRequest& r) {
  const Json point = {{"kernel", r.point.kernel},
                      {"implementation", r.point.implementation},
                      {"mode", r.point.mode},
                      {"params", r.point.params}};
  Json message = {{"type", "measure"}, {"point", point}, {"protocol", to_json(r.protocol)}, {"check", r.check}};
  if (r.gang) message["gang"] = *r.gang;
  return message.dump();
}

MeasureRequest decode_request(const Json& j) {
  MeasureRequest r;
  const Json& p = j.at("point");
  r.point.kernel = p.at("kernel").get<std::string>();
  r.point.implementation = p.at("implementation").get<std::string>();
  r.point.mode = p.at("mode").get<std::string>();
  r.point.params = p.at("params");
  r.protocol = protocol_spec_from_json(j.at("protocol"));
  r.check = j.at("check").get<bool>();
  if (const auto gang = j.find("gang"); gang != j.end()) r.gang = gang->get<GangSeat>();
  return r;
}

std::string encode(const MeasureResult& r) {
  Json message = {
      {"type", "result"}, {"record", to_json(r.record)}, {"protocol", r.protocol}, {"worker_exits", r.worker_exits}};
  if (!r.implementation.is_null()) message["implementation"] = r.implementation;
  return message.dump();
}

MeasureResult decode_result(const Json& j) {
  MeasureResult r;
  r.record = run_record_from_json(j.at("record"));
  r.protocol = j.at("protocol");
  r.worker_exits = j.at("worker_exits").get<bool>();
  r.implementation = j.value("implementation", Json());
  return r;
}

const Json& ParsedText::parse(std::string_view text) {
  if (!parsed_ || text != text_) {
    value_ = Json::parse(text);
    text_ = text;
    parsed_ = true;
  }
  return value_;
}

namespace {

// A message longer than what it holds comes from another layout: refused rather than half read.
void need_all_read(std::string_view message, std::size_t offset) {
  if (offset != message.size())
    throw std::runtime_error("a message's bytes go on past its end (" + std::to_string(message.size()) + " bytes, " +
                             std::to_string(offset) + " read)");
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) return false;
      throw std::runtime_error(std::string("pipe write failed: ") + std::strerror(errno));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

// Request: the tag, the point's kernel, implementation, mode and parameters (JSON text), the
// protocol (JSON text), check, then whether a gang seat follows and the seat.
std::string encode_bytes(const MeasureRequest& r) {
  std::string out(1, kBytesMessage);
  append_sized_bytes(out, r.point.kernel);
  append_sized_bytes(out, r.point.implementation);
  append_sized_bytes(out, r.point.mode);
  append_sized_bytes(out, r.point.params.dump());
  append_sized_bytes(out, to_json(r.protocol).dump());
  append_value(out, static_cast<std::uint8_t>(r.check));
  append_value(out, static_cast<std::uint8_t>(r.gang.has_value()));
  if (r.gang) {
    append_values(out, r.gang->members);
    append_value(out, static_cast<std::int32_t>(r.gang->me));
    append_sized_bytes(out, r.gang->nccl_id);
    append_value(out, r.gang->timeout_s);
  }
  return out;
}

MeasureRequest request_from_bytes(std::string_view message, ParsedText& protocols) {
  if (!is_bytes_message(message)) throw std::runtime_error("a measure request's bytes do not start with their tag");
  std::size_t offset = 1;
  MeasureRequest r;
  r.point.kernel = sized_bytes_at(message, offset);
  r.point.implementation = sized_bytes_at(message, offset);
  r.point.mode = sized_bytes_at(message, offset);
  r.point.params = Json::parse(sized_bytes_at(message, offset));
  r.protocol = protocol_spec_from_json(protocols.parse(sized_bytes_at(message, offset)));
  r.check = value_at<std::uint8_t>(message, offset) != 0;
  if (value_at<std::uint8_t>(message, offset) != 0) {
    GangSeat seat;
    seat.members = values_at<int>(message, offset);
    seat.me = value_at<std::int32_t>(message, offset);
    seat.nccl_id = sized_bytes_at(message, offset);
    seat.timeout_s = value_at<double>(message, offset);
    r.gang = std::move(seat);
  }
  need_all_read(message, offset);
  return r;
}

// Result: the tag, the record (append_run_record_bytes), the resolved protocol and the
// implementation's provenance (JSON text, "null" for none), then whether the worker exits.
std::string encode_bytes(const MeasureResult& r) {
  std::string out(1, kBytesMessage);
  append_run_record_bytes(out, r.record);
  append_sized_bytes(out, r.protocol.dump());
  append_sized_bytes(out, r.implementation.dump());
  append_value(out, static_cast<std::uint8_t>(r.worker_exits));
  return out;
}

MeasureResult result_from_bytes(std::string_view message, ParsedText& protocols, ParsedText& implementations) {
  if (!is_bytes_message(message)) throw std::runtime_error("a measure result's bytes do not start with their tag");
  std::size_t offset = 1;
  MeasureResult r;
  r.record = run_record_from_bytes(message, offset);
  r.protocol = protocols.parse(sized_bytes_at(message, offset));
  r.implementation = implementations.parse(sized_bytes_at(message, offset));
  r.worker_exits = value_at<std::uint8_t>(message, offset) != 0;
  need_all_read(message, offset);
  return r;
}

bool PipeChannel::send(const std::string& message) {
  const auto length = static_cast<std::uint32_t>(message.size());
  const char header[4] = {static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
                          static_cast<char>((length >> 16) & 0xff), static_cast<char>((length >> 24) & 0xff)};
  std::string framed(header, 4);
  framed += message;
  return write_all(write_fd_, framed.data(), framed.size());
}

bool PipeChannel::take_buffered(std::string& message) {
  if (buffer_.size() < 4) return false;
  const auto* h = reinterpret_cast<const unsigned char*>(buffer_.data());
  const std::uint32_t length = h[0] | (h[1] << 8) | (h[2] << 16) | (static_cast<std::uint32_t>(h[3]) << 24);
  if (buffer_.size() < 4 + static_cast<std::size_t>(length)) return false;
  message.assign(buffer_, 4, length);
  buffer_.erase(0, 4 + static_cast<std::size_t>(length));
  return true;
}

ReadOutcome PipeChannel::receive(std::string& message, std::chrono::microseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char chunk[65536];
  while (!take_buffered(message)) {
    timespec wait{};
    timespec* wait_pointer = nullptr;  // forever
    if (timeout.count() >= 0) {
      const auto left = std::max<std::int64_t>(
          0, std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now()).count());
      wait.tv_sec = static_cast<time_t>(left / 1'000'000'000);
      wait.tv_nsec = static_cast<long>(left % 1'000'000'000);
      wait_pointer = &wait;
    }
    pollfd pfd{read_fd_, POLLIN, 0};
    const int ready = ::ppoll(&pfd, 1, wait_pointer, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll on worker pipe failed: ") + std::strerror(errno));
    }
    if (ready == 0) return ReadOutcome::timeout;
    const ssize_t n = ::read(read_fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ReadOutcome::closed;
    }
    if (n == 0) return ReadOutcome::closed;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
  return ReadOutcome::message;
}

void PipeChannel::close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
  buffer_.clear();
}

}  // namespace ks
