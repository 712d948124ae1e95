#include "rpc/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace kiln::rpc {
namespace {

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void I64(int64_t v) { Raw(&v, 8); }
  void F64(double v) { Raw(&v, 8); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s);
  }
  std::string Take() { return std::move(out_); }

 private:
  // The wire is little-endian; every supported host is too.
  void Raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view data, const char* what) : data_(data), what_(what) {}
  uint8_t U8() { return Scalar<uint8_t>(); }
  uint32_t U32() { return Scalar<uint32_t>(); }
  uint64_t U64() { return Scalar<uint64_t>(); }
  int64_t I64() { return Scalar<int64_t>(); }
  double F64() { return Scalar<double>(); }
  std::string Str() {
    uint64_t n = U64();
    if (n > data_.size() - pos_) Fail("string of " + std::to_string(n) + " bytes overruns the payload");
    std::string s(data_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // A count of items each at least min_item_bytes long, checked against what is left.
  uint64_t Count(uint64_t max, size_t min_item_bytes, const char* item) {
    uint64_t n = U64();
    if (n > max) Fail(std::string("too many ") + item + ": " + std::to_string(n));
    if (n * min_item_bytes > data_.size() - pos_) {
      Fail(std::to_string(n) + " " + item + " overrun the payload");
    }
    return n;
  }
  void ExpectEnd() {
    if (pos_ != data_.size()) Fail(std::to_string(data_.size() - pos_) + " trailing bytes");
  }
  [[noreturn]] void Fail(const std::string& why) {
    throw ProtocolError(std::string("bad ") + what_ + " message: " + why);
  }

 private:
  template <typename T>
  T Scalar() {
    T v;
    Raw(&v, sizeof(T));
    return v;
  }
  void Raw(void* p, size_t n) {
    if (n > data_.size() - pos_) Fail("truncated");
    std::memcpy(p, data_.data() + pos_, n);
    pos_ += n;
  }
  std::string_view data_;
  const char* what_;
  size_t pos_ = 0;
};

void WriteObject(Writer& w, const codegen::ObjectCode& o) {
  w.Str(o.symbol);
  w.Str(o.object);
  w.Str(o.target);
}

codegen::ObjectCode ReadObject(Reader& r) {
  codegen::ObjectCode o;
  o.symbol = r.Str();
  o.object = r.Str();
  o.target = r.Str();
  if (o.symbol.empty()) r.Fail("object without an entry symbol");
  if (o.object.empty()) r.Fail("empty object");
  return o;
}

bool IsMessageType(uint32_t t) { return t >= 1 && t <= 5; }

struct FrameHeader {
  MessageType type;
  uint32_t length;
};

// Validates the first kFrameHeaderBytes of `bytes`.
FrameHeader ParseHeader(const char* bytes) {
  uint32_t h[4];
  std::memcpy(h, bytes, kFrameHeaderBytes);
  if (h[0] != kFrameMagic) {
    throw ProtocolError(fmt::format("bad frame: magic {:#010x}, expected {:#010x} (not a kiln-runner peer)",
                                    h[0], kFrameMagic));
  }
  if (h[1] != kProtocolVersion) {
    throw ProtocolError(fmt::format(
        "bad frame: protocol version {}, expected {} (kiln and kiln-runner are from different builds)",
        h[1], kProtocolVersion));
  }
  if (!IsMessageType(h[2])) throw ProtocolError(fmt::format("bad frame: unknown message type {}", h[2]));
  if (h[3] > kMaxFrameBytes) {
    throw ProtocolError(fmt::format("bad frame: length {} exceeds the limit of {}", h[3], kMaxFrameBytes));
  }
  return {static_cast<MessageType>(h[2]), h[3]};
}

// Reads exactly n bytes. Returns false on end of stream before the first byte
// when at_start; end of stream anywhere else is a truncated frame.
bool ReadExact(int fd, char* p, size_t n, bool at_start) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd, p + done, n - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw ProtocolError(std::string("cannot read the runner socket: ") + std::strerror(errno));
    }
    if (r == 0) {
      if (at_start && done == 0) return false;
      throw ProtocolError("end of stream inside a frame");
    }
    done += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

