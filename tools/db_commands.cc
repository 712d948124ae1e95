// kiln query and kiln db stats|top|export|import|prune|merge: the tuning
// database from the command line. `query` exits 0 on a hit and 3 on a miss,
// and says why it missed.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "database/database.h"
#include "database/record_json.h"
#include "ir/text/printer.h"
#include "ir/structural_hash.h"
#include "kiln/v1/farm.grpc.pb.h"
#include "rpc/farm/farm_client.h"
#include "tools/farm_client_flags.h"
#include "search/target_lookup.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/target_spec.h"
#include "tools/tvm_db_commands.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

namespace {

using database::Database;
using nlohmann::json;

constexpr int kMissExit = 3;

Database OpenExisting(const std::string& path, Database::Mode mode) {
  if (!std::ifstream(path)) throw std::runtime_error("--db " + path + ": no such file");
  return Database::Open(path, mode);
}

// The best record and the miss explanation, from a database file or from a
// farm coordinator's database (the same lookups, run there).
struct QueryAnswer {
  std::optional<database::TuningRecord> best;
  database::MissReason miss;
  std::string record_target;  // the stored target the record was measured for
  bool exact = true;
  std::string note;                  // compatible match: where the record came from
  std::vector<std::string> refused;  // compatible match: targets refused, with why
};

QueryAnswer LookUpLocal(const std::string& db_path, const ir::PrimFunc& func,
                        const ir::Target& target, search::TargetMatch match) {
  Database db = OpenExisting(db_path, Database::Mode::kReadOnly);
  auto id = db.FindWorkload(func);
  search::TargetLookup found = search::FindBestRecord(db, id.value_or(0), target, match);
  return {std::move(found.record), std::move(found.miss), std::move(found.record_target),
          found.exact, std::move(found.note), std::move(found.refused)};
}

QueryAnswer LookUpFarm(const FarmClientFlags& flags, const ResolvedWorkload& w, const std::string& target) {
  const rpc::farm::FarmClientOptions client = ResolveFarmClient(flags);
  const std::string& farm = client.farm;
  auto stub = v1::FarmService::NewStub(rpc::farm::DialFarm(client));
  v1::QueryRequest req;
  req.mutable_workload()->set_text(ir::ToText(w.func));
  req.mutable_workload()->set_structural_hash(ir::StructuralHashHex(w.func));
  req.mutable_workload()->set_name(w.label);
  req.mutable_target()->set_spec(target);
  grpc::ClientContext context;
  rpc::farm::PrepareCall(client, &context, /*deadline=*/true);
  v1::QueryResponse resp;
  grpc::Status s = stub->Query(&context, req, &resp);
  if (!s.ok()) throw std::runtime_error(rpc::farm::DescribeFailure(farm, s));
  QueryAnswer a;
  if (resp.hit()) {
    const json record = json::parse(resp.record_json());
    a.best = database::RecordFromJson(record);
    // Filled by the database, so RecordFromJson leaves them out.
    a.best->workload_hash = record.at("workload_hash").get<std::string>();
    a.best->trace_hash = record.at("trace_hash").get<std::string>();
    a.best->median_seconds = record.at("median_seconds").get<double>();
    a.record_target = a.best->target;
  }
  a.miss.workload_known = resp.workload_known();
  a.miss.records_any_target = resp.records_any_target();
  a.miss.records_this_target = resp.records_this_target();
  a.miss.usable_this_target = resp.usable_this_target();
  a.miss.other_targets.assign(resp.other_targets().begin(), resp.other_targets().end());
  return a;
}

int Query(const std::string& db_path, const FarmClientFlags& farm_flags, const std::string& workload,
          const std::string& target_spec, const std::string& match, bool as_json, bool why) {
  const std::string& farm = farm_flags.options.farm;
  if (db_path.empty() == farm.empty()) throw std::runtime_error("give exactly one of --db and --farm");
  const search::TargetMatch mode = search::ParseTargetMatch(match);
  if (!farm.empty() && mode != search::TargetMatch::kExact)
    throw std::runtime_error("--match compatible is answered from a database file (--db) only");
  const ir::Target asking = ResolveTargetFlag(target_spec);
  const std::string target = asking.ToString();
  ResolvedWorkload w = ResolveWorkload(workload);
  const QueryAnswer found =
      farm.empty() ? LookUpLocal(db_path, w.func, asking, mode) : LookUpFarm(farm_flags, w, target);
  const std::optional<database::TuningRecord>& best = found.best;
  const database::MissReason& miss = found.miss;
  if (as_json) {
    json out = {{"workload", w.label},
                {"workload_hash", ir::StructuralHashHex(w.func)},
                {"target", target},
                {"match", match},
                {"hit", best.has_value()}};
    if (best) {
      out["record"] = database::RecordToJson(*best);
      out["record_target"] = found.record_target;
      out["exact"] = found.exact;
      if (!found.note.empty()) out["note"] = found.note;
    } else {
      out["why"] = miss.Explain();
    }
    if (why) {
      out["records_any_target"] = miss.records_any_target;
      out["records_this_target"] = miss.records_this_target;
      out["usable_this_target"] = miss.usable_this_target;
      out["refused_targets"] = found.refused;
    }
    std::cout << out.dump(2) << "\n";
  } else if (best) {
    std::cout << "hit: " << w.label << " on '" << target << "': median " << best->median_seconds
              << " s (trace " << best->trace_hash << ")\n"
              << best->trace_json << "\n";
    if (!found.note.empty()) std::cout << "note: " << found.note << "\n";
    if (why) {
      std::cout << "record measured for '" << found.record_target << "' ("
                << (found.exact ? "exact match" : "compatible match") << "); "
                << miss.usable_this_target << " usable of " << miss.records_this_target
                << " record(s) for the asked target\n";
      for (const std::string& r : found.refused) std::cout << "not compatible: " << r << "\n";
    }
  } else {
    std::cerr << "miss: " << w.label << " on '" << target << "': " << miss.Explain() << "\n";
    for (const std::string& r : found.refused) std::cerr << "  not compatible: " << r << "\n";
  }
  return best ? 0 : kMissExit;
}

void Stats(const std::string& path, bool as_json) {
  Database db = OpenExisting(path, Database::Mode::kReadOnly);
  database::DatabaseStats st = db.Stats();
  json by_status = json::object();
  for (const auto& [s, n] : st.by_status) by_status[s] = n;
  if (as_json) {
    std::cout << json{{"workloads", st.workloads}, {"targets", st.targets}, {"records", st.records},
                      {"usable_records", st.usable_records}, {"by_status", by_status}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "workloads: " << st.workloads << "\ntargets: " << st.targets
            << "\nrecords: " << st.records << " (" << st.usable_records << " ok and verified)\n";
  for (const auto& [s, n] : st.by_status) std::cout << "  " << s << ": " << n << "\n";
}

void AddDb(CLI::App* cmd, std::string& db) {
  cmd->add_option("--db", db, "Tuning database file")->required();
}

}  // namespace

void RegisterDbCommands(CLI::App& app, int* exit_code) {
  struct QueryArgs {
    std::string db, workload, target, match = "exact";
    FarmClientFlags farm;
    bool json = false, why = false;
  };
  auto q = std::make_shared<QueryArgs>();
  auto* query = app.add_subcommand(
      "query", "Look up the best tuned record for a workload and target (exit 0 hit, 3 miss)");
  query->add_option("--db", q->db, "Tuning database file");
  AddFarmClientFlags(query, q->farm, /*farm_optional=*/true);  // --farm: or a coordinator (its database)
  query->add_option("--workload", q->workload, "Suite name (GMM, GMM:3) or a text file")->required();
  query->add_option("--target", q->target, "Target string, e.g. 'llvm -mcpu=skylake-avx512'")
      ->required();
  query->add_option("--match", q->match,
                    "exact: only records measured for this target; compatible: also records of a "
                    "CPU whose features this target has, with the same core count (exact ones first)")
      ->check(CLI::IsMember({"exact", "compatible"}))
      ->capture_default_str();
  query->add_flag("--json", q->json, "Print JSON");
  query->add_flag("--why", q->why, "Explain the answer with record counts");
  query->callback([=] {
    Guard(exit_code, [&] {
      *exit_code = Query(q->db, q->farm, q->workload, q->target, q->match, q->json, q->why);
    });
  });

  auto* db = app.add_subcommand("db", "Inspect and maintain a tuning database");
  db->require_subcommand(1);

  auto st = std::make_shared<std::pair<std::string, bool>>();
  auto* stats = db->add_subcommand("stats", "Counts of workloads, targets and records by status");
  AddDb(stats, st->first);
  stats->add_flag("--json", st->second, "Print JSON");
  stats->callback([=] { Guard(exit_code, [&] { Stats(st->first, st->second); }); });

  struct TopArgs {
    std::string db, workload, target;
    int k = 5;
  };
  auto t = std::make_shared<TopArgs>();
  auto* top = db->add_subcommand("top", "The k fastest verified records, one JSON line each");
  AddDb(top, t->db);
  top->add_option("--workload", t->workload, "Suite name or a text file")->required();
  top->add_option("--target", t->target, "Target string")->required();
  top->add_option("-k", t->k, "How many (default 5)")->check(CLI::PositiveNumber);
  top->callback([=] {
    Guard(exit_code, [&] {
      Database d = OpenExisting(t->db, Database::Mode::kReadOnly);
      auto id = d.FindWorkload(ResolveWorkload(t->workload).func);
      if (!id) throw std::runtime_error("--workload " + t->workload + ": not in the database");
      // Every stored spelling of the target (search/target_lookup.h), fastest first.
      std::vector<database::TuningRecord> top;
      for (const std::string& spelling : search::StoredSpellings(d, *id, ResolveTargetFlag(t->target))) {
        for (auto& r : d.TopK(*id, spelling, t->k)) top.push_back(std::move(r));
      }
      std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
        return a.median_seconds < b.median_seconds;
      });
      if (static_cast<int>(top.size()) > t->k) top.resize(static_cast<size_t>(t->k));
      for (const auto& r : top) std::cout << database::RecordToJson(r).dump() << "\n";
    });
  });

