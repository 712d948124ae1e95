#include "rpc/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "kiln/v1/runner.pb.h"
#include "rpc/proto_convert.h"

namespace kiln::rpc {
namespace {

// The value of every payload's `end` field (rpc/protocol.h).
constexpr uint32_t kEndMarker = 0x444e454b;  // "KEND"

[[noreturn]] void Fail(const char* what, const std::string& why) {
  throw ProtocolError(std::string("bad ") + what + " message: " + why);
}

std::string Serialize(const google::protobuf::Message& m) {
  std::string out;
  if (!m.SerializeToString(&out)) throw ProtocolError(std::string("cannot encode ") + m.GetTypeName());
  return out;
}

// Parses a payload strictly: it must parse, carry no field this build does
// not know, and end with the end marker.
template <typename Proto>
Proto Parse(std::string_view payload, const char* what) {
  Proto m;
  if (payload.size() > kMaxFrameBytes ||
      !m.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    Fail(what, "truncated or corrupt (not a " + m.GetTypeName() + ")");
  }
  if (!m.GetReflection()->GetUnknownFields(m).empty()) {
    Fail(what, "unknown fields (trailing bytes, or a peer from another build)");
  }
  if (m.end() != kEndMarker) Fail(what, "truncated (no end marker)");
  return m;
}

void WriteObject(const codegen::ObjectCode& o, v1::RunnerObject* out) {
  out->set_symbol(o.symbol);
  out->set_object(o.object);
  out->set_target(o.target);
}

codegen::ObjectCode ReadObject(const v1::RunnerObject& in, const char* what) {
  codegen::ObjectCode o{in.symbol(), in.object(), in.target()};
  if (o.symbol.empty()) Fail(what, "object without an entry symbol");
  if (o.object.empty()) Fail(what, "empty object");
  return o;
}

bool IsMessageType(uint32_t t) { return t >= 1 && t <= 6; }

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
  v1::RunnerWorkload p;
  p.set_num_threads(m.num_threads);
  p.set_input_seed(m.input_seed);
  v1::TimingConfig* t = p.mutable_timing();
  t->set_number(m.timing.number);
  t->set_repeat(m.timing.repeat);
  t->set_min_repeat_ms(m.timing.min_repeat_ms);
  t->set_flush_cache(m.timing.flush_cache);
  for (const ArgSpec& a : m.args) {
    v1::RunnerArg* pa = p.add_args();
    pa->set_name(a.name);
    pa->set_dtype(a.dtype.str());
    for (int64_t e : a.shape) pa->add_shape(e);
  }
  WriteObject(m.reference, p.mutable_reference());
  for (const std::string& e : m.expected) p.add_expected(e);
  p.set_end(kEndMarker);
  return Serialize(p);
}

WorkloadMessage DecodeWorkload(std::string_view payload) {
  constexpr const char* kWhat = "workload";
  const auto p = Parse<v1::RunnerWorkload>(payload, kWhat);
  WorkloadMessage m;
  if (p.num_threads() < 0 || p.num_threads() > 1 << 16) {
    Fail(kWhat, "thread count " + std::to_string(p.num_threads()));
  }
  m.num_threads = p.num_threads();
  m.input_seed = p.input_seed();
  const v1::TimingConfig& t = p.timing();
  if (t.number() < 1 || t.number() > (1 << 30)) Fail(kWhat, "number " + std::to_string(t.number()));
  if (t.repeat() < 1 || t.repeat() > (1 << 20)) Fail(kWhat, "repeat " + std::to_string(t.repeat()));
  m.timing.number = t.number();
  m.timing.repeat = t.repeat();
  m.timing.min_repeat_ms = t.min_repeat_ms();
  if (!std::isfinite(m.timing.min_repeat_ms) || m.timing.min_repeat_ms < 0 ||
      m.timing.min_repeat_ms > 1e7) {
    Fail(kWhat, "min_repeat_ms " + std::to_string(m.timing.min_repeat_ms));
  }
  m.timing.flush_cache = t.flush_cache();
  if (static_cast<size_t>(p.args_size()) > kMaxArgs) {
    Fail(kWhat, "too many arguments: " + std::to_string(p.args_size()));
  }
  for (int i = 0; i < p.args_size(); ++i) {
    const v1::RunnerArg& pa = p.args(i);
    ArgSpec a;
    a.name = pa.name();
    if (!ir::DataType::Parse(pa.dtype(), &a.dtype) || !a.dtype.is_scalar() || a.dtype.is_handle()) {
      Fail(kWhat, "argument " + std::to_string(i) + " has bad dtype '" + pa.dtype() + "'");
    }
    if (static_cast<size_t>(pa.shape_size()) > kMaxDims) {
      Fail(kWhat, "argument " + std::to_string(i) + " has too many dimensions: " +
                      std::to_string(pa.shape_size()));
    }
    int64_t bytes = a.dtype.bytes();
    for (int64_t e : pa.shape()) {
      if (e < 0) Fail(kWhat, "argument " + std::to_string(i) + " has negative extent");
      if (e > 0 && bytes > kMaxArgBytes / e) Fail(kWhat, "argument " + std::to_string(i) + " is too large");
      bytes *= e == 0 ? 1 : e;
      a.shape.push_back(e);
    }
    m.args.push_back(std::move(a));
  }
  m.reference = ReadObject(p.reference(), kWhat);
  if (p.expected_size() != 0 && static_cast<size_t>(p.expected_size()) != m.args.size()) {
    Fail(kWhat, std::to_string(p.expected_size()) + " reference outputs for " +
                    std::to_string(m.args.size()) + " arguments");
  }
  for (int i = 0; i < p.expected_size(); ++i) {
    m.expected.push_back(p.expected(i));
    if (static_cast<int64_t>(m.expected.back().size()) != ArgBytes(m.args[i])) {
      Fail(kWhat, "reference output " + std::to_string(i) + " has " +
                      std::to_string(m.expected.back().size()) + " bytes, its argument " +
                      std::to_string(ArgBytes(m.args[i])));
    }
  }
  return m;
}

int64_t ArgBytes(const ArgSpec& a) {
  int64_t bytes = a.dtype.bytes();
  for (int64_t e : a.shape) bytes *= e;
  return bytes;
}

std::string Encode(const WorkloadReadyMessage& m) {
  v1::RunnerWorkloadReady p;
  for (const std::string& e : m.expected) p.add_expected(e);
  p.set_end(kEndMarker);
  return Serialize(p);
}

WorkloadReadyMessage DecodeWorkloadReady(std::string_view payload) {
  constexpr const char* kWhat = "workload-ready";
  const auto p = Parse<v1::RunnerWorkloadReady>(payload, kWhat);
  if (static_cast<size_t>(p.expected_size()) > kMaxArgs) {
    Fail(kWhat, "too many reference outputs: " + std::to_string(p.expected_size()));
  }
  WorkloadReadyMessage m;
  m.expected.assign(p.expected().begin(), p.expected().end());
  return m;
}

std::string Encode(const CandidateMessage& m) {
  v1::RunnerCandidate p;
  p.set_index(m.index);
  WriteObject(m.code, p.mutable_code());
  p.set_fault(static_cast<uint32_t>(m.fault));
  p.set_slow_call_secs(m.slow_call_secs);
  p.set_end(kEndMarker);
  return Serialize(p);
}

CandidateMessage DecodeCandidate(std::string_view payload) {
  constexpr const char* kWhat = "candidate";
  const auto p = Parse<v1::RunnerCandidate>(payload, kWhat);
  CandidateMessage m;
  m.index = p.index();
  m.code = ReadObject(p.code(), kWhat);
  if (p.fault() > kMaxTestFault) Fail(kWhat, "unknown fault " + std::to_string(p.fault()));
  m.fault = static_cast<TestFault>(p.fault());
  m.slow_call_secs = p.slow_call_secs();
  if (!std::isfinite(m.slow_call_secs) || m.slow_call_secs < 0) {
    Fail(kWhat, "slow_call_secs " + std::to_string(m.slow_call_secs));
  }
  return m;
}

std::string Encode(const CudaCandidateMessage& m) {
  v1::RunnerCudaCandidate p;
  p.set_index(m.index);
  p.set_arch(m.arch);
  p.set_cubin(m.cubin);
  p.set_ptx(m.ptx);
  for (const codegen::CudaBuffer& b : m.buffers) {
    v1::RunnerCudaBuffer* pb = p.add_buffers();
    pb->set_name(b.name);
    pb->set_dtype(b.dtype);
    pb->set_elements(b.elements);
    pb->set_workspace(b.workspace);
  }
  for (const codegen::CudaLaunch& l : m.launches) {
    v1::RunnerCudaLaunch* pl = p.add_launches();
    pl->set_kernel(l.kernel);
    for (int64_t g : l.grid) pl->add_grid(g);
    for (int64_t b : l.block) pl->add_block(b);
    pl->set_dynamic_shared_bytes(l.dynamic_shared_bytes);
    for (int a : l.args) pl->add_args(a);
  }
  p.set_fault(static_cast<uint32_t>(m.fault));
  p.set_end(kEndMarker);
  return Serialize(p);
}

CudaCandidateMessage DecodeCudaCandidate(std::string_view payload) {
  constexpr const char* kWhat = "cuda candidate";
  const auto p = Parse<v1::RunnerCudaCandidate>(payload, kWhat);
  CudaCandidateMessage m;
  m.index = p.index();
  m.arch = p.arch();
  m.cubin = p.cubin();
  m.ptx = p.ptx();
  if (m.cubin.empty() && m.ptx.empty()) Fail(kWhat, "neither a cubin nor PTX");
  if (static_cast<size_t>(p.buffers_size()) > kMaxArgs * 2) {
    Fail(kWhat, "too many buffers: " + std::to_string(p.buffers_size()));
  }
  for (int i = 0; i < p.buffers_size(); ++i) {
    const v1::RunnerCudaBuffer& pb = p.buffers(i);
    ir::DataType dt;
    if (!ir::DataType::Parse(pb.dtype(), &dt) || !dt.is_scalar() || dt.is_handle()) {
      Fail(kWhat, "buffer " + std::to_string(i) + " has bad dtype '" + pb.dtype() + "'");
    }
    if (pb.elements() < 0 || pb.elements() > kMaxArgBytes / dt.bytes()) {
      Fail(kWhat, "buffer " + std::to_string(i) + " has " + std::to_string(pb.elements()) +
                      " elements");
    }
    m.buffers.push_back({pb.name(), pb.dtype(), pb.elements(), pb.workspace()});
  }
  if (p.launches_size() < 1 || static_cast<size_t>(p.launches_size()) > kMaxCudaLaunches) {
    Fail(kWhat, std::to_string(p.launches_size()) + " launches (1 to " +
                    std::to_string(kMaxCudaLaunches) + " allowed)");
  }
  // CUDA's limits: grid x < 2^31, y and z < 2^16; block x, y <= 1024, z <= 64.
  constexpr int64_t kMaxGrid[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
  constexpr int64_t kMaxBlock[3] = {1024, 1024, 64};
  for (int k = 0; k < p.launches_size(); ++k) {
    const v1::RunnerCudaLaunch& pl = p.launches(k);
    const std::string at = "launch " + std::to_string(k);
    if (pl.kernel().empty()) Fail(kWhat, at + " names no kernel");
    if (pl.grid_size() != 3 || pl.block_size() != 3) Fail(kWhat, at + " needs 3 grid and 3 block extents");
    codegen::CudaLaunch l;
    l.kernel = pl.kernel();
    for (int d = 0; d < 3; ++d) {
      if (pl.grid(d) < 1 || pl.grid(d) > kMaxGrid[d]) {
        Fail(kWhat, at + " has grid extent " + std::to_string(pl.grid(d)) + " on axis " + std::to_string(d));
      }
      if (pl.block(d) < 1 || pl.block(d) > kMaxBlock[d]) {
        Fail(kWhat, at + " has block extent " + std::to_string(pl.block(d)) + " on axis " + std::to_string(d));
      }
      l.grid[static_cast<size_t>(d)] = pl.grid(d);
      l.block[static_cast<size_t>(d)] = pl.block(d);
    }
    if (l.block[0] * l.block[1] * l.block[2] > 1024) Fail(kWhat, at + " has more than 1024 threads per block");
    if (pl.dynamic_shared_bytes() < 0 || pl.dynamic_shared_bytes() > kMaxCudaSharedBytes) {
      Fail(kWhat, at + " has " + std::to_string(pl.dynamic_shared_bytes()) + " bytes of dynamic shared memory");
    }
    l.dynamic_shared_bytes = pl.dynamic_shared_bytes();
    for (int a : pl.args()) {
      if (a < 0 || a >= p.buffers_size()) {
        Fail(kWhat, at + " passes buffer " + std::to_string(a) + " of " + std::to_string(p.buffers_size()));
      }
      l.args.push_back(a);
    }
    m.launches.push_back(std::move(l));
  }
  if (p.fault() > kMaxTestFault) Fail(kWhat, "unknown fault " + std::to_string(p.fault()));
  m.fault = static_cast<TestFault>(p.fault());
  return m;
}

std::string Encode(const ResultMessage& m) {
  v1::RunnerResult p;
  p.set_status(ToProto(m.status));
  p.set_message(m.message);
  for (double s : m.run_secs) p.add_run_seconds(s);
  p.set_verified(m.verified);
  p.set_end(kEndMarker);
  return Serialize(p);
}

ResultMessage DecodeResult(std::string_view payload) {
  constexpr const char* kWhat = "result";
  const auto p = Parse<v1::RunnerResult>(payload, kWhat);
  ResultMessage m;
  try {
    m.status = FromProto(p.status());
  } catch (const std::invalid_argument& e) {
    Fail(kWhat, e.what());
  }
  m.message = p.message();
  if (p.run_seconds_size() > (1 << 20)) Fail(kWhat, "too many repeat times: " + std::to_string(p.run_seconds_size()));
  for (double s : p.run_seconds()) {
    if (!std::isfinite(s) || s < 0) Fail(kWhat, "repeat time " + std::to_string(s));
    m.run_secs.push_back(s);
  }
  m.verified = p.verified();
  if (m.status == search::MeasureStatus::kOk && m.run_secs.empty()) Fail(kWhat, "ok without times");
  return m;
}

}  // namespace kiln::rpc
