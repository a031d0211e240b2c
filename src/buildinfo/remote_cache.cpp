#include "buildinfo/remote_cache.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace kopt::buildinfo {

namespace {

// Owns a socket descriptor so every early return closes it.
class Socket {
public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  Socket(const Socket &) = delete;
  Socket &operator=(const Socket &) = delete;
  int fd() const { return fd_; }

private:
  int fd_;
};

// Waits until `fd` is ready for `events` or the deadline passes; returns "" or why not.
std::string wait_ready(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return "no answer in time";
    }
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) {
      return "";
    }
    if (n < 0 && errno != EINTR) {
      return std::strerror(errno);
    }
  }
}

// Sends one RESP command and reads its one-line reply (without the CRLF).
std::string command(int fd, const std::vector<std::string> &words,
                    std::chrono::steady_clock::time_point deadline, std::string &reply) {
  std::string request = "*" + std::to_string(words.size()) + "\r\n";
  for (const auto &word : words) {
    request += "$" + std::to_string(word.size()) + "\r\n" + word + "\r\n";
  }
  size_t sent = 0;
  while (sent < request.size()) {
    if (std::string why = wait_ready(fd, POLLOUT, deadline); !why.empty()) {
      return why;
    }
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        continue;
      }
      return std::strerror(errno);
    }
    sent += static_cast<size_t>(n);
  }
  reply.clear();
  while (reply.find("\r\n") == std::string::npos) {
    if (std::string why = wait_ready(fd, POLLIN, deadline); !why.empty()) {
      return why;
    }
    char buffer[256];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) {
      return "the server closed the connection";
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        continue;
      }
      return std::strerror(errno);
    }
    reply.append(buffer, static_cast<size_t>(n));
  }
  reply.resize(reply.find("\r\n"));
  return "";
}

} // namespace

std::optional<RedisEndpoint> parse_redis_url(const std::string &entry, const std::string &field) {
  std::string url = entry.substr(0, entry.find('|'));
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) {
    return std::nullopt;
  }
  std::string rest = url.substr(scheme.size());
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    rest.resize(slash); // a database number: ccache's business, not the probe's
  }
  RedisEndpoint endpoint;
  if (size_t at = rest.rfind('@'); at != std::string::npos) {
    std::string login = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (size_t colon = login.find(':'); colon != std::string::npos) {
      endpoint.user = login.substr(0, colon);
      endpoint.password = login.substr(colon + 1);
    } else {
      endpoint.password = login;
    }
  }
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) {
      throw Error(field + ": '" + entry + "': expected ']' after the IPv6 address");
    }
    endpoint.host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      throw Error(field + ": '" + entry + "': expected ':<port>' after the IPv6 address");
    }
    port = rest.empty() ? "" : rest.substr(1);
  } else if (size_t colon = rest.rfind(':'); colon != std::string::npos) {
    endpoint.host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  } else {
    endpoint.host = rest;
  }
  if (endpoint.host.empty()) {
    throw Error(field + ": '" + entry + "': expected redis://[[user:]password@]host[:port]");
  }
  if (!port.empty()) {
    long long value = 0;
    try {
      value = util::parse_int(port, field);
    } catch (const Error &) {
      value = -1;
    }
    if (value < 1 || value > 65535) {
      throw Error(field + ": '" + entry + "': port '" + port + "' is not a number in 1-65535");
    }
    endpoint.port = static_cast<int>(value);
  }
  return endpoint;
}

std::string probe_redis(const RedisEndpoint &endpoint, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  std::string port = std::to_string(endpoint.port);
  if (int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return std::string("cannot resolve the host: ") + ::gai_strerror(rc);
  }
  std::string why = "no address";
  for (addrinfo *a = found; a != nullptr; a = a->ai_next) {
    Socket socket(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol));
    if (socket.fd() < 0) {
      why = std::strerror(errno);
      continue;
    }
    if (::connect(socket.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        why = std::strerror(errno);
        continue;
      }
      why = wait_ready(socket.fd(), POLLOUT, deadline);
      int error = 0;
      socklen_t size = sizeof error;
      if (why.empty() && ::getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &size) == 0 &&
          error != 0) {
        why = std::strerror(error);
      }
      if (!why.empty()) {
        continue;
      }
    }
    std::string reply;
    if (!endpoint.password.empty()) {
      std::vector<std::string> auth{"AUTH"};
      if (!endpoint.user.empty()) {
        auth.push_back(endpoint.user);
      }
      auth.push_back(endpoint.password);
      why = command(socket.fd(), auth, deadline, reply);
      if (why.empty() && reply != "+OK") {
        why = reply;
      }
      if (!why.empty()) {
        break;
      }
    }
    why = command(socket.fd(), {"PING"}, deadline, reply);
    if (why.empty() && reply != "+PONG") {
      why = reply;
    }
    break;
  }
  ::freeaddrinfo(found);
  return why;
}

RemoteStorageCheck check_remote_storage(const std::string &remote_storage, int timeout_ms) {
  RemoteStorageCheck check;
  std::istringstream entries(remote_storage);
  std::string entry;
  while (entries >> entry) {
    std::optional<RedisEndpoint> endpoint = parse_redis_url(entry, "remote_storage");
    std::string why = endpoint ? probe_redis(*endpoint, timeout_ms) : "";
    if (why.empty()) {
      check.usable += (check.usable.empty() ? "" : " ") + entry;
      continue;
    }
    std::string shown = entry.substr(0, entry.find('|'));
    if (endpoint && !endpoint->password.empty()) {
      shown = "redis://" + endpoint->host + ":" + std::to_string(endpoint->port);
    }
    check.warning += (check.warning.empty() ? "" : "; ") + shown + ": " + why;
  }
  return check;
}

} // namespace kopt::buildinfo
