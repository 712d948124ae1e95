#include "report/workload_names.h"

#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "ir/structural_hash.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/workloads/suite.h"

namespace kiln::report {
namespace {

// Every buffer a block of the program declares it writes.
void CollectWrites(const ir::Stmt& s, std::unordered_set<const ir::BufferNode*>* out) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case ir::StmtKind::kFor:
      CollectWrites(s.as<ir::ForNode>()->body, out);
      return;
    case ir::StmtKind::kBlockRealize: {
      const ir::BlockNode* b = s.as<ir::BlockRealizeNode>()->block.get();
      for (const ir::BufferRegion& w : b->writes) out->insert(w.buffer.get());
      if (b->init) CollectWrites(*b->init, out);
      CollectWrites(b->body, out);
      return;
    }
    case ir::StmtKind::kSeqStmt:
      for (const ir::Stmt& c : s.as<ir::SeqStmtNode>()->seq) CollectWrites(c, out);
      return;
    case ir::StmtKind::kIfThenElse:
      CollectWrites(s.as<ir::IfThenElseNode>()->then_case, out);
      CollectWrites(s.as<ir::IfThenElseNode>()->else_case, out);
      return;
    default:
      return;
  }
}

std::string WithShape(const ir::Buffer& b) {
  std::string out = b->name + "[";
  for (size_t i = 0; i < b->shape.size(); ++i) {
    if (i > 0) out += ",";
    out += ir::ToText(b->shape[i]);
  }
  return out + "]";
}

}  // namespace

std::map<std::string, std::string> KnownWorkloadNames(const database::Database& db) {
  std::map<std::string, std::string> names;
  // Jobs first: a job's spec is what its submitter called the workload. A
  // database older than the jobs table has none.
  std::vector<database::JobRow> jobs;
  try {
    jobs = db.Jobs();
  } catch (const database::DatabaseError&) {
  }
  for (const database::JobRow& job : jobs) {
    const nlohmann::json spec =
        nlohmann::json::parse(job.spec, nullptr, /*allow_exceptions=*/false);
    if (!spec.is_object() || !spec.contains("workloads") || !spec["workloads"].is_array()) continue;
    for (const nlohmann::json& w : spec["workloads"]) {
      // A job spec is the farm's to define: one this code cannot read only
      // loses its names.
      try {
        if (!w.is_object() || !w.value("spec", nlohmann::json()).is_string()) continue;
        const nlohmann::json wl = w.value("workload", nlohmann::json::object());
        std::string hash = wl.is_object() ? wl.value("structuralHash", std::string()) : "";
        if (hash.empty() && wl.is_object() && wl.value("text", nlohmann::json()).is_string()) {
          hash =
              ir::StructuralHashHex(ir::ParseFunc(wl["text"].get<std::string>(), "job workload"));
        }
        if (!hash.empty()) names.emplace(hash, w["spec"].get<std::string>());
      } catch (const std::exception&) {
      }
    }
  }
  for (const ir::WorkloadConfig& c : ir::SuiteConfigs()) {
    names.emplace(ir::StructuralHashHex(ir::MakeWorkload(c.name, c.index)),
                  c.name + ":" + std::to_string(c.index));
  }
  return names;
}

std::string BufferSignature(const ir::PrimFunc& func) {
  std::unordered_set<const ir::BufferNode*> written;
  CollectWrites(func.body, &written);
  std::string in, out;
  for (const ir::Buffer& p : func.params) {
    std::string& side = written.count(p.get()) ? out : in;
    side += (side.empty() ? "" : ", ") + WithShape(p);
  }
  return out.empty() ? in : in + " -> " + out;
}

std::string WorkloadLabel(const database::Database& db,
                          const std::map<std::string, std::string>& known,
                          const std::string& hash) {
  if (auto it = known.find(hash); it != known.end()) return it->second;
  // A label is for people: a workload whose text no longer parses still gets one.
  try {
    const std::vector<database::WorkloadId> ids = db.FindWorkloadsByHash(hash);
    if (!ids.empty()) {
      return BufferSignature(ir::ParseFunc(db.WorkloadText(ids.front()), "workload " + hash));
    }
  } catch (const std::exception&) {
  }
  return "workload " + hash.substr(0, 16);
}

}  // namespace kiln::report
