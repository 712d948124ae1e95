// The farm's security over loopback with real TLS: a CA and certificates
// made with the `openssl` command for each test, a real `kiln farm serve`
// with an auth file, real clients (the kiln CLI, and raw gRPC streams that
// play workers, honest or not). Every refusal has its status code and
// leaves the database without jobs or records.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "codegen/llvm_backend.h"
#include "database/database.h"
#include "ir/text/printer.h"
#include "kiln/v1/farm.grpc.pb.h"
#include "rpc/farm/farm_client.h"
#include "tests/common/reduced_suite.h"
#include "tests/rpc/farm_cluster.h"

namespace {

using kiln::testing::FarmCluster;
using kiln::testing::KilnResult;
using kiln::testing::ReadAll;
using kiln::testing::RunKilnBounded;
using kiln::testing::TempFile;
namespace farm = kiln::rpc::farm;
namespace v1 = kiln::v1;

const std::string kTarget = "llvm -num-cores=1";
const std::string kWorkerA = "worker-a-token-0123456789abcdef";
const std::string kWorkerB = "worker-b-token-0123456789abcdef";
const std::string kSubmit = "submit-token-0123456789abcdef";
const std::string kRead = "read-token-0123456789abcdef";
const std::string kAdmin = "admin-token-0123456789abcdef";

std::string SmallGmmText() {
  for (const auto& c : kiln::testing::ReducedSuite()) {
    if (std::string(c.name) == "GMM") return kiln::ir::ToText(c.make());
  }
  return "";
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// A CA, a server certificate for 127.0.0.1 and a client certificate, all
// made here with openssl (EC keys: fast).
bool MakeCertificates(const FarmCluster& f) {
  const std::string d = f.path("");
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  WriteFile(d + "server.ext", "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n");
  WriteFile(d + "client.ext", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n");
  return Sh("cd " + d + " && openssl req -x509 " + key + " -keyout ca.key -out ca.pem -days 2 -subj /CN=kiln-test-ca") &&
         Sh("cd " + d + " && openssl req " + key + " -keyout server.key -out server.csr -subj /CN=localhost") &&
         Sh("cd " + d + " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
                        "-out server.pem -extfile server.ext") &&
         Sh("cd " + d + " && openssl req " + key + " -keyout client.key -out client.csr -subj /CN=worker-a") &&
         Sh("cd " + d + " && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
                        "-out client.pem -extfile client.ext");
}

std::string AuthFile(bool with_b = true) {
  return "# test principals\n"
         "worker-a worker " + kWorkerA + "\n" +
         (with_b ? "worker-b worker " + kWorkerB + "\n" : std::string()) +
         "alice submit " + kSubmit + "\n"
         "reader read " + kRead + "\n"
         "root admin " + kAdmin + "\n";
}

class FarmSecurity : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("KILN_TOKEN");
    ASSERT_TRUE(MakeCertificates(farm_)) << "openssl could not make the test certificates";
    WriteFile(farm_.path("auth.txt"), AuthFile());
    for (const auto& [name, token] : std::vector<std::pair<std::string, std::string>>{
             {"a", kWorkerA}, {"b", kWorkerB}, {"submit", kSubmit}, {"read", kRead}, {"admin", kAdmin},
             {"wrong", "not-a-token-of-this-farm-0000"}}) {
      WriteFile(farm_.path(name + ".token"), token + "\n");
    }
  }
  std::string Tls() const {
    return "--tls-cert " + farm_.path("server.pem") + " --tls-key " + farm_.path("server.key");
  }
  bool Start(const std::string& extra = "") {
    return farm_.StartCoordinator("--threads 1 --auth " + farm_.path("auth.txt") + " " + extra, "127.0.0.1:0",
                                  Tls());
  }
  // A client's TLS and token flags.
  std::string Client(const std::string& token) const {
    std::string s = " --ca " + farm_.path("ca.pem") + " --farm " + farm_.address();
    if (!token.empty()) s += " --token-file " + farm_.path(token + ".token");
    return s;
  }
  farm::FarmClientOptions ClientOptions(const std::string& token) const {
    farm::FarmClientOptions o;
    o.farm = farm_.address();
    o.ca_file = farm_.path("ca.pem");
    o.token = token;
    return o;
  }
  // Jobs and records in the coordinator's database.
  std::pair<size_t, int64_t> Stored() const {
    kiln::database::Database db =
        kiln::database::Database::Open(farm_.db(), kiln::database::Database::Mode::kReadOnly);
    return {db.Jobs().size(), db.Size()};
  }
  std::string Sql(const std::string& query) const {
    sqlite3* s = nullptr;
    std::string out;
    if (sqlite3_open_v2(farm_.db().c_str(), &s, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return "?";
    sqlite3_exec(
        s, query.c_str(),
        [](void* o, int n, char** v, char**) {
          for (int i = 0; i < n; ++i) *static_cast<std::string*>(o) += std::string(v[i] ? v[i] : "") + ";";
          return 0;
        },
        &out, nullptr);
    sqlite3_close(s);
    return out;
  }

  FarmCluster farm_{"security"};
};

// A worker's stream played by the test.
class RawWorker {
 public:
  RawWorker(const farm::FarmClientOptions& o, const std::string& name) : name_(name) {
    stub_ = v1::WorkerService::NewStub(farm::DialFarm(o));
    farm::PrepareCall(o, &context_, /*deadline=*/false);
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    stream_ = stub_->Work(&context_);
  }
  // Says hello; true once registered.
  bool Register(const std::string& simulated = "") {
    v1::WorkerMessage hello;
    hello.mutable_hello()->set_name(name_);
    // As `kiln worker --target` resolves it, so that the job finds the pool.
    hello.mutable_hello()->add_targets()->set_spec(kiln::codegen::ResolveTarget(kTarget).ToString());
    hello.mutable_hello()->set_fingerprint("test-fingerprint");
    hello.mutable_hello()->set_slots(1);
    hello.mutable_hello()->set_simulated(simulated);
    v1::CoordinatorMessage m;
    return stream_->Write(hello) && stream_->Read(&m) && m.has_registered();
  }
  bool ReadLease(v1::Lease* lease) {
    v1::CoordinatorMessage m;
    while (stream_->Read(&m)) {
      if (m.has_lease()) {
        *lease = m.lease();
        return true;
      }
    }
    return false;
  }
  bool PostOk(int64_t lease_id, double seconds, const std::string& message = "") {
    v1::WorkerMessage m;
    m.mutable_result()->set_lease_id(lease_id);
    m.mutable_result()->mutable_result()->set_status(v1::MEASURE_STATUS_OK);
    m.mutable_result()->mutable_result()->add_run_seconds(seconds);
    m.mutable_result()->mutable_result()->set_message(message);
    return stream_->Write(m);
  }
  bool Heartbeat() {
    v1::WorkerMessage m;
    m.mutable_heartbeat();
    return stream_->Write(m);
  }
  // Waits for the coordinator to end the stream; its status.
  grpc::Status End() {
    v1::CoordinatorMessage m;
    while (stream_->Read(&m)) {
    }
    return stream_->Finish();
  }
  void Close() {
    stream_->WritesDone();
    context_.TryCancel();
    stream_->Finish();
  }

 private:
  std::string name_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerMessage, v1::CoordinatorMessage>> stream_;
};

bool Has(const KilnResult& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

// HTTP GET of /metrics (plain HTTP/1.0 over a socket).
std::string GetMetrics(const std::string& address) {
  const size_t colon = address.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &a.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return "";
  }
  const std::string req = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
  (void)!write(fd, req.data(), req.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST_F(FarmSecurity, CallsWithoutTheRightTokenRoleOrTlsAreRefusedAndCommitNothing) {
  ASSERT_TRUE(Start("--metrics 127.0.0.1:0")) << farm_.Logs();
  TempFile workload(SmallGmmText());
  const std::string job = " --workload " + workload.path() + " --target '" + kTarget + "' --trials 2 --detach";

  KilnResult none = RunKilnBounded("submit" + Client("") + job, 60);
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_TRUE(Has(none, "(UNAUTHENTICATED)")) << none.out;

  KilnResult wrong = RunKilnBounded("submit" + Client("wrong") + job, 60);
  EXPECT_EQ(wrong.code, 1) << wrong.out;
  EXPECT_TRUE(Has(wrong, "(UNAUTHENTICATED)")) << wrong.out;
  EXPECT_FALSE(Has(wrong, "not-a-token-of-this-farm")) << wrong.out;

  KilnResult role = RunKilnBounded("submit" + Client("a") + job, 60);
  EXPECT_EQ(role.code, 1) << role.out;
  EXPECT_TRUE(Has(role, "(PERMISSION_DENIED)")) << role.out;
  KilnResult reader = RunKilnBounded("submit" + Client("read") + job, 60);
  EXPECT_TRUE(Has(reader, "(PERMISSION_DENIED)")) << reader.out;
  KilnResult query = RunKilnBounded("query --workload " + workload.path() + " --target '" + kTarget + "'" +
                                    Client("a"), 60);
  EXPECT_TRUE(Has(query, "(PERMISSION_DENIED)")) << query.out;

  // Plaintext against TLS, and TLS without the farm's CA: no connection.
  KilnResult plain = RunKilnBounded("submit --insecure --farm " + farm_.address() + " --token-file " +
                                    farm_.path("submit.token") + job + " --rpc-timeout 5", 60);
  EXPECT_EQ(plain.code, 1) << plain.out;
  EXPECT_TRUE(Has(plain, "(UNAVAILABLE)")) << plain.out;
  KilnResult no_ca = RunKilnBounded("farm status --farm " + farm_.address() + " --token-file " +
                                    farm_.path("read.token") + " --rpc-timeout 5", 60);
  EXPECT_EQ(no_ca.code, 1) << no_ca.out;
  EXPECT_TRUE(Has(no_ca, "(UNAVAILABLE)")) << no_ca.out;

  // A worker token cannot work with a forged job either: nothing stored.
  EXPECT_EQ(Stored(), (std::pair<size_t, int64_t>{0, 0}));

  // The right role passes; the health service answers; metrics count the
  // refusals by reason and never show a token.
  KilnResult status = RunKilnBounded("farm status --json" + Client("read"), 60);
  EXPECT_EQ(status.code, 0) << status.out;
  KilnResult health = RunKilnBounded("farm health" + Client(""), 60);
  EXPECT_EQ(health.code, 0) << health.out;
  EXPECT_TRUE(Has(health, "SERVING")) << health.out;
  ASSERT_FALSE(farm_.metrics_address().empty()) << farm_.Logs();
  const std::string metrics = GetMetrics(farm_.metrics_address());
  EXPECT_NE(metrics.find("kiln_farm_refused_total{reason=\"no_token\"}"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("kiln_farm_refused_total{reason=\"bad_token\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("kiln_farm_refused_total{reason=\"role\"} 3"), std::string::npos) << metrics;
  const std::string logs = farm_.Logs();
  for (const std::string& t : {kWorkerA, kSubmit, kRead, std::string("not-a-token-of-this-farm")}) {
    EXPECT_EQ(metrics.find(t), std::string::npos);
    EXPECT_EQ(logs.find(t), std::string::npos) << logs;
  }
}

TEST_F(FarmSecurity, AForgedResultForAnotherWorkersLeaseIsRefusedAndNothingIsCommitted) {
  ASSERT_TRUE(Start("--metrics 127.0.0.1:0")) << farm_.Logs();
  RawWorker a(ClientOptions(kWorkerA), "a");
  RawWorker b(ClientOptions(kWorkerB), "b");
  ASSERT_TRUE(a.Register());
  ASSERT_TRUE(b.Register());
  TempFile workload(SmallGmmText());
  KilnResult sub = RunKilnBounded("submit --workload " + workload.path() + " --target '" + kTarget +
                                  "' --trials 2 --trials-per-iter 2 --detach" + Client("submit"), 60);
  ASSERT_EQ(sub.code, 0) << sub.out << farm_.Logs();

  v1::Lease held_by_b;
  ASSERT_TRUE(b.ReadLease(&held_by_b)) << farm_.Logs();
  // a answers b's lease: refused, and a's stream ends.
  ASSERT_TRUE(a.PostOk(held_by_b.lease_id(), 1e-9));
  grpc::Status forged = a.End();
  EXPECT_EQ(forged.error_code(), grpc::StatusCode::PERMISSION_DENIED) << forged.error_message();

  // A lease never issued, a malformed result, an oversized message.
  RawWorker c(ClientOptions(kWorkerA), "c");
  ASSERT_TRUE(c.Register());
  ASSERT_TRUE(c.PostOk(987654321, 1e-9));
  EXPECT_EQ(c.End().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  RawWorker d(ClientOptions(kWorkerA), "d");
  ASSERT_TRUE(d.Register());
  ASSERT_TRUE(d.PostOk(held_by_b.lease_id(), -1.0));  // negative time
  EXPECT_EQ(d.End().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  RawWorker e(ClientOptions(kWorkerA), "e");
  ASSERT_TRUE(e.Register());
  e.PostOk(held_by_b.lease_id(), 1e-3, std::string(5 << 20, 'x'));  // over the 4 MiB a worker may send
  EXPECT_EQ(e.End().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  // Nothing was committed for the lease (b has not answered).
  EXPECT_EQ(Stored().second, 0);
  const std::string metrics = GetMetrics(farm_.metrics_address());
  EXPECT_NE(metrics.find("kiln_farm_refused_total{reason=\"foreign_lease\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("kiln_farm_refused_total{reason=\"unknown_lease\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("kiln_farm_refused_total{reason=\"invalid\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("kiln_farm_refused_total{reason=\"too_large\"} 1"), std::string::npos) << metrics;

  // b's honest answers (its lease, then the other candidate, re-queued when
  // the refused workers left) are committed, under the job's principal.
  ASSERT_TRUE(b.PostOk(held_by_b.lease_id(), 1e-3));
  v1::Lease second;
  ASSERT_TRUE(b.ReadLease(&second)) << farm_.Logs();
  EXPECT_NE(second.lease_id(), held_by_b.lease_id());
  ASSERT_TRUE(b.PostOk(second.lease_id(), 2e-3));
  for (int i = 0; i < 200 && Stored().second < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Stored().second, 2);
  EXPECT_EQ(Sql("SELECT DISTINCT principal FROM records"), "alice;");
  EXPECT_EQ(Sql("SELECT principal FROM jobs"), "alice;");
  b.Close();
}

TEST_F(FarmSecurity, ASubmitterWatchesAndCancelsOnlyItsOwnJobs) {
  WriteFile(farm_.path("auth.txt"), AuthFile() + "bob submit bob-token-0123456789abcdef\n");
  WriteFile(farm_.path("bob.token"), "bob-token-0123456789abcdef\n");
  ASSERT_TRUE(Start()) << farm_.Logs();
  TempFile workload(SmallGmmText());
  KilnResult sub = RunKilnBounded("submit --workload " + workload.path() + " --target '" + kTarget +
                                  "' --trials 2 --detach" + Client("submit"), 60);
  ASSERT_EQ(sub.code, 0) << sub.out;
  KilnResult bob = RunKilnBounded("jobs cancel 1" + Client("bob"), 60);
  EXPECT_EQ(bob.code, 1) << bob.out;
  EXPECT_TRUE(Has(bob, "(PERMISSION_DENIED)")) << bob.out;
  // Listing: bob sees none of alice's jobs; alice and the admin see hers.
  KilnResult bob_list = RunKilnBounded("jobs --json" + Client("bob"), 60);
  ASSERT_EQ(bob_list.code, 0) << bob_list.out;
  EXPECT_FALSE(Has(bob_list, "\"id\"")) << bob_list.out;
  for (const char* who : {"submit", "admin"}) {
    KilnResult list = RunKilnBounded(std::string("jobs --json") + Client(who), 60);
    ASSERT_EQ(list.code, 0) << who << ": " << list.out;
    EXPECT_TRUE(Has(list, "\"id\"")) << who << ": " << list.out;
  }
  KilnResult admin = RunKilnBounded("jobs cancel 1" + Client("admin"), 60);
  EXPECT_EQ(admin.code, 0) << admin.out;
  EXPECT_TRUE(Has(admin, "cancelled")) << admin.out;
}

TEST_F(FarmSecurity, SighupReloadsTokensAndKeepsWorkersWhoseTokensRemain) {
  ASSERT_TRUE(Start()) << farm_.Logs();
  RawWorker a(ClientOptions(kWorkerA), "a");
  RawWorker b(ClientOptions(kWorkerB), "b");
  ASSERT_TRUE(a.Register());
  ASSERT_TRUE(b.Register());

  // A malformed file is refused; the old principals stay.
  WriteFile(farm_.path("auth.txt"), "worker-a worker\n");
  ASSERT_EQ(::kill(farm_.coordinator(), SIGHUP), 0);
  bool said = false;
  for (int i = 0; i < 100 && !said; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    said = ReadAll(farm_.path("coordinator0.log")).find("auth.txt:1:") != std::string::npos;
  }
  EXPECT_TRUE(said) << farm_.Logs();

  // worker-b's token goes: its stream ends, worker-a's stays.
  WriteFile(farm_.path("auth.txt"), AuthFile(/*with_b=*/false));
  ASSERT_EQ(::kill(farm_.coordinator(), SIGHUP), 0);
  grpc::Status ended = b.End();
  EXPECT_FALSE(ended.ok());
  EXPECT_TRUE(a.Heartbeat());
  nlohmann::json st;
  for (int i = 0; i < 50; ++i) {  // until the coordinator has removed b
    KilnResult status = RunKilnBounded("farm status --json" + Client("admin"), 60);
    ASSERT_EQ(status.code, 0) << status.out;
    st = nlohmann::json::parse(status.out);
    if (st["workers"].size() == 1u) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(st["workers"].size(), 1u) << st.dump();
  EXPECT_EQ(st["workers"][0]["info"]["name"], "a");
  // And b cannot come back.
  RawWorker again(ClientOptions(kWorkerB), "b again");
  EXPECT_FALSE(again.Register());
  EXPECT_EQ(again.End().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  a.Close();
}

TEST_F(FarmSecurity, MutualTlsWantsAClientCertificate) {
  ASSERT_TRUE(farm_.StartCoordinator("--threads 1 --client-ca " + farm_.path("ca.pem"), "127.0.0.1:0", Tls()))
      << farm_.Logs();
  KilnResult without = RunKilnBounded("farm status --rpc-timeout 5" + Client(""), 60);
  EXPECT_EQ(without.code, 1) << without.out;
  EXPECT_TRUE(Has(without, "(UNAVAILABLE)")) << without.out;
  KilnResult with = RunKilnBounded("farm status" + Client("") + " --cert " + farm_.path("client.pem") + " --key " +
                                   farm_.path("client.key"), 60);
  EXPECT_EQ(with.code, 0) << with.out;
}

TEST_F(FarmSecurity, SimulatedWorkersAreRefusedUnlessTheCoordinatorAllowsThem) {
  ASSERT_TRUE(Start()) << farm_.Logs();
  KilnResult w = RunKilnBounded("worker --target '" + kTarget + "' --simulate fixed:1ms" + Client("a"), 60);
  EXPECT_EQ(w.code, 1) << w.out;
  EXPECT_TRUE(Has(w, "SIMULATED")) << w.out;
  EXPECT_TRUE(Has(w, "(FAILED_PRECONDITION)")) << w.out;
  EXPECT_TRUE(Has(w, "--allow-simulated")) << w.out;
}

TEST(FarmSecurityFlags, PlaintextOnANonLoopbackAddressIsRefused) {
  FarmCluster f("flags");
  KilnResult r = RunKilnBounded("farm serve --insecure --listen 0.0.0.0:0 --db " + f.db(), 30);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(Has(r, "--insecure-any-address")) << r.out;
  KilnResult none = RunKilnBounded("farm serve --listen 127.0.0.1:0 --db " + f.db(), 30);
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_TRUE(Has(none, "--insecure for plaintext")) << none.out;
}

}  // namespace
