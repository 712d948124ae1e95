/* kiln_db.h: read-only lookup of tuned schedules in a Kiln tuning database,
 * for build pipelines. Plain C; link with kiln::kiln_db (CMake:
 * find_package(kiln)) or `pkg-config --libs kiln`.
 *
 * A lookup is exact: it returns only a record measured for the given
 * workload (structurally equal) and the given target (normalized target
 * string), with status "ok" and verified. Pass the target in Kiln's
 * canonical short form, which is what `kiln tune` stores and what
 * `kiln target host` prints on the measuring machine (this library has no
 * LLVM to canonicalize: "host" and spelled-out feature lists are not
 * resolved here; `kiln query` resolves both). Every function that can fail
 * returns a kiln_db_status; kiln_db_last_error() says why in words. */
#ifndef KILN_KILN_DB_H_
#define KILN_KILN_DB_H_

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_DB_API __attribute__((visibility("default")))
#else
#define KILN_DB_API
#endif

typedef struct kiln_db kiln_db;

typedef enum kiln_db_status {
  KILN_DB_OK = 0,
  KILN_DB_MISS = 1,          /* no usable record; the error string says why */
  KILN_DB_ERROR = 2,         /* bad file, bad argument, bad workload text or target */
} kiln_db_status;

/* Opens `path` read-only. On failure *out is NULL and the message is
 * available from kiln_db_last_error(NULL). */
KILN_DB_API kiln_db_status kiln_db_open(const char* path, kiln_db** out);
KILN_DB_API void kiln_db_close(kiln_db* db);

/* The best record for (workload, target). `workload` is either the
 * canonical text of a workload (as `kiln show` prints it) or its 16-digit
 * structural hash. On KILN_DB_OK, *trace_json points to the trace JSON
 * (valid until the next call on `db` or kiln_db_close) and *median_seconds
 * holds its median run time. Either output pointer may be NULL. */
KILN_DB_API kiln_db_status kiln_db_lookup(kiln_db* db, const char* workload, const char* target,
                                          const char** trace_json, double* median_seconds);

/* The message of the last failed or missed call on `db` (or of the last
 * failed kiln_db_open when db is NULL, per thread). Never NULL. */
KILN_DB_API const char* kiln_db_last_error(const kiln_db* db);
/* "ok", "miss", "error". */
KILN_DB_API const char* kiln_db_status_string(kiln_db_status status);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_DB_H_ */
