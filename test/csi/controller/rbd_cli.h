// The rbd and rados CLIs as the VM test's cephx user, for the Controller VM
// tests that check an image as an operator would see it (`rbd info`,
// `rbd image-meta list`, `rbd config image list`, `rados ls`).
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "test/common/vm_command.h"
#include "test/csi/vm_node.h"

namespace nbdk::vmtest {

// `rbd <args> --format json` as the test's cephx user, parsed; a null
// document when the command fails.
inline rapidjson::Document RbdJson(std::vector<std::string> args) {
  std::vector<std::string> argv = {"rbd", "-c", Ceph().conf, "--id", Ceph().user, "--keyfile", Ceph().keyfile};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  rapidjson::Document doc;
  auto out = RunCommand(argv);
  EXPECT_TRUE(out.ok() && out->exit.code == 0) << argv[3] << " " << args.front();
  if (out.ok() && out->exit.code == 0) doc.Parse(out->stdout_text.c_str());
  return doc;
}

inline std::vector<std::string> RadosLs(const std::string& pool) {
  auto out =
      RunCommand({"rados", "-c", Ceph().conf, "--id", Ceph().user, "--keyfile", Ceph().keyfile, "-p", pool, "ls"});
  EXPECT_TRUE(out.ok() && out->exit.code == 0) << "rados -p " << pool << " ls";
  std::vector<std::string> objects;
  if (!out.ok()) return objects;
  size_t start = 0;
  for (size_t nl; (nl = out->stdout_text.find('\n', start)) != std::string::npos; start = nl + 1) {
    objects.push_back(out->stdout_text.substr(start, nl - start));
  }
  return objects;
}

}  // namespace nbdk::vmtest
