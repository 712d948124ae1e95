// The farm's security pieces without a network: the auth file parser, the
// roles' permissions, the coordinator's checks of its security flags, the
// simulated timing models and the metrics text.
#include <gtest/gtest.h>

#include "rpc/farm/auth_file.h"
#include "rpc/farm/call_gate.h"
#include "rpc/farm/coordinator.h"
#include "rpc/farm/farm_metrics.h"
#include "rpc/farm/simulated_timing.h"

namespace kiln::rpc::farm {
namespace {

const std::string kTokenA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kTokenB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

std::string ParseError(const std::string& text) {
  try {
    AuthTable::Parse(text, "auth.txt");
  } catch (const AuthFileError& e) {
    return e.what();
  }
  return "";
}

TEST(AuthFile, ParsesPrincipalsCommentsAndBlankLines) {
  const AuthTable t = AuthTable::Parse("# farm principals\n\nalice submit " + kTokenA +
                                           "   # her laptop\n\tworker-1\tworker\t" + kTokenB + "\r\n",
                                       "auth.txt");
  ASSERT_EQ(t.principals().size(), 2u);
  EXPECT_EQ(t.principals()[0].name, "alice");
  EXPECT_EQ(t.principals()[0].role, Role::kSubmit);
  EXPECT_EQ(t.principals()[1].name, "worker-1");
  EXPECT_EQ(t.principals()[1].role, Role::kWorker);
  ASSERT_TRUE(t.Find(kTokenA).has_value());
  EXPECT_EQ(t.Find(kTokenA)->name, "alice");
  EXPECT_EQ(t.Find(kTokenB)->name, "worker-1");
  EXPECT_FALSE(t.Find("cccccccccccccccccccccccccccccccc").has_value());
  EXPECT_FALSE(t.Find("").has_value());
  EXPECT_FALSE(t.Find(kTokenA.substr(1)).has_value());
  EXPECT_TRUE(AuthTable::Parse("", "empty").principals().empty());
}

TEST(AuthFile, ABadLineIsAnErrorNamingItsLineAndNeverTheToken) {
  const std::string ok = "alice submit " + kTokenA + "\n";
  EXPECT_EQ(ParseError(ok + "bob read\n"), "auth.txt:2: expected NAME ROLE TOKEN, found 2 field(s)");
  EXPECT_EQ(ParseError(ok + "bob read " + kTokenB + " extra\n"),
            "auth.txt:2: expected NAME ROLE TOKEN, found 4 field(s)");
  EXPECT_EQ(ParseError("\n\nbob root " + kTokenB), "auth.txt:3: principal 'bob': unknown role (worker, submit, read or admin)");
  EXPECT_EQ(ParseError("bob read short"),
            "auth.txt:1: principal 'bob': the token must be at least 16 printable characters");
  EXPECT_EQ(ParseError(ok + "alice read " + kTokenB), "auth.txt:2: principal 'alice' appears twice");
  EXPECT_EQ(ParseError(ok + "bob read " + kTokenA), "auth.txt:2: principal 'bob' has the token of an earlier line");
  EXPECT_EQ(ParseError("b/o/b read " + kTokenB), "auth.txt:1: the name must be 1 to 128 of A-Z a-z 0-9 - _ . @");
  EXPECT_EQ(ParseError(std::string("bob read ") + "tok\x01" + "enenenenenenenen"),
            "auth.txt:1: principal 'bob': the token must be at least 16 printable characters");
  // No message quotes a token.
  for (const std::string& bad : {ok + "bob read", ok + "alice read " + kTokenB, ok + "bob read " + kTokenA,
                                 "x y " + kTokenB + " z"}) {
    const std::string e = ParseError(bad);
    EXPECT_FALSE(e.empty());
    EXPECT_EQ(e.find(kTokenA), std::string::npos) << e;
    EXPECT_EQ(e.find(kTokenB), std::string::npos) << e;
  }
  EXPECT_THROW(AuthTable::Load("/nonexistent/auth.txt"), AuthFileError);
}

TEST(Roles, EachRoleMayMakeItsCallsOnly) {
  EXPECT_TRUE(RoleMay(Role::kWorker, CallKind::kWork));
  EXPECT_FALSE(RoleMay(Role::kWorker, CallKind::kSubmit));
  EXPECT_FALSE(RoleMay(Role::kWorker, CallKind::kQuery));
  EXPECT_FALSE(RoleMay(Role::kWorker, CallKind::kStatus));
  EXPECT_TRUE(RoleMay(Role::kSubmit, CallKind::kSubmit));
  EXPECT_TRUE(RoleMay(Role::kSubmit, CallKind::kWatch));
  EXPECT_TRUE(RoleMay(Role::kSubmit, CallKind::kCancelJob));
  EXPECT_FALSE(RoleMay(Role::kSubmit, CallKind::kWork));
  EXPECT_FALSE(RoleMay(Role::kSubmit, CallKind::kQuery));
  EXPECT_TRUE(RoleMay(Role::kRead, CallKind::kQuery));
  EXPECT_TRUE(RoleMay(Role::kRead, CallKind::kStatus));
  EXPECT_FALSE(RoleMay(Role::kRead, CallKind::kSubmit));
  EXPECT_FALSE(RoleMay(Role::kRead, CallKind::kCancelJob));
  EXPECT_FALSE(RoleMay(Role::kRead, CallKind::kWork));
  for (CallKind k : {CallKind::kWork, CallKind::kSubmit, CallKind::kWatch, CallKind::kListJobs,
                     CallKind::kCancelJob, CallKind::kStatus, CallKind::kQuery}) {
    EXPECT_TRUE(RoleMay(Role::kAdmin, k));
  }
}

TEST(SecurityOptions, PlaintextAndOpenFarmsStayOnLoopbackUnlessAskedFor) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:0"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:7000"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:7000"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:7000"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:7000"));
  EXPECT_FALSE(IsLoopbackAddress("10.1.2.3:7000"));

