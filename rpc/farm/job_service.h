// kiln.v1.JobService: submit a job and follow it, list jobs, cancel one.
#pragma once

#include "kiln/v1/farm.grpc.pb.h"

namespace kiln::rpc::farm {

class Coordinator;
class JobHandle;

class JobServiceImpl final : public v1::JobService::Service {
 public:
  explicit JobServiceImpl(Coordinator& c) : c_(c) {}
  grpc::Status Submit(grpc::ServerContext* context, const v1::SubmitRequest* request,
                      grpc::ServerWriter<v1::JobEvent>* writer) override;
  grpc::Status Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::JobEvent>* writer) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const v1::CancelJobRequest* request,
                         v1::CancelJobResponse* response) override;

 private:
  Coordinator& c_;
};

// What Submit checks beyond the job file's rules (job_file.h): every
// workload carries its text, which parses and matches its hash; the target
// parses. Normalizes the target in place. Throws std::invalid_argument.
void ValidateSubmittedJob(v1::TuningJob* job);

}  // namespace kiln::rpc::farm
