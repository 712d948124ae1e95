// SplitMix64's finalizer: a bijective mix of 64 bits in which every input
// bit affects every output bit. Kiln forks random streams with it (a slot's
// seed from (seed, round, index)) and mixes hashes with seeds, so that
// nearby inputs give unrelated outputs.
#pragma once

#include <cstdint>

namespace kiln::support {

inline uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace kiln::support
