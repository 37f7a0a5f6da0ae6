#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "csi/key_file.h"
#include "csi/node/filesystem.h"

namespace nbdk {
namespace {

TEST(FilesystemTest, MkfsArgvIsTheProgramQuietTheOptionsAndTheDevice) {
  EXPECT_EQ(MkfsArgv("ext4", {"-m0", "-Enodiscard"}, "/dev/nbd0"),
            (std::vector<std::string>{"mkfs.ext4", "-q", "-m0", "-Enodiscard", "/dev/nbd0"}));
  EXPECT_EQ(MkfsArgv("xfs", {"-K"}, "/dev/nbd1"), (std::vector<std::string>{"mkfs.xfs", "-q", "-K", "/dev/nbd1"}));
  EXPECT_EQ(MkfsArgv("xfs", {}, "/dev/nbd1"), (std::vector<std::string>{"mkfs.xfs", "-q", "/dev/nbd1"}));
  EXPECT_TRUE(MkfsArgv("btrfs", {}, "/dev/nbd1").empty());
}

TEST(FilesystemTest, MountArgvAddsNouuidForXfsAndNetdevForAll) {
  EXPECT_EQ(MountArgv("xfs", "/dev/nbd0", "/t", {"noatime"}),
            (std::vector<std::string>{"mount", "-t", "xfs", "-o", "noatime,nouuid,_netdev", "/dev/nbd0", "/t"}));
  EXPECT_EQ(MountArgv("ext4", "/dev/nbd0", "/t", {}),
            (std::vector<std::string>{"mount", "-t", "ext4", "-o", "_netdev", "/dev/nbd0", "/t"}));
}

TEST(FilesystemTest, ProbeOfAFileWithoutFilesystemIsBlank) {
  std::string path = ::testing::TempDir() + "/blank.img";
  std::ofstream(path) << std::string(1 << 20, '\0');
  EventLoop loop;
  Result<DeviceSignature> got = Status::Internal("not run");
  ProbeDevice(loop, path, [&](Result<DeviceSignature> r) {
    got = std::move(r);
    loop.Stop();
  });
  loop.Run();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->blank());
  EXPECT_TRUE(loop.Shutdown().ok());
  std::filesystem::remove(path);
}

TEST(FilesystemTest, MkfsThenProbeFindsExt4) {
  std::string path = ::testing::TempDir() + "/ext4.img";
  std::ofstream(path) << std::string(8 << 20, '\0');
  EventLoop loop;
  Status made = Status::Internal("not run");
  Result<DeviceSignature> probed = Status::Internal("not run");
  MakeFilesystem(loop, "ext4", {"-m0"}, path, [&](Status s) {
    made = s;
    ProbeDevice(loop, path, [&](Result<DeviceSignature> r) {
      probed = std::move(r);
      loop.Stop();
    });
  });
  loop.Run();
  ASSERT_TRUE(made.ok()) << made.ToString();
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  EXPECT_EQ(probed->type, "ext4");
  EXPECT_TRUE(loop.Shutdown().ok());
  std::filesystem::remove(path);
}

// A partition table alone is data: the old TYPE-only probe called it blank
// and mkfs overwrote it.
TEST(FilesystemTest, APartitionTableIsNotBlank) {
  std::string path = ::testing::TempDir() + "/mbr.img";
  std::string image(8 << 20, '\0');
  unsigned char entry[16] = {0x00, 0,    0, 0, 0x83, 0,    0, 0,
                             0x00, 0x08, 0, 0, 0x00, 0x38, 0, 0};  // LBA 2048, 14336 sectors
  std::copy(entry, entry + 16, image.begin() + 446);
  image[510] = '\x55';
  image[511] = '\xaa';
  std::ofstream(path) << image;
  EventLoop loop;
  Result<DeviceSignature> got = Status::Internal("not run");
  ProbeDevice(loop, path, [&](Result<DeviceSignature> r) {
    got = std::move(r);
    loop.Stop();
  });
  loop.Run();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(got->blank());
  EXPECT_EQ(got->partition_table, "dos");
  EXPECT_TRUE(loop.Shutdown().ok());
  std::filesystem::remove(path);
}

// Only a device that was read can be blank: a path that is missing, not a
// device or of size 0 (an nbd device without a connection) is an error
// naming it. (A device whose reads fail: node_vm's UnreadableDeviceVmTest,
// on device-mapper's error target.)
TEST(FilesystemTest, WhatWasNotReadIsAnErrorNeverBlank) {
  std::string dir = ::testing::TempDir() + "/probe-not-a-device";
  std::filesystem::create_directories(dir);
  std::string empty = ::testing::TempDir() + "/probe-empty.img";
  std::ofstream(empty).close();
  for (const std::string& path : {dir, dir + "/missing", empty}) {
    auto probed = ProbeDeviceSignature(path);
    ASSERT_FALSE(probed.ok()) << path << " probed as " << probed->Describe();
    EXPECT_NE(probed.status().message().find(path), std::string::npos) << probed.status().ToString();
  }
  EXPECT_EQ(ProbeDeviceSignature(empty).status().code(), Code::kFailedPrecondition);
  std::filesystem::remove(empty);
}

TEST(FilesystemTest, UnsupportedFsTypeIsFailedPrecondition) {
  EventLoop loop;
  Status got;
  MakeFilesystem(loop, "btrfs", {}, "/dev/null", [&](Status s) {
    got = s;
    loop.Stop();
  });
  loop.Run();
  EXPECT_EQ(got.code(), Code::kFailedPrecondition);
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(FilesystemTest, UnmountOfUnmountedPathIsSuccess) {
  EventLoop loop;
  Status got = Status::Internal("not run");
  std::string dir = ::testing::TempDir() + "/not-a-mount";
  std::filesystem::create_directories(dir);
  Unmount(loop, dir, [&](Status s) {
    got = s;
    loop.Stop();
  });
  loop.Run();
  EXPECT_TRUE(got.ok()) << got.ToString();
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(KeyFileTest, WrittenPrivateAndRemoved) {
  std::string dir = ::testing::TempDir() + "/keys";
  std::filesystem::remove_all(dir);
  // The longest ID the controller issues: its name must fit NAME_MAX.
  std::string id = "0001-0040-" + std::string(118, 'a');
  ASSERT_EQ(id.size(), 128u);
  auto path = WriteKeyFile(dir, id, "AQBsecret==");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ(std::filesystem::path(*path).parent_path(), dir);
  struct stat st {};
  ASSERT_EQ(::stat(path->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(*path);
  std::string key;
  in >> key;
  EXPECT_EQ(key, "AQBsecret==");
  // Rewriting replaces it in place.
  ASSERT_TRUE(WriteKeyFile(dir, id, "AQBother==").ok());
  EXPECT_TRUE(RemoveKeyFile(*path).ok());
  EXPECT_FALSE(std::filesystem::exists(*path));
  EXPECT_TRUE(RemoveKeyFile(*path).ok()) << "removing twice is fine";
}

TEST(KeyFileTest, ANameThatIsNoSingleFileNameIsRefused) {
  std::string dir = ::testing::TempDir() + "/keys";
  for (const char* bad : {"0001-0024-vol/../x", "..", ".", ""}) {
    auto r = WriteKeyFile(dir, bad, "AQBsecret==");
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(::testing::TempDir() + "/x.key"));
}

TEST(KeyFileTest, ErrorNeverContainsTheKey) {
  auto r = WriteKeyFile("/proc/no-such-dir/keys", "v", "AQBsecret==");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("AQBsecret"), std::string::npos);
}

}  // namespace
}  // namespace nbdk
