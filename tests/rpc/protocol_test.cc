// The parent <-> kiln-runner wire protocol: every message survives a round
// trip, and every malformed frame or payload is a ProtocolError with a reason
// (never a crash, never a silently accepted value).
#include "rpc/protocol.h"

#include "kiln/v1/runner.pb.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::rpc {
namespace {

using ::testing::HasSubstr;

codegen::ObjectCode SomeObject(const std::string& symbol) {
  codegen::ObjectCode o;
  o.symbol = symbol;
  o.object = std::string("\x7f" "ELF\0\1\2\3", 8);  // embedded NULs must survive
  o.target = "llvm -mcpu=x86-64 -num-cores=4";
  return o;
}

WorkloadMessage SomeWorkload() {
  WorkloadMessage m;
  m.num_threads = 8;
  m.input_seed = 0xfeedfacecafebeefull;
  m.timing.number = 7;
  m.timing.repeat = 3;
  m.timing.min_repeat_ms = 12.5;
  m.timing.flush_cache = true;
  m.args = {{"A", ir::DataType::Float32(), {128, 64}},
            {"B", ir::DataType::Int(8), {64}},
            {"scalar", ir::DataType::Float(16), {}},
            {"empty", ir::DataType::BFloat16(), {0, 5}},
            {"mask", ir::DataType::Bool(), {3, 1, 2}}};
  m.reference = SomeObject("default_function");
  return m;
}

// Expects `f` to throw ProtocolError whose text contains `fragment`.
void ExpectProtocolError(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no ProtocolError; expected one mentioning '" << fragment << "'";
  } catch (const ProtocolError& e) {
    EXPECT_THAT(e.what(), HasSubstr(fragment));
  }
}

void PutU32(std::string* s, size_t at, uint32_t v) { std::memcpy(s->data() + at, &v, 4); }

// Parses an encoded payload as its kiln.v1 message, lets `edit` change it and
// serializes it again: bad values reach the decoder with a valid framing.
template <typename Proto, typename Edit>
std::string Edited(const std::string& payload, Edit edit) {
  Proto p;
  EXPECT_TRUE(p.ParseFromString(payload));
  edit(p);
  return p.SerializeAsString();
}

TEST(ProtocolTest, WorkloadRoundTrip) {
  WorkloadMessage m = SomeWorkload();
  WorkloadMessage d = DecodeWorkload(Encode(m));
  EXPECT_EQ(d.num_threads, 8);
  EXPECT_EQ(d.input_seed, m.input_seed);
  EXPECT_EQ(d.timing.number, 7);
  EXPECT_EQ(d.timing.repeat, 3);
  EXPECT_EQ(d.timing.min_repeat_ms, 12.5);
  EXPECT_TRUE(d.timing.flush_cache);
  ASSERT_EQ(d.args.size(), m.args.size());
  for (size_t i = 0; i < m.args.size(); ++i) {
    EXPECT_EQ(d.args[i].name, m.args[i].name);
    EXPECT_EQ(d.args[i].dtype, m.args[i].dtype) << d.args[i].dtype.str();
    EXPECT_EQ(d.args[i].shape, m.args[i].shape);
  }
  EXPECT_EQ(d.reference.symbol, m.reference.symbol);
  EXPECT_EQ(d.reference.object, m.reference.object);
  EXPECT_EQ(d.reference.target, m.reference.target);
  // Encoding is canonical: what decodes re-encodes to the same bytes.
  EXPECT_EQ(Encode(d), Encode(m));
}

TEST(ProtocolTest, WorkloadWithoutArgumentsAndFlushOff) {
  WorkloadMessage m = SomeWorkload();
  m.args.clear();
  m.timing.flush_cache = false;
  m.timing.min_repeat_ms = 0;
  WorkloadMessage d = DecodeWorkload(Encode(m));
  EXPECT_TRUE(d.args.empty());
  EXPECT_FALSE(d.timing.flush_cache);
  EXPECT_EQ(d.timing.min_repeat_ms, 0);
}

// The outputs a first child computed, for the children after it.
std::vector<std::string> SomeReferenceOutputs(const WorkloadMessage& m) {
  std::vector<std::string> out;
  for (size_t i = 0; i < m.args.size(); ++i) {
    std::string bytes(static_cast<size_t>(ArgBytes(m.args[i])), '\0');
    for (size_t b = 0; b < bytes.size(); ++b) bytes[b] = static_cast<char>(b * 7 + i);
    out.push_back(std::move(bytes));
  }
  return out;
}