  struct ExportArgs {
    std::string db, output, format = "kiln", dir;
  };
  auto ex = std::make_shared<ExportArgs>();
  auto* exp = db->add_subcommand(
      "export", "Write every workload and record as JSON lines, or as a TVM MetaSchedule "
                "database in DIR (--format tvm)");
  AddDb(exp, ex->db);
  exp->add_option("-o,--output", ex->output, "Output file (default stdout)");
  exp->add_option("dir", ex->dir, "--format tvm: the directory to write");
  exp->add_option("--format", ex->format, "kiln (Kiln's export) or tvm (MetaSchedule JSON)")
      ->check(CLI::IsMember({"kiln", "tvm"}))
      ->capture_default_str();
  exp->callback([=] {
    Guard(exit_code, [&] {
      if (ex->format == "tvm") {
        if (ex->dir.empty()) throw std::runtime_error("--format tvm needs a directory");
        ExportTvmFiles(ex->db, ex->dir);
        return;
      }
      if (!ex->dir.empty()) throw std::runtime_error("a directory applies to --format tvm only");
      Database d = OpenExisting(ex->db, Database::Mode::kReadOnly);
      if (ex->output.empty() || ex->output == "-") {
        d.ExportJsonLines(std::cout);
        return;
      }
      std::ofstream out(ex->output);
      if (!out) throw std::runtime_error("-o " + ex->output + ": cannot write");
      d.ExportJsonLines(out);
    });
  });

