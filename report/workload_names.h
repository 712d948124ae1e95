// How a stored workload is named to people: by its suite name, or the spec a
// farm job gave it, when one matches its structural hash; else by its buffers.
// `kiln report` titles its sections this way and `kiln model eval` its rows.
#pragma once

#include <map>
#include <string>

#include "database/database.h"
#include "ir/prim_func.h"

namespace kiln::report {

// Names people use for a stored workload, by structural hash: every suite
// workload ("GMM:2") and every workload spec of the farm jobs the database
// holds ("C2D(1,56,56,64,64,3,1,1)").
std::map<std::string, std::string> KnownWorkloadNames(const database::Database& db);

// The parameters with their shapes, the ones the program writes after the
// arrow: "data[1,4096], weight[4096] -> T_rms_norm[1,4096]". A shape that is
// not constant prints as written in the text form.
std::string BufferSignature(const ir::PrimFunc& func);

// `known`'s name for the workload of this structural hash (KnownWorkloadNames),
// else the BufferSignature of its stored text, else "workload <hash>" (the
// first 16 digits) when the database has no text for it that parses.
std::string WorkloadLabel(const database::Database& db,
                          const std::map<std::string, std::string>& known, const std::string& hash);

}  // namespace kiln::report