TEST(ProtocolTest, WorkloadWithReferenceOutputs) {
  WorkloadMessage m = SomeWorkload();
  EXPECT_EQ(ArgBytes(m.args[0]), 128 * 64 * 4);
  EXPECT_EQ(ArgBytes(m.args[2]), 2);  // a float16 scalar
  EXPECT_EQ(ArgBytes(m.args[3]), 0);
  EXPECT_EQ(ArgBytes(m.args[4]), 6);
  EXPECT_TRUE(DecodeWorkload(Encode(m)).expected.empty());
  m.expected = SomeReferenceOutputs(m);
  const std::string wire = Encode(m);
  WorkloadMessage d = DecodeWorkload(wire);
  EXPECT_EQ(d.expected, m.expected);
  EXPECT_EQ(Encode(d), wire);
  for (size_t n = 0; n < wire.size(); n += 97) {
    EXPECT_THROW(DecodeWorkload(wire.substr(0, n)), ProtocolError) << n;
  }
  EXPECT_THROW(DecodeWorkload(wire.substr(0, wire.size() - 1)), ProtocolError);
  // One block per argument, each exactly the argument's size.
  WorkloadMessage fewer = m;
  fewer.expected.pop_back();
  ExpectProtocolError([&] { DecodeWorkload(Encode(fewer)); }, "4 reference outputs for 5 arguments");
  WorkloadMessage longer = m;
  longer.expected[1] += "x";
  ExpectProtocolError([&] { DecodeWorkload(Encode(longer)); },
                      "reference output 1 has 65 bytes, its argument 64");
}

TEST(ProtocolTest, WorkloadReadyRoundTrip) {
  WorkloadReadyMessage none;
  EXPECT_TRUE(DecodeWorkloadReady(Encode(none)).expected.empty());
  WorkloadReadyMessage m{SomeReferenceOutputs(SomeWorkload())};
  const std::string wire = Encode(m);
  EXPECT_EQ(DecodeWorkloadReady(wire).expected, m.expected);
  for (size_t n = 0; n < wire.size(); n += 89) {
    EXPECT_THROW(DecodeWorkloadReady(wire.substr(0, n)), ProtocolError) << n;
  }
  ExpectProtocolError([&] { DecodeWorkloadReady(wire + "z"); }, "truncated or corrupt");
  const std::string too_many = Edited<v1::RunnerWorkloadReady>(wire, [](auto& p) {
    while (p.expected_size() <= static_cast<int>(kMaxArgs)) p.add_expected("");
  });
  ExpectProtocolError([&] { DecodeWorkloadReady(too_many); }, "too many reference outputs");
}

TEST(ProtocolTest, CandidateRoundTripEveryFault) {
  for (uint8_t f = 0; f <= kMaxTestFault; ++f) {
    CandidateMessage m;
    m.index = 41 + f;
    m.code = SomeObject("cand_" + std::to_string(f));
    m.fault = static_cast<TestFault>(f);
    m.slow_call_secs = 0.25 * f;
    CandidateMessage d = DecodeCandidate(Encode(m));
    EXPECT_EQ(d.index, m.index);
    EXPECT_EQ(d.slow_call_secs, m.slow_call_secs);
    EXPECT_EQ(d.code.symbol, m.code.symbol);
    EXPECT_EQ(d.code.object, m.code.object);
    EXPECT_EQ(d.code.target, m.code.target);
    EXPECT_EQ(d.fault, m.fault) << TestFaultName(m.fault);
  }
}

TEST(ProtocolTest, ResultRoundTripEveryStatus) {
  for (int s = 0; s <= static_cast<int>(search::MeasureStatus::kInfraError); ++s) {
    ResultMessage m;
    m.status = static_cast<search::MeasureStatus>(s);
    m.message = s == 0 ? "" : std::string("went wrong: ") + search::MeasureStatusName(m.status);
    m.run_secs = {1.5e-3, 2.25e-3, 0.0};
    m.verified = s == 0;
    ResultMessage d = DecodeResult(Encode(m));
    EXPECT_EQ(d.status, m.status);
    EXPECT_EQ(d.message, m.message);
    EXPECT_EQ(d.run_secs, m.run_secs);
    EXPECT_EQ(d.verified, m.verified);
  }
  // A message need not be UTF-8 (compiler or crash output): it survives.
  const std::string raw("bad byte \xff\xfe and a NUL \0 inside", 30);
  EXPECT_EQ(DecodeResult(Encode(ResultMessage{search::MeasureStatus::kBuildError, raw, {}, false})).message, raw);
  ResultMessage crash{search::MeasureStatus::kRunCrash, "SIGSEGV", {}, false};
  EXPECT_TRUE(DecodeResult(Encode(crash)).run_secs.empty());
}

