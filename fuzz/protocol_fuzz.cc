// libFuzzer target for the kiln-runner wire protocol: no byte string may
// crash the frame reader or the payload decoders; each either throws
// ProtocolError or decodes to a message that encodes and decodes again to the
// same bytes. The first byte picks the input's form: 0, 1, 2, 3, 4 decode the
// rest as a workload / candidate / result / workload-ready / CUDA candidate
// payload; anything else reads the rest as
// a stream of frames and decodes each frame by its type.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "rpc/protocol.h"

namespace {

using namespace kiln::rpc;

// Decodes `payload` as a message of `type`; if it decodes, its encoding must
// be a fixed point of decode + encode.
template <typename Decode>
void CheckPayload(std::string_view payload, Decode decode) {
  std::string once;
  try {
    once = Encode(decode(payload));
  } catch (const ProtocolError&) {
    return;
  }
  if (Encode(decode(once)) != once) std::abort();
}

void CheckMessage(const Message& m) {
  switch (m.type) {
    case MessageType::kWorkload: CheckPayload(m.payload, DecodeWorkload); break;
    case MessageType::kCandidate: CheckPayload(m.payload, DecodeCandidate); break;
    case MessageType::kResult: CheckPayload(m.payload, DecodeResult); break;
    case MessageType::kWorkloadReady: CheckPayload(m.payload, DecodeWorkloadReady); break;
    case MessageType::kCudaCandidate: CheckPayload(m.payload, DecodeCudaCandidate); break;
    case MessageType::kError: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 0: CheckPayload(rest, DecodeWorkload); return 0;
    case 1: CheckPayload(rest, DecodeCandidate); return 0;
    case 2: CheckPayload(rest, DecodeResult); return 0;
    case 3: CheckPayload(rest, DecodeWorkloadReady); return 0;
    case 4: CheckPayload(rest, DecodeCudaCandidate); return 0;
    default: break;
  }
  FrameBuffer frames;
  frames.Append(rest.data(), rest.size());
  size_t consumed = 0;
  try {
    while (auto m = frames.Pop()) {
      // A frame re-encodes to exactly the bytes it was read from.
      const std::string frame = EncodeFrame(m->type, m->payload);
      if (rest.substr(consumed, frame.size()) != frame) std::abort();
      consumed += frame.size();
      CheckMessage(*m);
    }
  } catch (const ProtocolError&) {
    return 0;
  }
  if (consumed + frames.buffered() != rest.size()) std::abort();
  return 0;
}
