#include "buildinfo/remote_cache.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace bi = kopt::buildinfo;

TEST_SUITE_BEGIN("buildinfo::remote_cache");

TEST_CASE("redis URLs: host, port, login, attributes") {
  auto plain = bi::parse_redis_url("redis://cache-host", "f");
  REQUIRE(plain);
  CHECK(plain->host == "cache-host");
  CHECK(plain->port == 6379);
  CHECK(plain->password.empty());
  auto full = bi::parse_redis_url("redis://me:secret@10.0.0.5:7000/2|connect-timeout=500", "f");
  REQUIRE(full);
  CHECK(full->host == "10.0.0.5");
  CHECK(full->port == 7000);
  CHECK(full->user == "me");
  CHECK(full->password == "secret");
  auto password_only = bi::parse_redis_url("redis://:pw@h:1", "f");
  REQUIRE(password_only);
  CHECK(password_only->user.empty());
  CHECK(password_only->password == "pw");
  auto v6 = bi::parse_redis_url("redis://[::1]:6380", "f");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 6380);
  CHECK_FALSE(bi::parse_redis_url("http://cache-host/ccache", "f"));
  CHECK_FALSE(bi::parse_redis_url("file:/shared/ccache", "f"));
}

TEST_CASE("malformed redis URLs name the field") {
  CHECK_THROWS_WITH_AS(bi::parse_redis_url("redis://h:99999", "remote_storage"),
                       "remote_storage: 'redis://h:99999': port '99999' is not a number in 1-65535",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(
      bi::parse_redis_url("redis://:x", "remote_storage"),
      "remote_storage: 'redis://:x': expected redis://[[user:]password@]host[:port]", kopt::Error);
}

TEST_CASE("an entry that does not answer is dropped with a warning; others pass through") {
  // A port that was free a moment ago: nothing listens there.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
  socklen_t size = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &size) == 0);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  std::string dead = "redis://127.0.0.1:" + std::to_string(port);
  auto check = bi::check_remote_storage(dead + " http://cache-host/ccache", 500);
  CHECK(check.usable == "http://cache-host/ccache");
  CHECK(check.warning == dead + ": Connection refused");
  auto secret = bi::check_remote_storage("redis://:hidden@127.0.0.1:" + std::to_string(port), 500);
  CHECK(secret.usable.empty());
  CHECK(secret.warning.find("hidden") == std::string::npos);
}

TEST_SUITE_END();
