// Database::Impl's connection to SQLite: opening the file, the cached
// prepared statements (Impl::Stmt in database/database_impl.h), errors,
// and nested transactions.
#include <sqlite3.h>

#include <functional>
#include <memory>
#include <string>

#include "database/database.h"
#include "database/database_impl.h"

namespace kiln::database {

Database::Impl::~Impl() {
  for (auto& [sql, s] : statements) sqlite3_finalize(s);
  if (db) sqlite3_close_v2(db);
}

void Database::Impl::Fail(const std::string& what, int rc) const {
  std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int code = rc & 0xff;
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
    throw DatabaseError(path + ": not a valid SQLite database or corrupt (" + detail + ")");
  }
  throw DatabaseError(path + ": " + what + ": " + detail);
}

void Database::Impl::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    int code = rc & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
      throw DatabaseError(path + ": not a valid SQLite database or corrupt (" + msg + ")");
    }
    throw DatabaseError(path + ": " + msg);
  }
}

Database::Impl::Stmt Database::Impl::Prepare(const std::string& sql) {
  auto it = statements.find(sql);
  if (it == statements.end()) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK) Fail("prepare failed", rc);
    it = statements.emplace(sql, s).first;
  }
  return Stmt(this, it->second);
}

void Database::Impl::Begin() {
  // IMMEDIATE takes the write lock up front, so concurrent writers wait on
  // the busy timeout instead of failing with a deadlock mid-transaction.
  if (txn_depth++ == 0) Exec("BEGIN IMMEDIATE");
}
void Database::Impl::Commit() {
  if (--txn_depth == 0) Exec("COMMIT");
}
void Database::Impl::Rollback() {
  if (--txn_depth == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
}

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Database Database::Open(const std::string& path, Mode mode) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->read_only = mode == Mode::kReadOnly;
  int flags = impl->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &impl->db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) impl->Fail("cannot open", rc);
  sqlite3_extended_result_codes(impl->db, 1);
  sqlite3_busy_timeout(impl->db, 10000);
  if (!impl->read_only) {
    // WAL: readers never block the writer, and a commit is durable once
    // its frames are in the log (NORMAL sync is safe against a killed process).
    impl->Exec("PRAGMA journal_mode = WAL");
    impl->Exec("PRAGMA synchronous = NORMAL");
  }
  impl->Exec("PRAGMA foreign_keys = ON");
  impl->CheckAndMigrate();
  return Database(std::move(impl));
}

Database Database::InMemory() { return Open(":memory:"); }

const std::string& Database::path() const { return impl_->path; }

void Database::Transaction(const std::function<void()>& fn) {
  impl_->Begin();
  try {
    fn();
  } catch (...) {
    impl_->Rollback();
    if (impl_->txn_depth == 0) impl_->target_ids.clear();
    throw;
  }
  impl_->Commit();
}

std::string Database::IntegrityCheck() const {
  Impl::Stmt s = impl_->Prepare("PRAGMA integrity_check");
  std::string out;
  while (s.Step()) out += (out.empty() ? "" : "\n") + ColumnText(s.get(), 0);
  return out;
}

}  // namespace kiln::database