  CoordinatorOptions o;
  EXPECT_THROW(CheckSecurityOptions(o), std::invalid_argument);  // neither TLS nor --insecure
  o.insecure = true;
  EXPECT_EQ(CheckSecurityOptions(o).size(), 2u);  // plaintext, no tokens: two warnings
  o.listen = "0.0.0.0:7000";
  EXPECT_THROW(CheckSecurityOptions(o), std::invalid_argument);
  o.insecure_any_address = true;
  EXPECT_NO_THROW(CheckSecurityOptions(o));

  CoordinatorOptions tls;
  tls.tls_cert = "server.pem";
  EXPECT_THROW(CheckSecurityOptions(tls), std::invalid_argument);  // no key
  tls.tls_key = "server.key";
  EXPECT_EQ(CheckSecurityOptions(tls).size(), 1u);  // no tokens
  tls.listen = "0.0.0.0:7000";
  EXPECT_THROW(CheckSecurityOptions(tls), std::invalid_argument);  // every caller an admin
  tls.auth_file = "auth.txt";
  EXPECT_TRUE(CheckSecurityOptions(tls).empty());
  tls.insecure = true;
  EXPECT_THROW(CheckSecurityOptions(tls), std::invalid_argument);  // both
  CoordinatorOptions ca;
  ca.insecure = true;
  ca.client_ca = "ca.pem";
  EXPECT_THROW(CheckSecurityOptions(ca), std::invalid_argument);
}

TEST(SimulatedTiming, ModelsParseAndDrawPerTrace) {
  EXPECT_DOUBLE_EQ(ParseDuration("50ms"), 0.05);
  EXPECT_DOUBLE_EQ(ParseDuration("2s"), 2);
  EXPECT_DOUBLE_EQ(ParseDuration("250us"), 250e-6);
  EXPECT_THROW(ParseDuration("50"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("-1ms"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("ms"), std::invalid_argument);

  EXPECT_DOUBLE_EQ(SimulatedTiming::Parse("fixed:50ms").Sample("anything"), 0.05);
  const SimulatedTiming ln = SimulatedTiming::Parse("lognormal:50ms,0.1");
  EXPECT_EQ(ln.Sample("trace a"), ln.Sample("trace a"));
  EXPECT_NE(ln.Sample("trace a"), ln.Sample("trace b"));
  EXPECT_GT(ln.Sample("trace a"), 0.02);
  EXPECT_LT(ln.Sample("trace a"), 0.125);
  for (const char* bad : {"fixed", "fixed:", "normal:5ms", "lognormal:50ms", "lognormal:50ms,x",
                          "lognormal:50ms,-1", "lognormal:50ms,0.1x"}) {
    EXPECT_THROW(SimulatedTiming::Parse(bad), std::invalid_argument) << bad;
  }
}

TEST(FarmMetrics, RendersPrometheusTextWithEscapedLabels) {
  FarmMetrics m;
  m.Refused("bad_token");
  m.Refused("bad_token");
  m.Result("ok");
  m.ObserveCommit(0.003);
  m.ObserveCommit(10);
  v1::FarmStatusResponse st;
  v1::PoolStatus* p = st.add_pools();
  p->set_target("llvm \"x\"");
  p->set_fingerprint("fp");
  p->set_workers(2);
  p->set_slots(4);
  p->set_leases_in_flight(3);
  p->set_queued(7);
  st.set_leases_expired(5);
  const std::string text = m.Render(st);
  EXPECT_NE(text.find("kiln_farm_workers{pool=\"llvm \\\"x\\\" | fp\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln_farm_queue_depth{pool=\"llvm \\\"x\\\" | fp\"} 7\n"), std::string::npos);
  EXPECT_NE(text.find("kiln_farm_worker_utilization{pool=\"llvm \\\"x\\\" | fp\"} 0.75\n"), std::string::npos);
  EXPECT_NE(text.find("kiln_farm_leases_expired_total 5\n"), std::string::npos);
  EXPECT_NE(text.find("kiln_farm_refused_total{reason=\"bad_token\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("kiln_farm_results_total{status=\"ok\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("kiln_farm_commit_seconds_bucket{le=\"0.005\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("kiln_farm_commit_seconds_bucket{le=\"+Inf\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("kiln_farm_commit_seconds_count 2\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE kiln_farm_commit_seconds histogram\n"), std::string::npos);
}

}  // namespace
}  // namespace kiln::rpc::farm