TEST(ProtocolTest, FramesRoundTripThroughFrameBuffer) {
  FrameBuffer buf;
  std::string wire = EncodeFrame(MessageType::kWorkloadReady, "") +
                     EncodeFrame(MessageType::kError, std::string("a\0b", 3)) +
                     EncodeFrame(MessageType::kResult, Encode(ResultMessage{}));
  // Byte by byte: a frame is delivered exactly when its last byte arrives.
  std::vector<Message> got;
  for (char c : wire) {
    buf.Append(&c, 1);
    while (auto m = buf.Pop()) got.push_back(std::move(*m));
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].type, MessageType::kWorkloadReady);
  EXPECT_EQ(got[0].payload, "");
  EXPECT_EQ(got[1].type, MessageType::kError);
  EXPECT_EQ(got[1].payload, std::string("a\0b", 3));
  EXPECT_EQ(got[2].type, MessageType::kResult);
  EXPECT_EQ(buf.buffered(), 0u);
}

TEST(ProtocolTest, FrameBufferWaitsForATruncatedFrame) {
  std::string wire = EncodeFrame(MessageType::kError, "hello");
  FrameBuffer buf;
  buf.Append(wire.data(), wire.size() - 1);
  EXPECT_FALSE(buf.Pop().has_value());
  buf.Append(wire.data() + wire.size() - 1, 1);
  auto m = buf.Pop();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->payload, "hello");
}

TEST(ProtocolTest, SocketFramesBackToBackAreAllRead) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  // Both frames are in the socket before the first read: reading the first
  // must not swallow the second.
  WriteFrame(sv[0], MessageType::kError, "first");
  WriteFrame(sv[0], MessageType::kError, "second");
  ::close(sv[0]);
  auto a = ReadFrame(sv[1]);
  auto b = ReadFrame(sv[1]);
  auto end = ReadFrame(sv[1]);
  ::close(sv[1]);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->payload, "first");
  EXPECT_EQ(b->payload, "second");
  EXPECT_FALSE(end.has_value());  // clean end of stream between frames
}

TEST(ProtocolTest, SocketLargeFrame) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::string big(3 << 20, 'x');  // larger than the socket buffer: many reads
  big[12345] = 'y';
  std::thread writer([&] { WriteFrame(sv[0], MessageType::kCandidate, big); });
  auto m = ReadFrame(sv[1]);
  writer.join();
  ::close(sv[0]);
  ::close(sv[1]);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->payload, big);
}

TEST(ProtocolTest, SocketEndOfStreamInsideAFrame) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::string wire = EncodeFrame(MessageType::kError, "cut short");
  ASSERT_EQ(::write(sv[0], wire.data(), wire.size() - 3), static_cast<ssize_t>(wire.size() - 3));
  ::close(sv[0]);
  ExpectProtocolError([&] { ReadFrame(sv[1]); }, "end of stream inside a frame");
  ::close(sv[1]);
  // Inside the header, too.
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ASSERT_EQ(::write(sv[0], wire.data(), 5), 5);
  ::close(sv[0]);
  ExpectProtocolError([&] { ReadFrame(sv[1]); }, "end of stream inside a frame");
  ::close(sv[1]);
}

TEST(ProtocolTest, WriteToAClosedPeerIsAnError) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ::close(sv[1]);
  ExpectProtocolError([&] { WriteFrame(sv[0], MessageType::kError, "nobody"); }, "cannot write");
  ::close(sv[0]);
}

// A bad header is rejected by both readers: the incremental buffer and the
// blocking socket reader.
void ExpectBadHeader(const std::string& wire, const std::string& fragment) {
  SCOPED_TRACE(fragment);
  FrameBuffer buf;
  buf.Append(wire.data(), wire.size());
  ExpectProtocolError([&] { buf.Pop(); }, fragment);
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ASSERT_EQ(::write(sv[0], wire.data(), wire.size()), static_cast<ssize_t>(wire.size()));
  ::close(sv[0]);
  ExpectProtocolError([&] { ReadFrame(sv[1]); }, fragment);
  ::close(sv[1]);
}

