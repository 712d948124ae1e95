// Runs the built kiln binary for the CLI tests, and the temporary files they
// hand it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace kiln::testing {

struct KilnResult {
  int code;
  std::string out;  // stdout, and stderr unless asked not to
};

inline KilnResult RunKiln(const std::string& args, bool with_stderr = true) {
  const std::string cmd = std::string(KILN_BINARY_DIR) + "/tools/kiln " + args +
                          (with_stderr ? " 2>&1" : " 2>/dev/null");
  KilnResult r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A file holding `contents` in the system's temporary directory, removed when
// this goes out of scope.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    path_ = (std::filesystem::temp_directory_path() / "kiln_test_XXXXXX").string();
    int fd = mkstemp(path_.data());
    if (fd < 0) {
      path_.clear();
      return;
    }
    FILE* f = fdopen(fd, "w");
    fwrite(contents.data(), 1, contents.size(), f);
    fclose(f);
  }
  ~TempFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kiln::testing
