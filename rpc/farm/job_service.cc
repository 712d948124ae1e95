#include "rpc/farm/job_service.h"

#include "codegen/target_features.h"

#include "ir/text/parser.h"
#include "ir/structural_hash.h"
#include "ir/target.h"
#include "rpc/farm/coordinator.h"
#include "rpc/farm/job_file.h"

namespace kiln::rpc::farm {
namespace {

// Streams a job's events until it is done or the client goes away (which
// detaches: the job goes on).
grpc::Status StreamEvents(grpc::ServerContext* context, JobHandle& job, grpc::ServerWriter<v1::JobEvent>* writer) {
  int64_t version = 0;
  v1::JobEvent e;
  while (!context->IsCancelled()) {
    if (!job.NextEvent(&version, &e, 500)) continue;
    if (!writer->Write(e)) break;
    if (e.done()) break;
  }
  return grpc::Status::OK;
}

// A submit principal may watch and cancel only its own jobs; admin any.
grpc::Status CheckOwner(Coordinator& c, const Caller& caller, int64_t job_id) {
  if (caller.role != Role::kSubmit) return grpc::Status::OK;
  std::optional<std::string> owner = c.JobOwner(job_id);
  if (!owner) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no job " + std::to_string(job_id));
  if (*owner != caller.principal) {
    c.metrics().Refused("not_owner");
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "job " + std::to_string(job_id) + " is not principal '" + caller.principal + "''s");
  }
  return grpc::Status::OK;
}

}  // namespace

void ValidateSubmittedJob(v1::TuningJob* job) {
  try {
    ValidateJob(*job);
  } catch (const JobFileError& e) {
    throw std::invalid_argument(e.what());
  }
  for (int i = 0; i < job->workloads_size(); ++i) {
    const v1::Workload& w = job->workloads(i).workload();
    const std::string where = "workloads[" + std::to_string(i) + "].workload";
    if (w.text().empty()) throw std::invalid_argument(where + ".text: empty (the client resolves specs)");
    ir::PrimFunc f;
    try {
      f = ir::ParseFunc(w.text(), w.name().empty() ? where : w.name());
    } catch (const std::exception& e) {
      throw std::invalid_argument(where + ".text: " + e.what());
    }
    if (!w.structural_hash().empty() && w.structural_hash() != ir::StructuralHashHex(f)) {
      throw std::invalid_argument(where + ".structural_hash: " + w.structural_hash() + ", the text hashes to " +
                                  ir::StructuralHashHex(f));
    }
    job->mutable_workloads(i)->mutable_workload()->set_structural_hash(ir::StructuralHashHex(f));
  }
  try {
    // Canonical, as workers register theirs (codegen/target_features.h), so
    // that any spelling of a target finds its pool.
    job->mutable_target()->set_spec(
        codegen::CanonicalTarget(ir::Target::Parse(job->target().spec())).ToString());
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("target.spec: ") + e.what());
  }
}

grpc::Status JobServiceImpl::Submit(grpc::ServerContext* context, const v1::SubmitRequest* request,
                                    grpc::ServerWriter<v1::JobEvent>* writer) {
  Caller caller;
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kSubmit, &caller); !s.ok()) return s;
  StreamTicket ticket(c_.gate(), context, CallKind::kSubmit, caller);
  v1::TuningJob job = request->job();
  try {
    ValidateSubmittedJob(&job);
  } catch (const std::invalid_argument& e) {
    c_.metrics().Refused("invalid");
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
  }
  if (c_.JobsRunning() >= c_.options().max_jobs) {
    c_.metrics().Refused("too_many");
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "the farm has its maximum of " + std::to_string(c_.options().max_jobs) + " unfinished jobs");
  }
  JobHandle* h = nullptr;
  try {
    h = c_.SubmitJob(job, caller.principal);
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
  return StreamEvents(context, *h, writer);
}

grpc::Status JobServiceImpl::Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                                   grpc::ServerWriter<v1::JobEvent>* writer) {
  Caller caller;
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kWatch, &caller); !s.ok()) return s;
  if (grpc::Status s = CheckOwner(c_, caller, request->job_id()); !s.ok()) return s;
  StreamTicket ticket(c_.gate(), context, CallKind::kWatch, caller);
  JobHandle* h = c_.FindJob(request->job_id());
  if (h == nullptr) {
    // A job this coordinator does not run: report its stored state once.
    for (const v1::JobInfo& info : c_.ListJobs()) {
      if (info.id() != request->job_id()) continue;
      v1::JobEvent e;
      e.set_job_id(info.id());
      e.set_state(info.state());
      e.set_message(info.message());
      e.set_done(true);
      writer->Write(e);
      return grpc::Status::OK;
    }
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no job " + std::to_string(request->job_id()));
  }
  return StreamEvents(context, *h, writer);
}

grpc::Status JobServiceImpl::ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest*,
                                      v1::ListJobsResponse* response) {
  Caller caller;
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kListJobs, &caller); !s.ok()) return s;
  // As CheckOwner: a submitter sees its own jobs; read and admin see all.
  const std::string* owner = caller.role == Role::kSubmit ? &caller.principal : nullptr;
  for (v1::JobInfo& info : c_.ListJobs(owner)) *response->add_jobs() = std::move(info);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::CancelJob(grpc::ServerContext* context, const v1::CancelJobRequest* request,
                                       v1::CancelJobResponse* response) {
  Caller caller;
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kCancelJob, &caller); !s.ok()) return s;
  if (grpc::Status s = CheckOwner(c_, caller, request->job_id()); !s.ok()) return s;
  std::optional<v1::JobInfo> info = c_.CancelJob(request->job_id());
  if (!info) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no job " + std::to_string(request->job_id()));
  *response->mutable_job() = std::move(*info);
  return grpc::Status::OK;
}

}  // namespace kiln::rpc::farm
