#include "cluster/pipe_channel.h"

#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace ks {
namespace {

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
