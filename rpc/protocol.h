// The parent <-> kiln-runner wire protocol: length-prefixed frames of
// [u32 magic][u32 version][u32 type][u32 length][payload] over a socket, each
// payload a kiln.v1 Runner* message (proto/kiln/v1/runner.proto). The magic
// and version in every frame catch a stale kiln-runner (KILN_RUNNER pointing
// at an older build) on its first reply. Everything read is validated
// (frame size, Protobuf parse, unknown fields, the end marker, sizes, counts,
// enum values); a bad frame or payload throws ProtocolError, which the parent
// turns into an infra_error.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/llvm_backend.h"
#include "ir/dtype.h"
#include "rpc/test_fault.h"
#include "search/measure.h"

namespace kiln::rpc {

class ProtocolError : public std::runtime_error {
 public:
  explicit ProtocolError(const std::string& msg) : std::runtime_error(msg) {}
};

enum class MessageType : uint32_t {
  kWorkload = 1,       // parent -> child: arguments, timing, reference object
  kWorkloadReady = 2,  // child -> parent: set up; the reference outputs if it computed them
  kCandidate = 3,      // parent -> child: one candidate object
  kResult = 4,         // child -> parent: the candidate's result
  kError = 5,          // child -> parent: the request failed; payload is the text
  kCudaCandidate = 6,  // parent -> child: one CUDA candidate (cubin, PTX, launches)
};

// An object is at most this large; a frame holds at most one object plus a
// little metadata. Anything larger is a corrupt length, not a real message.
constexpr uint32_t kMaxFrameBytes = 1u << 30;
constexpr uint32_t kFrameMagic = 0x524e4c4b;  // "KLNR" on the wire (little-endian)
// Bumped whenever a frame or payload layout changes.
constexpr uint32_t kProtocolVersion = 4;
constexpr size_t kFrameHeaderBytes = 16;

struct Message {
  MessageType type;
  std::string payload;
};

// Writes one frame to a socket (MSG_NOSIGNAL: a dead peer is an error, not
// SIGPIPE). Throws ProtocolError if the peer is gone.
void WriteFrame(int fd, MessageType type, std::string_view payload);
// Blocking read of one frame; nullopt on end of stream before a header. Reads
// exactly one frame's bytes, so frames sent back to back are all delivered.
std::optional<Message> ReadFrame(int fd);
// The frame bytes WriteFrame sends (header and payload), for tests and fuzzing.
std::string EncodeFrame(MessageType type, std::string_view payload);

// Incremental frame parsing for a non-blocking reader.
class FrameBuffer {
 public:
  void Append(const char* data, size_t n) { buf_.append(data, n); }
  // The next complete frame, if any. Throws ProtocolError on a bad header
  // (wrong magic or version, unknown type, oversized length).
  std::optional<Message> Pop();
  size_t buffered() const { return buf_.size(); }

 private:
  std::string buf_;
};

struct ArgSpec {
  std::string name;
  ir::DataType dtype;
  std::vector<int64_t> shape;
};

struct WorkloadMessage {
  int32_t num_threads = 0;  // kiln_runtime_set_num_threads
  uint64_t input_seed = 0;
  search::TimingConfig timing;
  std::vector<ArgSpec> args;
  codegen::ObjectCode reference;
  // Every argument after the reference call, as raw bytes, when the parent
  // has them from an earlier child: a child started after a crash then
  // skips the reference run (which may take far longer than a candidate).
  // Empty: the child runs `reference` and sends them back.
  std::vector<std::string> expected;
};

struct WorkloadReadyMessage {
  std::vector<std::string> expected;  // as in WorkloadMessage; empty if they were given
};

struct CandidateMessage {
  uint32_t index = 0;
  codegen::ObjectCode code;
  TestFault fault = TestFault::kNone;
  double slow_call_secs = 0;  // search::TimingConfig::slow_call_secs
};

// A CUDA program as the child launches it (rpc/runner_main/cuda_run.h): the
// launch description codegen::BuildCudaSource made, and its binaries.
struct CudaCandidateMessage {
  uint32_t index = 0;
  std::string arch;   // "sm_90", what the cubin is for
  std::string cubin;  // loaded when the device is `arch`
  std::string ptx;    // otherwise, compiled by the driver
  std::vector<codegen::CudaBuffer> buffers;
  std::vector<codegen::CudaLaunch> launches;
  TestFault fault = TestFault::kNone;
};

struct ResultMessage {
  search::MeasureStatus status = search::MeasureStatus::kInfraError;
  std::string message;
  std::vector<double> run_secs;
  bool verified = false;
};

// Bounds that make a payload plausible (reject before allocating).
constexpr size_t kMaxArgs = 1024;
constexpr size_t kMaxDims = 32;
constexpr int64_t kMaxArgBytes = int64_t{1} << 36;  // 64 GiB per argument

std::string Encode(const WorkloadMessage& m);
std::string Encode(const CandidateMessage& m);
std::string Encode(const ResultMessage& m);
std::string Encode(const WorkloadReadyMessage& m);
std::string Encode(const CudaCandidateMessage& m);
WorkloadMessage DecodeWorkload(std::string_view payload);
CandidateMessage DecodeCandidate(std::string_view payload);
ResultMessage DecodeResult(std::string_view payload);
WorkloadReadyMessage DecodeWorkloadReady(std::string_view payload);
// Checks the launch description on its own: 1..kMaxCudaLaunches launches,
// grid and block extents >= 1 within CUDA's limits, shared bytes within
// 0..kMaxCudaSharedBytes, argument indices naming buffers, buffer dtypes
// scalar, elements >= 0, a cubin or PTX. Whether the buffers match the
// workload's arguments is the child's check (it knows the workload).
CudaCandidateMessage DecodeCudaCandidate(std::string_view payload);
constexpr size_t kMaxCudaLaunches = 4096;
constexpr int64_t kMaxCudaSharedBytes = int64_t{1} << 20;
// The bytes an argument of this spec holds.
int64_t ArgBytes(const ArgSpec& a);

}  // namespace kiln::rpc
