#include "test/container/daemonset_container.h"

#include <rapidjson/document.h>

#include <filesystem>
#include <system_error>

#include "base/command.h"
#include "test/common/vm_command.h"

namespace nbdk::containertest {

namespace {

Result<std::vector<std::string>> Strings(const rapidjson::Document& doc, const char* key) {
  auto it = doc.FindMember(key);
  if (it == doc.MemberEnd() || !it->value.IsArray()) return Status::InvalidArgument(std::string("no array ") + key);
  std::vector<std::string> out;
  for (const auto& v : it->value.GetArray()) {
    if (!v.IsString()) return Status::InvalidArgument(std::string("a non-string in ") + key);
    out.emplace_back(v.GetString());
  }
  return out;
}

}  // namespace

Result<DaemonSetContainer> DaemonSetContainer::FromManifest(const std::string& manifest, const std::string& node_name,
                                                            const std::string& config_map_dir) {
  // The pod IP (hostNetwork: the node's address) is loopback, where the
  // tests read /status.
  std::vector<std::string> argv = {NBDK_SOURCE_DIR "/test/container/daemonset_podman.py",
                                   manifest,
                                   "--node-name",
                                   node_name,
                                   "--pod-ip",
                                   "127.0.0.1",
                                   "--config-map",
                                   "ceph-csi-config=" + config_map_dir};
  Result<vmtest::CommandOutput> out = vmtest::RunCommand(argv);
  if (!out.ok()) return out.status();
  if (out->exit.code != 0) return Status::Internal(vmtest::JoinArgv(argv) + ": " + out->exit.ToString());
  rapidjson::Document doc;
  doc.Parse(out->stdout_text.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("image") || !doc["image"].IsString() ||
      !doc.HasMember("csi_endpoint") || !doc["csi_endpoint"].IsString() || !doc.HasMember("health_port") ||
      !doc["health_port"].IsInt()) {
    return Status::InvalidArgument("daemonset_podman.py printed: " + out->stdout_text);
  }
  DaemonSetContainer c;
  c.image = doc["image"].GetString();
  c.csi_endpoint = doc["csi_endpoint"].GetString();
  c.health_port = doc["health_port"].GetInt();
  for (auto [key, field] : {std::pair{"options", &c.options}, {"args", &c.args}, {"create_dirs", &c.create_dirs}}) {
    auto list = Strings(doc, key);
    if (!list.ok()) return list.status();
    *field = std::move(*list);
  }
  return c;
}

Status DaemonSetContainer::Run(const std::string& name, const std::string& image,
                               const std::vector<std::string>& extra_args) const {
  for (const std::string& dir : create_dirs) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::FromErrno(ec.value(), "mkdir " + dir);
  }
  std::vector<std::string> argv = {"run", "--detach", "--name", name};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(image);
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  Result<std::string> id = Podman(argv);
  return id.ok() ? Status::Ok() : id.status();
}

Result<std::string> Podman(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"podman"};
  argv.insert(argv.end(), args.begin(), args.end());
  // stderr (podman's warnings and errors) goes to the test's log.
  Result<vmtest::CommandOutput> out = vmtest::RunCommand(argv);
  if (!out.ok()) return out.status();
  if (out->exit.code != 0) {
    return Status::Internal(vmtest::JoinArgv(argv) + ": " + out->exit.ToString() + ": " + out->stdout_text);
  }
  return std::move(out->stdout_text);
}

}  // namespace nbdk::containertest
