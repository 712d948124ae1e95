// Measuring stored records again: the tuning loop's final re-measure of its
// best few (search/tune.h, TuneOptions::final_remeasure_top) and `kiln db
// verify` (search/verify_records.h) replay a record's stored trace on the
// workload and measure it, with the correctness check, through any Runner.
#pragma once

#include <vector>

#include "database/database.h"
#include "database/record.h"
#include "search/measure.h"

namespace kiln::search {

// Replays every record's trace (postproc instructions included, so the
// program is the one that was measured) on task.workload and measures them
// in one batch; results in record order. A trace that does not replay is a
// build_error result naming why; nothing throws for a bad record.
std::vector<MeasureResult> RemeasureRecords(Runner& runner, const MeasureTask& task,
                                            const std::vector<database::TuningRecord>& records);

// The record after a re-measure. Ok: the new repeats are appended to the
// stored ones (keep_stored_repeats) or replace them, and the noise figures
// cover both measurements (the busier load, a spread over every repeat).
// Not ok: status and message say what failed now, the record is no longer
// verified, and its stored repeats stay for the record.
database::TuningRecord WithRemeasure(database::TuningRecord stored, const MeasureResult& result,
                                     bool keep_stored_repeats);

// The tuning loop's final step: measures the `top` best usable records of
// (workload, task.target) again with at least `repeat` repeats, keeps every
// repeat in the stored record, and so ranks them on more than one noisy
// measurement. When re-measured records fall out of the top, those that
// take their place are measured again too, until the top `top` all were
// (at most 4 * top records). Returns how many were re-measured; *failed
// counts those that failed now (they stop being verified, so they are no
// longer best).
int RemeasureBest(Runner& runner, database::Database& db, database::WorkloadId workload,
                  const MeasureTask& task, int top, int repeat, int* failed);

}  // namespace kiln::search
