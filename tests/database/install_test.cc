// Installs the build into a temporary prefix and builds a tiny C program
// against the installed package, once through find_package(kiln) and once
// through pkg-config, then runs both against a real database.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "database/database.h"
#include "ir/workloads/suite.h"

namespace {

int Sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

const char* kProgram = R"c(
#include <kiln/kiln_db.h>
#include <stdio.h>
int main(int argc, char** argv) {
  kiln_db* db = NULL;
  if (kiln_db_open(argv[1], &db) != KILN_DB_OK) {
    printf("open: %s\n", kiln_db_last_error(NULL));
    return 2;
  }
  const char* trace = NULL;
  double secs = 0;
  kiln_db_status s = kiln_db_lookup(db, argv[2], argv[3], &trace, &secs);
  if (s == KILN_DB_OK) printf("hit %g %s\n", secs, trace);
  else printf("%s: %s\n", kiln_db_status_string(s), kiln_db_last_error(db));
  kiln_db_close(db);
  return s == KILN_DB_OK ? 0 : 3;
}
)c";

TEST(Install, FindPackageAndPkgConfigBuildAndRunAProgram) {
  std::string root = testing::TempDir() + "kiln_install_" + std::to_string(getpid());
  std::string prefix = root + "/prefix";
  ASSERT_EQ(Sh("rm -rf " + root + " && mkdir -p " + root + "/app"), 0);
  ASSERT_EQ(Sh("cmake --install " KILN_BINARY_DIR " --component Unspecified --prefix " + prefix +
               " > " + root + "/install.log 2>&1"),
            0);
  std::ofstream(root + "/app/main.c") << kProgram;
  std::ofstream(root + "/app/CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.20)\nproject(app C)\nfind_package(kiln REQUIRED)\n"
         "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE kiln::kiln_db)\n";
  ASSERT_EQ(Sh("cmake -S " + root + "/app -B " + root + "/app/build -DCMAKE_PREFIX_PATH=" + prefix +
               " > " + root + "/cmake.log 2>&1 && cmake --build " + root + "/app/build >> " + root +
               "/cmake.log 2>&1"),
            0)
      << "see " << root << "/cmake.log";
  std::string pc = "PKG_CONFIG_PATH=" + prefix + "/lib/pkgconfig:" + prefix +
                   "/lib/x86_64-linux-gnu/pkgconfig pkg-config";
  ASSERT_EQ(Sh("cc " + root + "/app/main.c -o " + root + "/app/pc_app $(" + pc +
               " --cflags --libs kiln) > " + root + "/pc.log 2>&1"),
            0)
      << "see " << root << "/pc.log";

  std::string db_path = root + "/tune.db";
  std::string hash;
  {
    using namespace kiln::database;
    Database db = Database::Open(db_path);
    kiln::ir::PrimFunc f = kiln::ir::MakeWorkload("GMM", 0);
    WorkloadId w = db.CommitWorkload(f);
    hash = db.WorkloadHash(w);
    TuningRecord r;
    r.target = "llvm -mcpu=skylake-avx512";
    r.trace_json = "{\"insts\":[]}";
    r.run_seconds = {0.25};
    r.verified = true;
    db.CommitRecord(w, r);
  }
  std::string libpath = "LD_LIBRARY_PATH=" + prefix + "/lib:" + prefix + "/lib/x86_64-linux-gnu ";
  for (const std::string& app : {root + "/app/build/app", root + "/app/pc_app"}) {
    EXPECT_EQ(Sh(libpath + app + " " + db_path + " " + hash + " 'llvm -mcpu=skylake-avx512' > " +
                 root + "/out.txt"),
              0)
        << app;
    std::ifstream in(root + "/out.txt");
    std::string out((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(out, "hit 0.25 {\"insts\":[]}\n") << app;
    EXPECT_EQ(Sh(libpath + app + " " + db_path + " " + hash + " 'cuda -arch=sm_90' > " + root +
                 "/out.txt"),
              3)
        << app;
    std::ifstream in2(root + "/out.txt");
    std::string miss((std::istreambuf_iterator<char>(in2)), {});
    EXPECT_NE(miss.find("nothing measured for this target"), std::string::npos) << miss;
    EXPECT_EQ(Sh(libpath + app + " " + root + "/app/main.c x y > /dev/null"), 2) << app;
  }
  Sh("rm -rf " + root);
}

}  // namespace
