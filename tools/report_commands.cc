// kiln report: a database's tuning runs as one self-contained HTML page
// (report/report_page.h), or one workload's tuning curve as SVG; and
// `kiln db peer add|list`, which store the peer figures the page compares
// against.
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "database/database.h"
#include "report/report_data.h"
#include "report/report_page.h"
#include "report/svg_chart.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/target_spec.h"
#include "tools/workload_spec.h"

namespace kiln::tools {
namespace {

using database::Database;

struct ReportOptions {
  std::string db;
  std::string workload;
  std::string target;
  std::string job;
  std::string out;
  std::string svg;
};

Database OpenForReading(const std::string& path) {
  if (!std::ifstream(path)) throw std::runtime_error("--db " + path + ": no such file");
  return Database::Open(path, Database::Mode::kReadOnly);
}

std::string TargetFilter(const std::string& spec) {
  return spec.empty() ? "" : database::NormalizeTarget(ResolveTargetFlag(spec).ToString());
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << text;
  if (!out.flush()) throw std::runtime_error(path + ": write failed");
}

std::string NowText() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

int RunReport(const ReportOptions& o) {
  if (o.out.empty() && o.svg.empty())
    throw std::runtime_error("report: give -o FILE.html, --svg FILE.svg or both");
  Database db = OpenForReading(o.db);
  report::ReportFilter filter;
  std::string scope;
  if (!o.workload.empty()) {
    ResolvedWorkload w = ResolveWorkload(o.workload);
    filter.workload = db.FindWorkload(w.func);
    if (!filter.workload)
      throw std::runtime_error("report: " + o.db + " holds no workload " + w.label);
    filter.workload_label = w.label;
    scope = "workload " + w.label;
  }
  filter.target = TargetFilter(o.target);
  if (!filter.target.empty())
    scope += (scope.empty() ? "" : ", ") + std::string("target ") + filter.target;
  filter.job_id = o.job;
  if (!o.job.empty()) scope += (scope.empty() ? "" : ", ") + std::string("job ") + o.job;
  if (scope.empty()) scope = "every record";

  std::vector<report::WorkloadSection> sections = report::CollectSections(db, filter);
  if (sections.empty()) throw std::runtime_error("report: no records in " + o.db + " for " + scope);
  if (!o.svg.empty()) {
    if (sections.size() > 1) {
      std::string names;
      for (const auto& s : sections) names += "\n  " + s.name + " on '" + s.target + "'";
      throw std::runtime_error(
          "report --svg draws one workload's curve; " + o.db + " has " +
          std::to_string(sections.size()) +
          " workload/target pairs here (choose with --workload and --target):" + names);
    }
    WriteFile(o.svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
                         report::CurveSvg(sections[0]) + "\n");
    std::cerr << "kiln: wrote the tuning curve of " << sections[0].name << " to " << o.svg << "\n";
  }
  if (!o.out.empty()) {
    WriteFile(o.out, report::ReportHtml(sections, {o.db, scope, NowText()}));
    size_t records = 0;
    for (const auto& s : sections) records += s.records.size();
    std::cerr << "kiln: wrote " << o.out << ": " << sections.size() << " workload/target pair(s), "
              << records << " records\n";
  }
  return 0;
}

struct PeerOptions {
  std::string db;
  std::string workload;
  std::string target = "host";
  std::string name;
  double seconds = 0;
  std::string note;
  bool json = false;
};

void RegisterPeerCommands(CLI::App& app, int* exit_code) {
  CLI::App* db = app.get_subcommand("db");
  auto* peer = db->add_subcommand(
      "peer", "Peer figures: another implementation's time, for kiln report's ratio");
  peer->require_subcommand(1);
  auto o = std::make_shared<PeerOptions>();
  auto* add =
      peer->add_subcommand("add", "Store (or replace) a peer's time for a workload on a target");
  add->add_option("--db", o->db, "Tuning database")->required();
  add->add_option("--workload,-w", o->workload, "Suite name (GMM:2) or a text file")->required();
  add->add_option("--target", o->target, "Target the peer was timed on")->capture_default_str();
  add->add_option("--name", o->name, "The peer, e.g. openblas-sgemm")->required();
  add->add_option("--seconds", o->seconds, "The peer's time for one call, in seconds")
      ->required()
      ->check(CLI::PositiveNumber);
  add->add_option("--note", o->note, "How it was measured");
  add->callback([o, exit_code] {
    try {
      ResolvedWorkload w = ResolveWorkload(o->workload);
      Database db = Database::Open(o->db);
      const database::WorkloadId id = db.CommitWorkload(w.func);
      database::PeerFigure p{ResolveTargetFlag(o->target).ToString(), o->name, o->seconds, o->note,
                             static_cast<int64_t>(std::time(nullptr))};
      db.SetPeer(id, p);
      std::cout << "peer " << o->name << " for " << w.label << " on '"
                << database::NormalizeTarget(p.target) << "': " << report::FormatSeconds(o->seconds)
                << "\n";
    } catch (const std::exception& e) {
      std::cerr << "kiln: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
  auto l = std::make_shared<PeerOptions>();
  auto* list = peer->add_subcommand("list", "Print the peer figures of a workload");
  list->add_option("--db", l->db, "Tuning database")->required();
  list->add_option("--workload,-w", l->workload, "Suite name (GMM:2) or a text file")->required();
  list->add_flag("--json", l->json, "Print JSON");
  list->callback([l, exit_code] {
    try {
      ResolvedWorkload w = ResolveWorkload(l->workload);
      Database db = OpenForReading(l->db);
      std::vector<database::PeerFigure> peers;
      if (auto id = db.FindWorkload(w.func)) peers = db.Peers(*id);
      nlohmann::json out = nlohmann::json::array();
      for (const auto& p : peers) {
        out.push_back({{"target", p.target},
                       {"name", p.name},
                       {"seconds", p.seconds},
                       {"note", p.note},
                       {"timestamp", p.timestamp}});
        if (!l->json) {
          std::cout << p.name << "\t" << p.target << "\t" << report::FormatSeconds(p.seconds)
                    << "\t" << p.note << "\n";
        }
      }
      if (l->json) std::cout << out.dump(2) << "\n";
    } catch (const std::exception& e) {
      std::cerr << "kiln: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace

void RegisterReportCommands(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand(
      "report", "Write a tuning report: one self-contained HTML page per database or job");
  cmd->add_option("--db", o->db, "Tuning database")->required();
  cmd->add_option("--workload,-w", o->workload, "Only this workload (suite name or text file)");
  cmd->add_option("--target", o->target, "Only records of this target ('host' or a target string)");
  cmd->add_option("--job", o->job,
                  "Only the records of this farm job (its id, as kiln jobs lists)");
  cmd->add_option("-o,--output", o->out, "The HTML page to write");
  cmd->add_option("--svg", o->svg,
                  "Write the tuning curve alone as SVG (needs a single workload and target)");
  cmd->callback([o, exit_code] { Guard(exit_code, [&] { return RunReport(*o); }); });
  RegisterPeerCommands(app, exit_code);
}

}  // namespace kiln::tools
