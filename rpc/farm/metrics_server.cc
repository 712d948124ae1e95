#include "rpc/farm/metrics_server.h"

#include <httplib.h>

#include <stdexcept>

namespace kiln::rpc::farm {

MetricsServer::MetricsServer(const std::string& listen, std::function<std::string()> render)
    : server_(std::make_unique<httplib::Server>()) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--metrics " + listen + ": expected HOST:PORT");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = 0;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
    throw std::runtime_error("--metrics " + listen + ": the port is not a number");
  }
  server_->Get("/metrics", [render](const httplib::Request&, httplib::Response& res) {
    res.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  const int bound = port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0) throw std::runtime_error("--metrics: cannot listen on " + listen);
  address_ = listen.substr(0, colon) + ":" + std::to_string(bound);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace kiln::rpc::farm