  struct ImportArgs {
    std::string db, format = "kiln", target;
    std::vector<std::string> inputs;
  };
  auto im = std::make_shared<ImportArgs>();
  auto* imp = db->add_subcommand(
      "import", "Add the records of a JSON lines export, or of a TVM MetaSchedule database "
                "(--format tvm), idempotently");
  AddDb(imp, im->db);
  imp->add_option("input", im->inputs,
                  "Export file ('-' reads stdin); with --format tvm: database_workload.json "
                  "database_tuning_record.json")
      ->required();
  imp->add_option("--format", im->format, "kiln (Kiln's export) or tvm (MetaSchedule JSON)")
      ->check(CLI::IsMember({"kiln", "tvm"}))
      ->capture_default_str();
  imp->add_option("--target", im->target,
                  "--format tvm: store the records under this target instead of their own");
  imp->callback([=] {
    Guard(exit_code, [&] {
      if (im->format == "tvm") {
        ImportTvmFiles(im->db, im->inputs, im->target);
        return;
      }
      if (im->inputs.size() != 1) throw std::runtime_error("import takes one export file");
      if (!im->target.empty()) throw std::runtime_error("--target applies to --format tvm only");
      const std::string& input = im->inputs[0];
      Database d = Database::Open(im->db);
      int64_t added;
      if (input == "-") {
        added = d.ImportJsonLines(std::cin);
      } else {
        std::ifstream in(input);
        if (!in) throw std::runtime_error(input + ": cannot read");
        added = d.ImportJsonLines(in);
      }
      search::CanonicalizeStoredTargets(d);
      std::cout << "imported " << added << " new record(s)\n";
    });
  });

  auto pr = std::make_shared<std::pair<std::string, int>>("", 1);
  auto* prune = db->add_subcommand(
      "prune", "Keep the best k verified records per workload and target; delete the rest");
  AddDb(prune, pr->first);
  prune->add_option("-k", pr->second, "How many to keep (default 1)")->check(CLI::NonNegativeNumber);
  prune->callback([=] {
    Guard(exit_code, [&] {
      Database d = OpenExisting(pr->first, Database::Mode::kReadWrite);
      search::CanonicalizeStoredTargets(d);  // one target's spellings are pruned together
      std::cout << "deleted " << d.Prune(pr->second) << " record(s)\n";
    });
  });

  auto mg = std::make_shared<std::pair<std::string, std::vector<std::string>>>();
  auto* merge = db->add_subcommand("merge", "Copy the records of other databases into --db");
  AddDb(merge, mg->first);
  merge->add_option("others", mg->second, "Databases to merge in")->required();
  merge->callback([=] {
    Guard(exit_code, [&] {
      Database d = Database::Open(mg->first);
      for (const auto& other : mg->second) {
        if (!std::ifstream(other)) throw std::runtime_error(other + ": no such file");
        std::cout << other << ": " << d.Merge(other) << " new record(s)\n";
      }
      search::CanonicalizeStoredTargets(d);
    });
  });
}

}  // namespace kiln::tools
