#include "rpc/farm/job_file.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "rpc/proto_convert.h"

namespace kiln::rpc::farm {
namespace {

// Collects the text format parser's complaints with their positions and,
// when the parser does not say it ("Expected integer, got: ..."), the field
// the position is in.
class Collector : public google::protobuf::io::ErrorCollector {
 public:
  Collector(std::string name, std::string_view text) : name_(std::move(name)), text_(text) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    // The parser counts lines and columns from 0.
    std::string e = name_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    const std::string field = FieldAt(line, column);
    if (!field.empty() && message.find(field) == std::string::npos) e += " (field '" + field + "')";
    errors_.push_back(std::move(e));
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  std::string Text() const {
    std::string s;
    for (const std::string& e : errors_) s += (s.empty() ? "" : "\n") + e;
    return s.empty() ? name_ + ": not a valid kiln.v1.TuningJob" : s;
  }

 private:
  // The name before the last ':' on `line` ahead of `column` ("seed" in
  // `seed: "seven"`), or "".
  std::string FieldAt(int line, int column) const {
    size_t begin = 0;
    for (int l = 0; l < line && begin != std::string_view::npos; ++l) {
      begin = text_.find('\n', begin);
      if (begin != std::string_view::npos) ++begin;
    }
    if (begin == std::string_view::npos) return "";
    std::string_view row = text_.substr(begin, static_cast<size_t>(std::max(0, column)));
    size_t colon = row.rfind(':');
    if (colon == std::string_view::npos) return "";
    size_t end = colon;
    while (end > 0 && row[end - 1] == ' ') --end;
    size_t start = end;
    while (start > 0 && (std::isalnum(static_cast<unsigned char>(row[start - 1])) || row[start - 1] == '_')) --start;
    return std::string(row.substr(start, end - start));
  }
  std::string name_;
  std::string_view text_;
  std::vector<std::string> errors_;
};

// The line of the first occurrence of `"key"` in JSON text (1-based), or 0.
int LineOfKey(std::string_view text, const std::string& key) {
  if (key.empty()) return 0;
  size_t at = text.find("\"" + key + "\"");
  if (at == std::string_view::npos) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// Protobuf's JSON errors name the field path ("workloads[0].wieght: Cannot
// find field.") but no position; the line is where that key first appears.
std::string JsonError(std::string_view text, const std::string& name, const std::string& message) {
  // "(trials): invalid value ..." or "wieght: Cannot find field.".
  std::string field;
  std::string head;
  const size_t open = message.find('(');
  const size_t close = message.find(')');
  const size_t colon = message.find(':');
  if (open != std::string::npos && close != std::string::npos && open < close &&
      (colon == std::string::npos || open < colon)) {
    head = message.substr(open + 1, close - open - 1);
  } else if (colon != std::string::npos) {
    head = message.substr(0, colon);
  }
  // The last path element, without an index: "workloads[0].wieght" -> "wieght".
  size_t dot = head.rfind('.');
  field = dot == std::string::npos ? head : head.substr(dot + 1);
  field = field.substr(0, field.find('['));
  const int line = LineOfKey(text, field);
  return name + (line > 0 ? ":" + std::to_string(line) : "") + ": " + message;
}

}  // namespace

v1::TuningJob ParseJobText(std::string_view text, JobFileFormat format, const std::string& name) {
  v1::TuningJob job;
  if (format == JobFileFormat::kText) {
    google::protobuf::TextFormat::Parser parser;
    Collector errors(name, text);
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(std::string(text), &job)) throw JobFileError(errors.Text());
  } else {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(std::string(text), &job, options);
    if (!status.ok()) throw JobFileError(JsonError(text, name, std::string(status.message())));
  }
  try {
    ValidateJobShape(job);
  } catch (const JobFileError& e) {
    throw JobFileError(name + ": " + e.what());
  }
  return job;
}

v1::TuningJob ParseJobFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw JobFileError(path + ": cannot read the job file");
  std::ostringstream text;
  text << in.rdbuf();
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return ParseJobText(text.str(), json ? JobFileFormat::kJson : JobFileFormat::kText, path);
}

void ValidateJobShape(const v1::TuningJob& job) {
  if (job.workloads_size() == 0) throw JobFileError("workloads: none given; a job tunes at least one");
  double weights = 0;
  for (int i = 0; i < job.workloads_size(); ++i) {
    const v1::JobWorkload& w = job.workloads(i);
    const std::string where = "workloads[" + std::to_string(i) + "]";
    if (w.spec().empty() && w.workload().text().empty()) {
      throw JobFileError(where + ": neither spec nor workload.text is set");
    }
    if (!std::isfinite(w.weight()) || w.weight() < 0) {
      throw JobFileError(where + ".weight: " + std::to_string(w.weight()) + "; must be >= 0");
    }
    weights += w.weight() == 0 ? 1 : w.weight();
  }
  if (weights <= 0) throw JobFileError("workloads: the weights are all zero");
  if (job.trials() < 0 || job.trials() > 100000000) {
    throw JobFileError("trials: " + std::to_string(job.trials()) + "; must be 1 to 1e8");
  }
  if (job.trials() > 0 && job.trials() < job.workloads_size()) {
    throw JobFileError("trials: " + std::to_string(job.trials()) + " for " +
                       std::to_string(job.workloads_size()) + " workloads; each needs at least one");
  }
  if (job.strategy().trials_per_iter() < 0 || job.strategy().trials_per_iter() > 100000) {
    throw JobFileError("strategy.trials_per_iter: " + std::to_string(job.strategy().trials_per_iter()));
  }
  try {
    FromProto(job.timing());
  } catch (const std::invalid_argument& e) {
    throw JobFileError(e.what());
  }
}

void ValidateJob(const v1::TuningJob& job) {
  ValidateJobShape(job);
  if (job.trials() < 1) {
    throw JobFileError("trials: " + std::to_string(job.trials()) + "; must be 1 to 1e8");
  }
  if (job.target().spec().empty()) throw JobFileError("target.spec: empty");
  const std::string& strategy = job.strategy().name();
  if (!strategy.empty() && strategy != "replay" && strategy != "evolutionary") {
    throw JobFileError("strategy.name: '" + strategy +
                       "'; the farm knows 'replay' and 'evolutionary'");
  }
}

}  // namespace kiln::rpc::farm
