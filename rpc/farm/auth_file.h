// The farm's principals: who may call the coordinator, with which role, and
// the bearer token each presents (`kiln farm serve --auth FILE`).
//
// File format: one principal per line, `NAME ROLE TOKEN` separated by
// whitespace; `#` starts a comment (whole line or after the fields); blank
// lines are skipped. A malformed line is an error naming the file and line,
// never quoting the line (it may hold a token).
//
// Tokens are kept only as SHA-256 digests and looked up by comparing every
// entry's digest in constant time (CRYPTO_memcmp), so neither a timing
// difference nor a core dump gives a token away.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rpc::farm {

enum class Role {
  kWorker,  // takes leases and posts results
  kSubmit,  // starts, watches, cancels and lists its own jobs; farm status
  kRead,    // queries records; lists jobs, farm status
  kAdmin,   // everything, and cancels any job
};
const char* RoleName(Role r);
std::optional<Role> ParseRole(std::string_view name);

using TokenDigest = std::array<uint8_t, 32>;  // SHA-256
TokenDigest DigestToken(std::string_view token);

struct Principal {
  std::string name;
  Role role = Role::kRead;
  TokenDigest digest{};
};

class AuthFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shortest token accepted: 16 characters (e.g. `openssl rand -hex 32` gives 64).
inline constexpr size_t kMinTokenLength = 16;

class AuthTable {
 public:
  // Throws AuthFileError "SOURCE:LINE: what is wrong".
  static AuthTable Parse(std::string_view text, const std::string& source);
  static AuthTable Load(const std::string& path);

  // The principal whose token this is; every entry is compared.
  std::optional<Principal> Find(std::string_view token) const;
  std::optional<Principal> FindDigest(const TokenDigest& digest) const;
  const std::vector<Principal>& principals() const { return principals_; }

 private:
  std::vector<Principal> principals_;
};

}  // namespace kiln::rpc::farm
