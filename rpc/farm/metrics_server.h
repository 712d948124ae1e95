// A plain-HTTP endpoint for Prometheus: GET /metrics answers the
// coordinator's FarmMetrics text (`kiln farm serve --metrics ADDR`). It
// carries no tokens and no records, only counts; bind it to an address
// your scraper reaches (loopback by default in the README's examples).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace kiln::rpc::farm {

class MetricsServer {
 public:
  // Binds HOST:PORT (port 0: a free one) and serves `render()` on its own
  // thread. Throws std::runtime_error when it cannot bind.
  MetricsServer(const std::string& listen, std::function<std::string()> render);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  // HOST:PORT it listens on.
  const std::string& address() const { return address_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string address_;
};

}  // namespace kiln::rpc::farm
