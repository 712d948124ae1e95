// Base64 (RFC 4648, standard alphabet, padded), as TVM's MetaSchedule
// database stores workload blobs.
#pragma once

#include <string>

namespace kiln::database {

std::string EncodeBase64(const std::string& bytes);
// False (and *out unspecified) on a character outside the alphabet, bad
// padding or a length that is not a multiple of 4. Whitespace is not allowed.
bool DecodeBase64(const std::string& text, std::string* out);

}  // namespace kiln::database