TEST(ProtocolTest, RejectsBadHeaders) {
  const std::string good = EncodeFrame(MessageType::kError, "x");
  std::string w = good;
  PutU32(&w, 0, 0xdeadbeef);
  ExpectBadHeader(w, "magic");
  w = good;
  PutU32(&w, 4, kProtocolVersion + 1);
  ExpectBadHeader(w, "protocol version " + std::to_string(kProtocolVersion + 1) + ", expected " +
                         std::to_string(kProtocolVersion));
  for (uint32_t type : {0u, 7u, 0xffffffffu}) {
    w = good;
    PutU32(&w, 8, type);
    ExpectBadHeader(w, "unknown message type " + std::to_string(type));
  }
  w = good;
  PutU32(&w, 12, kMaxFrameBytes + 1);
  ExpectBadHeader(w, "exceeds the limit");
}

TEST(ProtocolTest, RejectsEveryTruncationOfEveryMessage) {
  const std::string workload = Encode(SomeWorkload());
  CandidateMessage c;
  c.code = SomeObject("k");
  c.fault = TestFault::kAbort;
  const std::string candidate = Encode(c);
  const std::string result = Encode(ResultMessage{search::MeasureStatus::kOk, "", {1e-3, 2e-3}, true});
  for (size_t n = 0; n < workload.size(); ++n) {
    EXPECT_THROW(DecodeWorkload(workload.substr(0, n)), ProtocolError) << n;
  }
  for (size_t n = 0; n < candidate.size(); ++n) {
    EXPECT_THROW(DecodeCandidate(candidate.substr(0, n)), ProtocolError) << n;
  }
  for (size_t n = 0; n < result.size(); ++n) {
    EXPECT_THROW(DecodeResult(result.substr(0, n)), ProtocolError) << n;
  }
  ExpectProtocolError([&] { DecodeWorkload(workload.substr(0, 3)); }, "bad workload message: truncated");
}

// Protobuf would skip a field it does not know; the decoder refuses it (bytes
// after the message, or a peer built from another schema).
TEST(ProtocolTest, RejectsTrailingBytesAndUnknownFields) {
  // Field 14, varint 1: a well-formed field no runner message has.
  const std::string unknown_field("\x70\x01", 2);
  ExpectProtocolError([&] { DecodeWorkload(Encode(SomeWorkload()) + unknown_field); }, "unknown fields");
  CandidateMessage c;
  c.code = SomeObject("k");
  ExpectProtocolError([&] { DecodeCandidate(Encode(c) + unknown_field); }, "bad candidate message: unknown fields");
  // A lone byte is a field tag without its value.
  ExpectProtocolError(
      [] { DecodeResult(Encode(ResultMessage{search::MeasureStatus::kTimeout, "t", {}, false}) + "z"); },
      "bad result message: truncated or corrupt");
  // Another message type's payload lacks this one's shape or its end marker.
  ExpectProtocolError([&] { DecodeWorkload(Encode(c)); }, "bad workload message");
}

TEST(ProtocolTest, RejectsAPayloadWithoutTheEndMarker) {
  const std::string w = Edited<v1::RunnerWorkload>(Encode(SomeWorkload()), [](auto& p) { p.clear_end(); });
  ExpectProtocolError([&] { DecodeWorkload(w); }, "bad workload message: truncated (no end marker)");
  ExpectProtocolError([] { DecodeWorkloadReady(""); }, "no end marker");
}

TEST(ProtocolTest, RejectsBadWorkloadValues) {
  const std::string good = Encode(SomeWorkload());
  auto edited = [&](auto edit) { return Edited<v1::RunnerWorkload>(good, edit); };
  ExpectProtocolError([&] { DecodeWorkload(edited([](auto& p) { p.set_num_threads(-1); })); },
                      "thread count -1");
  ExpectProtocolError([&] { DecodeWorkload(edited([](auto& p) { p.mutable_timing()->set_number(0); })); },
                      "number 0");
  ExpectProtocolError([&] { DecodeWorkload(edited([](auto& p) { p.mutable_timing()->set_repeat(0); })); },
                      "repeat 0");
  ExpectProtocolError(
      [&] { DecodeWorkload(edited([](auto& p) { p.mutable_timing()->set_min_repeat_ms(std::nan("")); })); },
      "min_repeat_ms");
  ExpectProtocolError([&] {
    DecodeWorkload(edited([](auto& p) {
      while (p.args_size() <= static_cast<int>(kMaxArgs)) *p.add_args() = p.args(0);
    }));
  }, "too many arguments");
  ExpectProtocolError([&] { DecodeWorkload(edited([](auto& p) { p.add_expected("xx"); })); },
                      "1 reference outputs for 5 arguments");
}

