// A volume's LUKS container through libcryptsetup's C API (no cryptsetup
// process, so the passphrase never reaches argv or a pipe), made and opened
// as ceph-csi's cryptsetup calls do (internal/util/cryptsetup.go), so that
// either driver opens what the other formatted.
//
// Format is ceph-csi's `cryptsetup -q luksFormat --type luks2 --hash sha256
// --pbkdf-memory 32768 DEVICE -d /dev/stdin` (:35-49) spelled as the
// cryptsetup 2.6 CLI turns it into library calls (src/cryptsetup.c
// luksFormat, src/utils_luks.c set_pbkdf_params): cipher aes-xts-plain64
// with a 512-bit key (the CLI's default cipher, its 256-bit default key
// size doubled for XTS), PBKDF argon2id with the library's default time
// (2 s) and threads (4, fewer on fewer CPUs) but hash sha256 and at most
// 32768 KiB, a sector size the library picks (0 asks it to, as the CLI
// does), key slot 0. The passphrase is every byte given: `-d /dev/stdin`
// reads a key file whole, newline included. ceph-csi passes no sector size,
// cipher or key size, so the list is complete.
//
// Open is `cryptsetup luksOpen DEVICE NAME --disable-keyring -d /dev/stdin`
// (:51-56): the volume key goes in the dm-crypt table, not the kernel
// keyring (Resize then needs no passphrase). A LUKS1 container (ceph-csi
// before v3.2.0 formatted LUKS1) opens too. Resize is `cryptsetup resize
// NAME` (:58-61) to the whole backing device, Close `cryptsetup luksClose
// NAME` (:63-66), ActiveBacking what `cryptsetup status NAME` prints as
// "device:" (ceph-csi's DeviceEncryptionStatus, util/crypto.go:318-350).
//
// Every function blocks: Argon2 with 32 MiB (a format benchmarks it, then
// spends 2 s on the key slot: 7 s in all on a test host, 9 s for the CLI
// there; an open spends the slot's 2 s, tuned on the formatting host),
// device-mapper ioctls and udev waits. Callers run them off the loop
// thread, in EventLoop::RunBlocking (uv_queue_work). They take one
// process-wide lock: libcryptsetup's device-mapper layer keeps unlocked
// global state, so one call runs at a time and an Open waits for another's
// PBKDF. libcryptsetup's log goes nowhere but into the Status of a failed
// call (its error lines only, which never hold a passphrase).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "encryption/volume_passphrase.h"

namespace nbdk {

// The mapper name of a volume's open container, ceph-csi's
// "luks-rbd-<volume ID>" (util/crypto.go:34, :257-262). InvalidArgument
// when the ID is empty or holds '/', or the name would be longer than the
// 127 bytes device-mapper allows (a CSI volume ID may have 128: ceph-csi
// fails the same way at luksOpen).
Result<std::string> LuksMapperName(std::string_view volume_id);
// "/dev/mapper/<name>": where the open container's block device appears.
std::string LuksMapperPath(std::string_view mapper_name);

// Makes `device` a LUKS2 container whose key slot 0 opens with
// `passphrase`. Overwrites what was there: call it only on a device where
// blkid finds nothing. InvalidArgument for an empty passphrase (the CLI
// refuses an empty key file); otherwise the errno of the failed step, with
// libcryptsetup's reason.
Status FormatLuks(const std::string& device, const SecretBytes& passphrase);

// Whether `device` holds a LUKS header (version 1 or 2). An error only when
// the device cannot be read.
Result<bool> IsLuks(const std::string& device);

// Activates the container on `device` as `mapper_name`. FailedPrecondition
// when the device holds no LUKS header; InvalidArgument when no key slot
// opens with `passphrase`; AlreadyExists when a mapping of that name is
// active (callers check ActiveLuksBacking first); Unavailable without
// device-mapper.
Status OpenLuks(const std::string& device, const std::string& mapper_name, const SecretBytes& passphrase);

// Deactivates the mapping. NotFound when none of that name is active (the
// caller decides whether that means done); FailedPrecondition while it is
// in use (mounted, held open).
Status CloseLuks(const std::string& mapper_name);

// Grows (or shrinks) the active mapping to its backing device's size, after
// the device itself was resized. NotFound when it is not active;
// FailedPrecondition when its volume key is in the kernel keyring (opened
// by another tool without --disable-keyring: resizing would need the
// passphrase).
Status ResizeLuks(const std::string& mapper_name);

// The backing device of the active LUKS mapping `mapper_name`, e.g.
// "/dev/nbd3": what a heal checks before adopting an open mapper. NotFound
// when it is not active; FailedPrecondition when the mapping is not a LUKS
// one; Unavailable without device-mapper.
Result<std::string> ActiveLuksBacking(const std::string& mapper_name);

}  // namespace nbdk
