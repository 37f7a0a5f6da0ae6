// ReadKernelFile: a vanished file or process is NotFound, a read error a
// Status, never an exception (a std::ifstream throws on a read error).
#include "base/kernel_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nbdk {
namespace {

class KernelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-kernel-file-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(KernelFileTest, ReadsTheWholeFileAndCutsAtTheLimit) {
  std::ofstream(dir_ + "/f") << std::string(10000, 'x') << "end";
  auto whole = ReadKernelFile(dir_ + "/f");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->size(), 10003u);
  EXPECT_TRUE(whole->ends_with("end"));
  auto cut = ReadKernelFile(dir_ + "/f", 100);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(*cut, std::string(100, 'x'));
}

TEST_F(KernelFileTest, AMissingFileIsNotFound) {
  auto r = ReadKernelFile(dir_ + "/gone");
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find(dir_ + "/gone"), std::string::npos) << r.status().message();
}

// A read that fails after the open (here EISDIR; for /proc/<pid>/* of an
// exiting process, ESRCH) is an error naming the file.
TEST_F(KernelFileTest, AReadErrorAfterTheOpenIsAStatusNotAnException) {
  std::filesystem::create_directories(dir_ + "/dir");
  auto r = ReadKernelFile(dir_ + "/dir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("read " + dir_ + "/dir"), std::string::npos) << r.status().message();
}

TEST_F(KernelFileTest, ReadsProcOfALiveProcess) {
  auto r = ReadKernelFile("/proc/" + std::to_string(getpid()) + "/stat");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->starts_with(std::to_string(getpid()) + " (")) << *r;
}

}  // namespace
}  // namespace nbdk
