// Reading a config file into its Protobuf message: JSON (Protobuf's JSON
// mapping) for .json, Protobuf text format otherwise. Protobuf is the schema:
// a field the message does not have, or a value of the wrong type, is refused
// with an error that names the file, the line and the field.
#pragma once

#include <google/protobuf/message.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::config {

// what(): "FILE:LINE: field 'NAME': what is wrong" (the line and the field
// when they are known).
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& msg) : std::runtime_error(msg) {}
};

enum class ConfigFormat { kJson, kText };

// .json is JSON; anything else text format.
ConfigFormat FormatOfPath(const std::string& path);
std::string ReadConfigText(const std::string& path);  // throws ConfigError

// Parses `text` into `message` (cleared first); `name` is what errors call
// the input. Throws ConfigError.
void ParseConfigText(std::string_view text, ConfigFormat format, const std::string& name,
                     google::protobuf::Message* message);

// "FILE:LINE: field 'F': MESSAGE", the line looked up from the field in JSON
// text (0: left out), for semantic checks after parsing.
std::string FieldError(std::string_view text, ConfigFormat format, const std::string& name,
                       const std::string& field_path, const std::string& message);

}  // namespace kiln::config
