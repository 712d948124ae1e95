#include "config/config_file.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "config/json_location.h"

namespace kiln::config {
namespace {

// The field a text-format error points into: the name before the last ':'
// ahead of the column on that line ("cores" in `cores: "two"`), or "".
std::string TextFieldAt(std::string_view text, int line, int column) {
  size_t begin = 0;
  for (int l = 0; l < line && begin != std::string_view::npos; ++l) {
    begin = text.find('\n', begin);
    if (begin != std::string_view::npos) ++begin;
  }
  if (begin == std::string_view::npos) return "";
  std::string_view row = text.substr(begin, static_cast<size_t>(std::max(0, column)));
  const size_t colon = row.rfind(':');
  if (colon == std::string_view::npos) return "";
  size_t end = colon;
  while (end > 0 && row[end - 1] == ' ') --end;
  size_t start = end;
  while (start > 0 &&
         (std::isalnum(static_cast<unsigned char>(row[start - 1])) || row[start - 1] == '_')) {
    --start;
  }
  return std::string(row.substr(start, end - start));
}

// The text format parser's first complaint, with the 1-based line and the
// field when the message does not name it ("Expected integer, got: ...").
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  TextErrors(std::string name, std::string_view text) : name_(std::move(name)), text_(text) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!first_.empty()) return;
    // The parser counts lines and columns from 0.
    first_ = name_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": ";
    const std::string field = TextFieldAt(text_, line, column);
    if (!field.empty() && message.find(field) == std::string::npos) {
      first_ += "field '" + field + "': ";
    }
    first_ += message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  std::string name_;
  std::string_view text_;
  std::string first_;
};

// The line a text-format field is set on: the first line starting with
// `name` followed by ':' or '{' (0 when none).
int LineOfTextField(std::string_view text, const std::string& name) {
  int line = 1;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    std::string_view row =
        text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    const size_t at = row.find_first_not_of(" \t");
    if (at != std::string_view::npos && row.substr(at, name.size()) == name) {
      const size_t after = row.find_first_not_of(" \t", at + name.size());
      if (after != std::string_view::npos && (row[after] == ':' || row[after] == '{')) return line;
    }
    if (end == std::string_view::npos) break;
    begin = end + 1;
    ++line;
  }
  return 0;
}

// Protobuf's JSON messages name the field in three ways: "wieght: Cannot
// find field." (top level), "(timing) numbr: Cannot find field." (the
// parent's path in parentheses, then the field) and "(trials): invalid value
// ..." (the whole path in parentheses).
std::string FieldOfJsonError(const std::string& message) {
  auto name_before_colon = [](std::string_view rest) -> std::string {
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0) return "";
    const std::string_view name = rest.substr(0, colon);
    if (name.find(' ') != std::string_view::npos) return "";
    return std::string(name);
  };
  if (!message.empty() && message[0] == '(') {
    const size_t close = message.find(')');
    if (close == std::string::npos) return "";
    const std::string parent = message.substr(1, close - 1);
    std::string_view rest = std::string_view(message).substr(close + 1);
    while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    const std::string name = rest.empty() || rest[0] == ':' ? "" : name_before_colon(rest);
    return name.empty() ? parent : parent + "." + name;
  }
  return name_before_colon(message);
}

std::string Where(const std::string& name, int line) {
  return name + (line > 0 ? ":" + std::to_string(line) : "");
}

}  // namespace

ConfigFormat FormatOfPath(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0 ? ConfigFormat::kJson
                                                                            : ConfigFormat::kText;
}

std::string ReadConfigText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string FieldError(std::string_view text, ConfigFormat format, const std::string& name,
                       const std::string& field_path, const std::string& message) {
  std::string last = field_path.substr(
      field_path.find_last_of('.') == std::string::npos ? 0 : field_path.find_last_of('.') + 1);
  last = last.substr(0, last.find('['));
  const int line = format == ConfigFormat::kJson ? LineOfJsonPath(text, field_path)
                                                 : LineOfTextField(text, last);
  return Where(name, line) + ": field '" + field_path + "': " + message;
}

void ParseConfigText(std::string_view text, ConfigFormat format, const std::string& name,
                     google::protobuf::Message* message) {
  message->Clear();
  if (format == ConfigFormat::kText) {
    google::protobuf::TextFormat::Parser parser;
    TextErrors errors(name, text);
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(std::string(text), message)) {
      throw ConfigError(errors.first().empty()
                            ? name + ": not a valid " + message->GetTypeName()
                            : errors.first() + " (in " + message->GetTypeName() + ")");
    }
    return;
  }
  // Syntax first, with nlohmann's byte offset: Protobuf's JSON parser gives
  // no position for a stray comma.
  try {
    [[maybe_unused]] const nlohmann::json parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(Where(name, LineOfOffset(text, e.byte > 0 ? e.byte - 1 : 0)) +
                      ": not valid JSON: " + e.what());
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status =
      google::protobuf::util::JsonStringToMessage(std::string(text), message, options);
  if (status.ok()) return;
  const std::string why(status.message());
  const std::string field = FieldOfJsonError(why);
  if (field.empty()) throw ConfigError(name + ": " + why + " (in " + message->GetTypeName() + ")");
  const std::string what = why.find("Cannot find field") != std::string::npos
                               ? "no such field in the schema (" + message->GetTypeName() + ")"
                               : why;
  throw ConfigError(FieldError(text, format, name, field, what));
}

}  // namespace kiln::config
