#pragma once

// ccache's remote storage: its Redis entries are probed before a compile, and those that do not
// answer are dropped, so compiles fall back to the local cache at once (with a warning).

#include <optional>
#include <string>

namespace kopt::buildinfo {

/// Where a Redis server of ccache's remote storage listens, and how to log in to it.
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string user;     ///< empty: the default user
  std::string password; ///< empty: no AUTH
};

/// Parses one entry of ccache's remote_storage value ("redis://[[user:]password@]host[:port]"
/// with optional "|attribute=value" suffixes); returns nullopt for other schemes (http, file,
/// redis+unix), which kopt passes to ccache unchecked. Throws kopt::Error naming `field` when a
/// redis URL is malformed.
std::optional<RedisEndpoint> parse_redis_url(const std::string &entry, const std::string &field);

/// Connects to `endpoint`, sends AUTH when it has a password, then PING, each step within
/// `timeout_ms`; returns "" when the server answered +PONG, else why not ("connection
/// refused", "-NOAUTH Authentication required.").
std::string probe_redis(const RedisEndpoint &endpoint, int timeout_ms);

/// The result of checking a remote_storage value: what to hand ccache and what to warn about.
struct RemoteStorageCheck {
  std::string usable;  ///< the entries that answered (or that kopt cannot probe), space-separated
  std::string warning; ///< empty when every redis entry answered
};

/// Probes every redis entry of `remote_storage` (space-separated, as ccache reads it) and drops
/// the ones that do not answer, so that compiles fall back to the local cache at once instead
/// of paying ccache's timeouts; `warning` says which entries were dropped and why.
RemoteStorageCheck check_remote_storage(const std::string &remote_storage, int timeout_ms);

} // namespace kopt::buildinfo
