// The farm's jobs as the database keeps them (JobRow, the jobs table of
// schema version 2; rpc/farm/coordinator.h gives them their meaning).
#include <sqlite3.h>

#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "database/database.h"
#include "database/database_impl.h"

namespace kiln::database {

namespace {

JobRow ReadJobRow(sqlite3_stmt* s) {
  JobRow j;
  j.id = sqlite3_column_int64(s, 0);
  j.spec = ColumnText(s, 1);
  j.state = ColumnText(s, 2);
  j.priority = sqlite3_column_int64(s, 3);
  j.pool = ColumnText(s, 4);
  j.message = ColumnText(s, 5);
  j.created = sqlite3_column_int64(s, 6);
  j.updated = sqlite3_column_int64(s, 7);
  j.principal = ColumnText(s, 8);
  return j;
}

constexpr const char* kJobColumns = "id, spec, state, priority, pool, message, created, updated, principal";

}  // namespace

int64_t Database::CreateJob(const std::string& spec, int64_t priority, const std::string& state,
                            const std::string& principal) {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  Impl::Stmt s = impl_->Prepare(
      "INSERT INTO jobs(spec, state, priority, pool, message, created, updated, principal) "
      "VALUES (?, ?, ?, '', '', ?, ?, ?)");
  s.Bind(1, spec).Bind(2, state).Bind(3, priority).Bind(4, now).Bind(5, now).Bind(6, principal);
  s.Step();
  return sqlite3_last_insert_rowid(impl_->db);
}


void Database::UpdateJob(int64_t id, const std::string& state, const std::string& message) {
  Impl::Stmt s = impl_->Prepare("UPDATE jobs SET state = ?, message = ?, updated = ? WHERE id = ?");
  s.Bind(1, state).Bind(2, message).Bind(3, static_cast<int64_t>(std::time(nullptr))).Bind(4, id);
  s.Step();
  if (sqlite3_changes(impl_->db) != 1) throw DatabaseError(impl_->path + ": no job " + std::to_string(id));
}

void Database::SetJobPool(int64_t id, const std::string& pool) {
  Impl::Stmt s = impl_->Prepare("UPDATE jobs SET pool = ? WHERE id = ?");
  s.Bind(1, pool).Bind(2, id);
  s.Step();
  if (sqlite3_changes(impl_->db) != 1) throw DatabaseError(impl_->path + ": no job " + std::to_string(id));
}

std::optional<JobRow> Database::Job(int64_t id) const {
  Impl::Stmt s = impl_->Prepare(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?");
  s.Bind(1, id);
  if (!s.Step()) return std::nullopt;
  return ReadJobRow(s.get());
}

std::vector<JobRow> Database::Jobs() const {
  Impl::Stmt s = impl_->Prepare(std::string("SELECT ") + kJobColumns + " FROM jobs ORDER BY id");
  std::vector<JobRow> out;
  while (s.Step()) out.push_back(ReadJobRow(s.get()));
  return out;
}

}  // namespace kiln::database