std::string EncodeFrame(MessageType type, std::string_view payload) {
  if (payload.size() > kMaxFrameBytes) {
    throw ProtocolError("frame of " + std::to_string(payload.size()) + " bytes is too large");
  }
  uint32_t header[4] = {kFrameMagic, kProtocolVersion, static_cast<uint32_t>(type),
                        static_cast<uint32_t>(payload.size())};
  std::string frame(kFrameHeaderBytes, '\0');
  std::memcpy(frame.data(), header, kFrameHeaderBytes);
  frame.append(payload);
  return frame;
}

void WriteFrame(int fd, MessageType type, std::string_view payload) {
  const std::string frame = EncodeFrame(type, payload);
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ProtocolError(std::string("cannot write to the runner socket: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
}

std::optional<Message> ReadFrame(int fd) {
  char header[kFrameHeaderBytes];
  if (!ReadExact(fd, header, kFrameHeaderBytes, /*at_start=*/true)) return std::nullopt;
  FrameHeader h = ParseHeader(header);
  Message m{h.type, std::string(h.length, '\0')};
  ReadExact(fd, m.payload.data(), h.length, /*at_start=*/false);
  return m;
}

std::optional<Message> FrameBuffer::Pop() {
  if (buf_.size() < kFrameHeaderBytes) return std::nullopt;
  FrameHeader h = ParseHeader(buf_.data());
  if (buf_.size() < kFrameHeaderBytes + h.length) return std::nullopt;
  Message m{h.type, buf_.substr(kFrameHeaderBytes, h.length)};
  buf_.erase(0, kFrameHeaderBytes + h.length);
  return m;
}

std::string Encode(const WorkloadMessage& m) {
  Writer w;
  w.I64(m.num_threads);
  w.U64(m.input_seed);
  w.I64(m.timing.number);
  w.I64(m.timing.repeat);
  w.F64(m.timing.min_repeat_ms);
  w.U8(m.timing.flush_cache ? 1 : 0);
  w.U64(m.args.size());
  for (const ArgSpec& a : m.args) {
    w.Str(a.name);
    w.Str(a.dtype.str());
    w.U64(a.shape.size());
    for (int64_t e : a.shape) w.I64(e);
  }
  WriteObject(w, m.reference);
  w.U64(m.expected.size());
  for (const std::string& e : m.expected) w.Str(e);
  return w.Take();
}

WorkloadMessage DecodeWorkload(std::string_view payload) {
  Reader r(payload, "workload");
  WorkloadMessage m;
  int64_t threads = r.I64();
  if (threads < 0 || threads > 1 << 16) r.Fail("thread count " + std::to_string(threads));
  m.num_threads = static_cast<int32_t>(threads);
  m.input_seed = r.U64();
  int64_t number = r.I64();
  int64_t repeat = r.I64();
  if (number < 1 || number > (int64_t{1} << 30)) r.Fail("number " + std::to_string(number));
  if (repeat < 1 || repeat > (1 << 20)) r.Fail("repeat " + std::to_string(repeat));
  m.timing.number = static_cast<int>(number);
  m.timing.repeat = static_cast<int>(repeat);
  m.timing.min_repeat_ms = r.F64();
  if (!std::isfinite(m.timing.min_repeat_ms) || m.timing.min_repeat_ms < 0 ||
      m.timing.min_repeat_ms > 1e7) {
    r.Fail("min_repeat_ms " + std::to_string(m.timing.min_repeat_ms));
  }
  uint8_t flush = r.U8();
  if (flush > 1) r.Fail("flush flag " + std::to_string(flush));
  m.timing.flush_cache = flush == 1;
  uint64_t nargs = r.Count(kMaxArgs, 24, "arguments");
  for (uint64_t i = 0; i < nargs; ++i) {
    ArgSpec a;
    a.name = r.Str();
    std::string dtype = r.Str();
    if (!ir::DataType::Parse(dtype, &a.dtype) || !a.dtype.is_scalar() || a.dtype.is_handle()) {
      r.Fail("argument " + std::to_string(i) + " has bad dtype '" + dtype + "'");
    }
    uint64_t ndim = r.Count(kMaxDims, 8, "dimensions");
    int64_t bytes = a.dtype.bytes();
    for (uint64_t d = 0; d < ndim; ++d) {
      int64_t e = r.I64();
      if (e < 0) r.Fail("argument " + std::to_string(i) + " has negative extent");
      if (e > 0 && bytes > kMaxArgBytes / e) r.Fail("argument " + std::to_string(i) + " is too large");
      bytes *= e == 0 ? 1 : e;
      a.shape.push_back(e);
    }
    m.args.push_back(std::move(a));
  }
  m.reference = ReadObject(r);
  uint64_t nexpected = r.Count(kMaxArgs, 8, "reference outputs");
  if (nexpected != 0 && nexpected != m.args.size()) {
    r.Fail(std::to_string(nexpected) + " reference outputs for " + std::to_string(m.args.size()) +
           " arguments");
  }
  for (uint64_t i = 0; i < nexpected; ++i) {
    m.expected.push_back(r.Str());
    if (static_cast<int64_t>(m.expected.back().size()) != ArgBytes(m.args[i])) {
      r.Fail("reference output " + std::to_string(i) + " has " + std::to_string(m.expected.back().size()) +
             " bytes, its argument " + std::to_string(ArgBytes(m.args[i])));
    }
  }
  r.ExpectEnd();
  return m;
}

int64_t ArgBytes(const ArgSpec& a) {
  int64_t bytes = a.dtype.bytes();
  for (int64_t e : a.shape) bytes *= e;
  return bytes;
}

std::string Encode(const WorkloadReadyMessage& m) {
  Writer w;
  w.U64(m.expected.size());
  for (const std::string& e : m.expected) w.Str(e);
  return w.Take();
}

WorkloadReadyMessage DecodeWorkloadReady(std::string_view payload) {
  Reader r(payload, "workload-ready");
  WorkloadReadyMessage m;
  uint64_t n = r.Count(kMaxArgs, 8, "reference outputs");
  for (uint64_t i = 0; i < n; ++i) m.expected.push_back(r.Str());
  r.ExpectEnd();
  return m;
}

std::string Encode(const CandidateMessage& m) {
  Writer w;
  w.U32(m.index);
  WriteObject(w, m.code);
  w.U8(static_cast<uint8_t>(m.fault));
  return w.Take();
}

CandidateMessage DecodeCandidate(std::string_view payload) {
  Reader r(payload, "candidate");
  CandidateMessage m;
  m.index = r.U32();
  m.code = ReadObject(r);
  uint8_t fault = r.U8();
  if (fault > kMaxTestFault) r.Fail("unknown fault " + std::to_string(fault));
  m.fault = static_cast<TestFault>(fault);
  r.ExpectEnd();
  return m;
}

std::string Encode(const ResultMessage& m) {
  Writer w;
  w.U8(static_cast<uint8_t>(m.status));
  w.Str(m.message);
  w.U64(m.run_secs.size());
  for (double s : m.run_secs) w.F64(s);
  w.U8(m.verified ? 1 : 0);
  return w.Take();
}

ResultMessage DecodeResult(std::string_view payload) {
  Reader r(payload, "result");
  ResultMessage m;
  uint8_t status = r.U8();
  if (status > static_cast<uint8_t>(search::MeasureStatus::kInfraError)) {
    r.Fail("unknown status " + std::to_string(status));
  }
  m.status = static_cast<search::MeasureStatus>(status);
  m.message = r.Str();
  uint64_t n = r.Count(1u << 20, 8, "repeat times");
  for (uint64_t i = 0; i < n; ++i) {
    double s = r.F64();
    if (!std::isfinite(s) || s < 0) r.Fail("repeat time " + std::to_string(s));
    m.run_secs.push_back(s);
  }
  uint8_t verified = r.U8();
  if (verified > 1) r.Fail("verified flag " + std::to_string(verified));
  m.verified = verified == 1;
  if (m.status == search::MeasureStatus::kOk && m.run_secs.empty()) r.Fail("ok without times");
  r.ExpectEnd();
  return m;
}

}  // namespace kiln::rpc
