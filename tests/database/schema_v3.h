// Test helper: the SQL that takes a version-3 tuning database back to the
// version-2 layout (database/schema.cc, Migrations), for the tests that
// check how older files are read and migrated.
#pragma once

namespace kiln::database::testing {

// Drops every column version 3 added and rebuilds records_best as version 2
// had it; the caller sets user_version.
inline constexpr const char* kDropVersion3 =
    "DROP TABLE peers; DROP INDEX records_best; "
    "ALTER TABLE records DROP COLUMN stale; "
    "ALTER TABLE records DROP COLUMN machine_load; "
    "ALTER TABLE records DROP COLUMN wide_spread; "
    "ALTER TABLE records DROP COLUMN provenance; "
    "ALTER TABLE records DROP COLUMN source_run_seconds; "
    "ALTER TABLE records DROP COLUMN principal; "
    "ALTER TABLE jobs DROP COLUMN principal; "
    "CREATE INDEX records_best ON records(workload_id, target_id, median_seconds) "
    "WHERE status = 'ok' AND verified = 1; ";

}  // namespace kiln::database::testing
