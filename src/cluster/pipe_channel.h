#pragma once
// Length-prefixed messages over a pair of pipe file descriptors: how an MPI rank and its worker
// process talk. A message is a 4-byte little-endian length followed by that many bytes (JSON text).
#include <chrono>
#include <optional>
#include <string>

namespace ks {

enum class ReadOutcome { message, timeout, closed };

class PipeChannel {
 public:
  PipeChannel() = default;
  PipeChannel(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}
  int read_fd() const { return read_fd_; }

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