TEST(ProtocolTest, RejectsBadArgumentSpecs) {
  auto one_arg = [](ir::DataType dtype, std::vector<int64_t> shape) {
    WorkloadMessage m = SomeWorkload();
    m.args = {{"A", dtype, std::move(shape)}};
    return Encode(m);
  };
  ExpectProtocolError([&] { DecodeWorkload(one_arg(ir::DataType::Float(32, 4), {2})); }, "bad dtype 'float32x4'");
  ExpectProtocolError([&] { DecodeWorkload(one_arg(ir::DataType::Handle(), {2})); }, "bad dtype 'handle'");
  ExpectProtocolError([&] { DecodeWorkload(one_arg(ir::DataType::Float32(), {4, -1})); }, "negative extent");
  ExpectProtocolError([&] { DecodeWorkload(one_arg(ir::DataType::Float32(), {1 << 20, 1 << 20})); },
                      "too large");
  // An extent product that would overflow int64 is caught before it does.
  ExpectProtocolError(
      [&] { DecodeWorkload(one_arg(ir::DataType::Int(8), {int64_t{1} << 40, int64_t{1} << 40})); }, "too large");
  ExpectProtocolError([&] { DecodeWorkload(one_arg(ir::DataType::Float32(), std::vector<int64_t>(kMaxDims + 1, 1))); },
                      "too many dimensions");
  // A dtype string that is not a dtype at all.
  WorkloadMessage m = SomeWorkload();
  m.args = {{"A", ir::DataType::Float32(), {2}}};
  std::string w = Encode(m);
  size_t at = w.find("float32");
  ASSERT_NE(at, std::string::npos);
  w.replace(at, 7, "floaty!");
  ExpectProtocolError([&] { DecodeWorkload(w); }, "bad dtype 'floaty!'");
}

TEST(ProtocolTest, RejectsBadObjects) {
  CandidateMessage c;
  c.code = SomeObject("");
  ExpectProtocolError([&] { DecodeCandidate(Encode(c)); }, "without an entry symbol");
  c.code = SomeObject("k");
  c.code.object.clear();
  ExpectProtocolError([&] { DecodeCandidate(Encode(c)); }, "empty object");
  WorkloadMessage w = SomeWorkload();
  w.reference.symbol.clear();
  ExpectProtocolError([&] { DecodeWorkload(Encode(w)); }, "bad workload message: object without an entry symbol");
}

TEST(ProtocolTest, RejectsBadEnumValues) {
  CandidateMessage c;
  c.code = SomeObject("k");
  const std::string w = Edited<v1::RunnerCandidate>(Encode(c), [](auto& p) { p.set_fault(kMaxTestFault + 1); });
  ExpectProtocolError([&] { DecodeCandidate(w); }, "unknown fault " + std::to_string(kMaxTestFault + 1));
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    const std::string s =
        Edited<v1::RunnerCandidate>(Encode(c), [&](auto& p) { p.set_slow_call_secs(bad); });
    ExpectProtocolError([&] { DecodeCandidate(s); }, "slow_call_secs");
  }

  const std::string timeout = Encode(ResultMessage{search::MeasureStatus::kTimeout, "", {}, false});
  std::string r = Edited<v1::RunnerResult>(timeout, [](auto& p) { p.set_status(static_cast<v1::MeasureStatus>(7)); });
  ExpectProtocolError([&] { DecodeResult(r); }, "unknown status 7");
  r = Edited<v1::RunnerResult>(timeout, [](auto& p) { p.set_status(v1::MEASURE_STATUS_UNSPECIFIED); });
  ExpectProtocolError([&] { DecodeResult(r); }, "unknown status 0");
}

TEST(ProtocolTest, RejectsBadResultTimes) {
  ExpectProtocolError([] { DecodeResult(Encode(ResultMessage{search::MeasureStatus::kOk, "", {}, true})); },
                      "ok without times");
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    ExpectProtocolError(
        [&] { DecodeResult(Encode(ResultMessage{search::MeasureStatus::kOk, "", {1e-3, bad}, true})); },
        "repeat time");
  }
  std::string r = Edited<v1::RunnerResult>(
      Encode(ResultMessage{search::MeasureStatus::kOk, "", {1e-3}, true}),
      [](auto& p) { p.mutable_run_seconds()->Resize((1 << 20) + 1, 1e-3); });
  ExpectProtocolError([&] { DecodeResult(r); }, "too many repeat times");
}

}  // namespace
}  // namespace kiln::rpc
