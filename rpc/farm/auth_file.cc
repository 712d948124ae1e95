#include "rpc/farm/auth_file.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <fstream>
#include <set>
#include <sstream>

namespace kiln::rpc::farm {

const char* RoleName(Role r) {
  switch (r) {
    case Role::kWorker: return "worker";
    case Role::kSubmit: return "submit";
    case Role::kRead: return "read";
    case Role::kAdmin: return "admin";
  }
  return "unknown";
}

std::optional<Role> ParseRole(std::string_view name) {
  if (name == "worker") return Role::kWorker;
  if (name == "submit") return Role::kSubmit;
  if (name == "read") return Role::kRead;
  if (name == "admin") return Role::kAdmin;
  return std::nullopt;
}

TokenDigest DigestToken(std::string_view token) {
  TokenDigest d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

namespace {

bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == '@';
    if (!ok) return false;
  }
  return true;
}

bool ValidToken(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;
  }
  return true;
}

}  // namespace

AuthTable AuthTable::Parse(std::string_view text, const std::string& source) {
  AuthTable table;
  std::set<std::string> names;
  std::set<TokenDigest> digests;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> fields;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
      if (j > i) fields.push_back(line.substr(i, j - i));
      i = j;
    }
    if (fields.empty()) continue;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (fields.size() != 3) {
      throw AuthFileError(where + "expected NAME ROLE TOKEN, found " + std::to_string(fields.size()) + " field(s)");
    }
    if (!ValidName(fields[0])) {
      throw AuthFileError(where + "the name must be 1 to 128 of A-Z a-z 0-9 - _ . @");
    }
    const std::string name(fields[0]);
    std::optional<Role> role = ParseRole(fields[1]);
    if (!role) {
      throw AuthFileError(where + "principal '" + name + "': unknown role (worker, submit, read or admin)");
    }
    if (fields[2].size() < kMinTokenLength || !ValidToken(fields[2])) {
      throw AuthFileError(where + "principal '" + name + "': the token must be at least " +
                          std::to_string(kMinTokenLength) + " printable characters");
    }
    if (!names.insert(name).second) throw AuthFileError(where + "principal '" + name + "' appears twice");
    const TokenDigest digest = DigestToken(fields[2]);
    if (!digests.insert(digest).second) {
      throw AuthFileError(where + "principal '" + name + "' has the token of an earlier line");
    }
    table.principals_.push_back(Principal{name, *role, digest});
    if (end == text.size()) break;
  }
  return table;
}

AuthTable AuthTable::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw AuthFileError(path + ": cannot read the auth file");
  std::stringstream s;
  s << in.rdbuf();
  return Parse(s.str(), path);
}

std::optional<Principal> AuthTable::FindDigest(const TokenDigest& digest) const {
  // No early exit: the time taken does not depend on which entry matches.
  std::optional<Principal> found;
  for (const Principal& p : principals_) {
    if (CRYPTO_memcmp(p.digest.data(), digest.data(), digest.size()) == 0) found = p;
  }
  return found;
}

std::optional<Principal> AuthTable::Find(std::string_view token) const { return FindDigest(DigestToken(token)); }

}  // namespace kiln::rpc::farm
