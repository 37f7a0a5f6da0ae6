#include "test/chaos/fio_job.h"

#include <rapidjson/document.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

namespace nbdk::chaos {
namespace {

uint64_t KibOf(const rapidjson::Value& dir) {
  return dir.HasMember("io_kbytes") && dir["io_kbytes"].IsUint64() ? dir["io_kbytes"].GetUint64() : 0;
}

double MaxClatSeconds(const rapidjson::Value& dir) {
  if (!dir.HasMember("clat_ns") || !dir["clat_ns"].IsObject()) return 0;
  const auto& clat = dir["clat_ns"];
  return clat.HasMember("max") && clat["max"].IsNumber() ? clat["max"].GetDouble() / 1e9 : 0;
}

}  // namespace

bool FioResult::verify_failed() const { return error == EILSEQ; }

Result<std::unique_ptr<FioJob>> FioJob::Start(const std::string& name, const std::string& path, int mib, int rate_iops,
                                              const std::string& output) {
  // libaio with up to 4 in flight: flat out (rate_iops 0) a kill always
  // catches requests the kernel has to requeue; paced, a kill meets the few
  // in flight then, and the outage holds up to 4 more. The runtime only
  // bounds a run whose Stop() never came.
  std::vector<std::string> argv = {"fio",
                                   "--name=" + name,
                                   "--filename=" + path,
                                   "--size=" + std::to_string(mib) + "M",
                                   "--rw=randwrite",
                                   "--bs=4k",
                                   "--ioengine=libaio",
                                   "--iodepth=4",
                                   "--direct=1",
                                   "--verify=crc32c",
                                   "--verify_backlog=64",
                                   "--verify_fatal=1",
                                   "--verify_state_save=0",
                                   "--time_based",
                                   "--runtime=86400",
                                   "--output-format=json",
                                   "--output=" + output};
  if (rate_iops > 0) argv.push_back("--rate_iops=" + std::to_string(rate_iops));
  auto child = vmtest::SpawnedChild::Spawn(argv);
  if (!child.ok()) return child.status();
  return std::unique_ptr<FioJob>(new FioJob(std::move(*child), output));
}

bool FioJob::Running() {
  if (exited_) return false;
  auto exit = child_.Wait(std::chrono::milliseconds(0));
  if (!exit.ok()) return true;
  exited_ = true;
  exit_ = *exit;
  return false;
}

Result<FioResult> FioJob::Stop() {
  FioResult r;
  r.ended_early = !Running();
  if (!exited_) {
    ::kill(child_.pid(), SIGINT);
    // fio finishes the IO in flight first; a device that never answers
    // would keep it here, so the wait is bounded.
    auto exit = child_.Wait(std::chrono::seconds(120));
    if (!exit.ok()) return exit.status();
    exited_ = true;
    exit_ = *exit;
  }
  r.exit = exit_.ToString();
  std::ifstream in(output_);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  size_t start = json.find('{');  // fio may print a line before the report
  rapidjson::Document doc;
  if (start != std::string::npos) doc.Parse(json.c_str() + start);
  if (start == std::string::npos || doc.HasParseError() || !doc.IsObject() || !doc.HasMember("jobs") ||
      !doc["jobs"].IsArray() || doc["jobs"].Empty()) {
    return Status::Corruption("fio report " + output_ + " does not parse (fio " + r.exit + ")");
  }
  const auto& job = doc["jobs"][0];
  if (job.HasMember("error") && job["error"].IsInt()) r.error = job["error"].GetInt();
  if (job.HasMember("write")) {
    r.write_kib = KibOf(job["write"]);
    r.max_clat_s = MaxClatSeconds(job["write"]);
  }
  if (job.HasMember("read")) {
    r.verify_kib = KibOf(job["read"]);
    r.max_clat_s = std::max(r.max_clat_s, MaxClatSeconds(job["read"]));
  }
  return r;
}

}  // namespace nbdk::chaos
