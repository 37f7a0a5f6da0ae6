// LUKS on the host: libcryptsetup formats and reads a LUKS2 header in a
// regular file without device-mapper. The header is then read back through
// libcryptsetup's own calls (its JSON), apart from the code under test. Opening,
// closing and resizing a mapping need device-mapper: the VM tests do them.
// Formatting and each passphrase check run Argon2 for ~2 s.
#include "encryption/luks_volume.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <libcryptsetup.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace nbdk {
namespace {

constexpr std::string_view kPassphrase = "4OHi4-Tl5ufo6err7O3u7_Dx8vM=";
constexpr off_t kFileBytes = off_t{32} << 20;

// The kernel's device-mapper (libdevmapper creates /dev/mapper/control
// whether or not the kernel has it).
bool HasDeviceMapper() { return ::access("/sys/class/misc/device-mapper", F_OK) == 0; }

TEST(LuksMapperNameTest, IsCephCsisName) {
  auto name = LuksMapperName("0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "luks-rbd-0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51");
  EXPECT_EQ(LuksMapperPath(*name), "/dev/mapper/" + *name);
}

TEST(LuksMapperNameTest, RefusesWhatDeviceMapperCannotName) {
  EXPECT_TRUE(LuksMapperName(std::string(118, 'v')).ok());  // 127 bytes with the prefix
  auto longer = LuksMapperName(std::string(119, 'v'));
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.status().code(), Code::kInvalidArgument);
  EXPECT_NE(longer.status().message().find("128 bytes, device-mapper allows 127"), std::string::npos)
      << longer.status().message();
  EXPECT_EQ(LuksMapperName("").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(LuksMapperName("a/b").status().code(), Code::kInvalidArgument);
}

TEST(LuksMappingTest, AnInactiveMapperIsNotFoundOrDeviceMapperUnavailable) {
  const std::string name = "luks-rbd-nbdkeeper-test-never-opened";
  Status backing = ActiveLuksBacking(name).status();
  Code expected = HasDeviceMapper() ? Code::kNotFound : Code::kUnavailable;  // asked after a first use loaded it
  EXPECT_EQ(backing.code(), expected) << backing.ToString();
  EXPECT_EQ(CloseLuks(name).code(), expected);
  EXPECT_EQ(ResizeLuks(name).code(), expected);
}

// The header's JSON as libcryptsetup itself reads it, apart from the code
// under test.
rapidjson::Document HeaderJson(const std::string& path) {
  rapidjson::Document doc;
  crypt_device* cd = nullptr;
  EXPECT_EQ(crypt_init(&cd, path.c_str()), 0);
  std::unique_ptr<crypt_device, decltype(&crypt_free)> device(cd, crypt_free);
  EXPECT_EQ(crypt_load(cd, CRYPT_LUKS2, nullptr), 0);
  const char* json = nullptr;
  EXPECT_EQ(crypt_dump_json(cd, &json, 0), 0);
  if (json != nullptr) doc.Parse(json);
  return doc;
}

std::string Text(const rapidjson::Value& v) { return v.IsString() ? v.GetString() : "(not a string)"; }

// A 32 MiB sparse file; removed when the test ends.
class SparseFile {
 public:
  SparseFile() {
    char tmpl[] = "/tmp/luks-volume-XXXXXX";
    int fd = ::mkstemp(tmpl);
    path_ = tmpl;
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, kFileBytes), 0);
    ::close(fd);
  }
  ~SparseFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One test, one format: Argon2 makes each format and each passphrase check
// take seconds.
TEST(LuksFileTest, FormatsWhatCephCsisLuksFormatMakes) {
  SparseFile file;
  auto blank = IsLuks(file.path());
  ASSERT_TRUE(blank.ok()) << blank.status().ToString();
  EXPECT_FALSE(*blank);
  Status formatted = FormatLuks(file.path(), SecretBytes::CopyOf(kPassphrase));
  if (!formatted.ok() && !HasDeviceMapper()) {
    GTEST_SKIP() << "this host cannot format LUKS in a file without device-mapper: " << formatted.ToString();
  }
  ASSERT_TRUE(formatted.ok()) << formatted.ToString();
  auto luks = IsLuks(file.path());
  ASSERT_TRUE(luks.ok()) << luks.status().ToString();
  EXPECT_TRUE(*luks);

  rapidjson::Document header = HeaderJson(file.path());
  ASSERT_TRUE(header.IsObject());
  const rapidjson::Value& slot = header["keyslots"]["0"];
  EXPECT_EQ(Text(slot["kdf"]["type"]), "argon2id");
  EXPECT_EQ(slot["kdf"]["memory"].GetInt(), 32768);  // --pbkdf-memory 32768
  EXPECT_EQ(Text(slot["af"]["hash"]), "sha256");     // --hash sha256
  EXPECT_EQ(slot["key_size"].GetInt(), 64);
  EXPECT_EQ(header["keyslots"].MemberCount(), 1u);  // slot 0, the only one
  EXPECT_EQ(Text(header["digests"]["0"]["hash"]), "sha256");
  EXPECT_EQ(Text(header["segments"]["0"]["encryption"]), "aes-xts-plain64");

  crypt_device* cd = nullptr;
  ASSERT_EQ(crypt_init(&cd, file.path().c_str()), 0);
  std::unique_ptr<crypt_device, decltype(&crypt_free)> device(cd, crypt_free);
  ASSERT_EQ(crypt_load(cd, CRYPT_LUKS2, nullptr), 0);
  // A NULL name checks a passphrase without activating anything.
  EXPECT_EQ(crypt_activate_by_passphrase(cd, nullptr, CRYPT_ANY_SLOT, kPassphrase.data(), kPassphrase.size(), 0), 0);
  std::string wrong = std::string(kPassphrase) + "\n";  // every byte counts, as with ceph-csi's -d /dev/stdin
  EXPECT_EQ(crypt_activate_by_passphrase(cd, nullptr, CRYPT_ANY_SLOT, wrong.data(), wrong.size(), 0), -EPERM);
}

TEST(LuksFileTest, LibcryptsetupPrintsNothing) {
  // Its default log writes to stdout and stderr; ours keeps error lines
  // for the Status only. Reading a blank file's header logs an error.
  SparseFile blank;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  auto luks = IsLuks(blank.path());
  Status no_header = OpenLuks(blank.path(), "luks-rbd-nbdkeeper-test-blank", SecretBytes::CopyOf(kPassphrase));
  std::string out = ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(luks.ok());
  EXPECT_FALSE(*luks);
  EXPECT_FALSE(no_header.ok());
  EXPECT_EQ(out, "");
}

TEST(LuksFormatTest, RefusesAnEmptyPassphraseAndNamesAMissingDevice) {
  EXPECT_EQ(FormatLuks("/tmp/nowhere", SecretBytes()).code(), Code::kInvalidArgument);
  Status missing = FormatLuks("/tmp/nbdkeeper-no-such-device", SecretBytes::CopyOf(kPassphrase));
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("/tmp/nbdkeeper-no-such-device"), std::string::npos) << missing.ToString();
  auto luks = IsLuks("/tmp/nbdkeeper-no-such-device");
  EXPECT_FALSE(luks.ok());
}

}  // namespace
}  // namespace nbdk
