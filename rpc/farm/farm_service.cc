#include "rpc/farm/farm_service.h"

#include "database/database.h"
#include "ir/text/parser.h"
#include "rpc/farm/coordinator.h"

namespace kiln::rpc::farm {

ParsedQuery ParseQueryRequest(const v1::QueryRequest& request) {
  ParsedQuery q;
  try {
    q.workload = ir::ParseFunc(request.workload().text(),
                               request.workload().name().empty() ? "workload" : request.workload().name());
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("workload.text: ") + e.what());
  }
  try {
    q.target = database::NormalizeTarget(request.target().spec());
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("target.spec: ") + e.what());
  }
  return q;
}

grpc::Status FarmServiceImpl::Status(grpc::ServerContext* context, const v1::FarmStatusRequest*,
                                     v1::FarmStatusResponse* response) {
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kStatus, nullptr); !s.ok()) return s;
  *response = c_.dispatcher().Status();
  response->set_jobs_running(c_.JobsRunning());
  return grpc::Status::OK;
}

grpc::Status FarmServiceImpl::Query(grpc::ServerContext* context, const v1::QueryRequest* request,
                                    v1::QueryResponse* response) {
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kQuery, nullptr); !s.ok()) return s;
  try {
    *response = c_.Query(*request);
  } catch (const std::invalid_argument& e) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
  return grpc::Status::OK;
}

}  // namespace kiln::rpc::farm
