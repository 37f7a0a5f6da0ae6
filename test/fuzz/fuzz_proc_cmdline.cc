// /proc/<pid>/cmdline of a process that may be rbd-nbd
// (host/process_scan.h ParseCmdline), and the heal decision over its argv
// (csi/heal/heal_plan.h ServesRecord and PlanHeal, which read it with
// supervisor/rbd_nbd_argv.h ParseRbdNbdArgv).
#include "csi/heal/heal_plan.h"
#include "host/process_scan.h"
#include "test/fuzz/fuzz_input.h"

namespace {

nbdk::VolumeRecord SeedRecord() {
  nbdk::VolumeRecord record;
  record.volume_id = "0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
  record.cookie = record.volume_id;
  record.pool = "replicapool";
  record.image = "csi-vol-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
  record.nbd_device = "/dev/nbd3";
  record.state = nbdk::VolumeState::kStaged;
  record.boot_id = "boot";
  record.rbd_nbd_pid = 42;
  return record;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nbdk::VolumeRecord kRecord = SeedRecord();
  std::string_view raw = nbdk::fuzz::Text(data, size);
  nbdk::RbdNbdProcess process;
  process.pid = 42;
  process.argv = nbdk::ParseCmdline(raw);
  process.exe = "/usr/bin/rbd-nbd";
  process.uid = process.euid = 0;
  // The kernel ends every argument with a NUL; joining them again gives the
  // file back, up to that last NUL.
  std::string joined;
  for (const std::string& arg : process.argv) joined += arg + '\0';
  NBDK_FUZZ_CHECK(joined == raw || joined == std::string(raw) + '\0');

  bool serves = nbdk::ServesRecord(process, kRecord);
  nbdk::NbdDeviceView device;
  device.configured = true;
  device.backend_cookie = kRecord.cookie;
  device.pid = process.pid;
  device.io = nbdk::DeviceIo::kWaits;
  nbdk::ServerIdentity expected;
  expected.exe = process.exe;
  expected.uid = 0;
  nbdk::HealPlan plan = nbdk::PlanHeal(kRecord, kRecord.boot_id, device, {process}, expected);
  // Adopted only what serves the record; a server may still be refused for
  // its identity (an attach whose pid is not journaled).
  NBDK_FUZZ_CHECK(plan.action != nbdk::HealAction::kAdopt || serves);
  return 0;
}
