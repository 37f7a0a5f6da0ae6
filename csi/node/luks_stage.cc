#include "csi/node/luks_stage.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "base/log.h"
#include "csi/image_encryption.h"
#include "encryption/luks_volume.h"

namespace nbdk {
namespace {

constexpr char kLuksType[] = "crypto_LUKS";  // blkid's TYPE of a LUKS header

struct VolumeKey {
  std::optional<std::string> state;
  std::shared_ptr<const SecretBytes> passphrase;
};

// The image's state and passphrase. BLOCKING: the KMS config, librbd, and
// scrypt for a metadata KMS.
Result<VolumeKey> ReadVolumeKey(const std::shared_ptr<RadosCluster>& cluster, const ImageSpec& image,
                                const std::string& volume_id, const StageEncryption& encryption,
                                const std::string& kms_config_path) {
  auto kms = ResolveKms(encryption.kms_id, kms_config_path);
  if (!kms.ok()) return kms.status().WithContext("volume_context: encryptionKMSID");
  auto io = IoCtx::Open(cluster, image.pool, image.rados_namespace);
  if (!io.ok()) return io.status();
  RbdImageMetadata metadata(*io);
  VolumeKey key;
  auto state = ReadEncryptionState(metadata, image.image);
  if (!state.ok()) return state.status().WithContext("image " + image.Path());
  key.state = std::move(*state);
  if (!key.state) return key;  // PlanLuksOpening refuses it; no key to read
  auto passphrase = ReadVolumePassphrase(metadata, image.image, volume_id, kms->type, *encryption.passphrase);
  if (!passphrase.ok()) return passphrase.status().WithContext("volume");
  key.passphrase = std::make_shared<const SecretBytes>(std::move(*passphrase));
  return key;
}

// BLOCKING.
Status MarkEncrypted(const std::shared_ptr<RadosCluster>& cluster, const ImageSpec& image) {
  auto io = IoCtx::Open(cluster, image.pool, image.rados_namespace);
  if (!io.ok()) return io.status();
  RbdImageMetadata metadata(*io);
  return metadata.Set(image.image, kEncryptionStateKey, kEncryptionDone);
}

class LuksOpen : public std::enable_shared_from_this<LuksOpen> {
 public:
  LuksOpen(NodeContext& node, const StageRequest& request, const ResolvedImage& image, std::string device,
           std::function<void(Result<std::string>)> done)
      : node_(node),
        volume_id_(request.volume_id),
        read_only_(request.capability.read_only),
        encryption_(*request.encryption),
        image_(image.image),
        device_(std::move(device)),
        done_(std::move(done)) {}

  void Start() {
    auto name = LuksMapperName(volume_id_);
    if (!name.ok()) return done_(name.status());
    mapper_ = *name;
    auto self = shared_from_this();
    node_.rados.Get(RadosConfigForImage(image_, node_.options.resolve.cluster.rados_timeout_s),
                    [self](Result<std::shared_ptr<RadosCluster>> cluster) {
                      if (!cluster.ok()) return self->done_(cluster.status());
                      self->cluster_ = *cluster;
                      self->ReadKey();
                    });
  }

 private:
  void ReadKey() {
    auto self = shared_from_this();
    RunBlockingResult<VolumeKey>(
        node_.loop,
        [cluster = cluster_, image = image_, id = volume_id_, encryption = encryption_,
         path = node_.options.kms_config_path] { return ReadVolumeKey(cluster, image, id, encryption, path); },
        [self](Result<VolumeKey> key) {
          if (!key.ok()) return self->done_(key.status());
          self->key_ = std::move(*key);
          self->CheckOpen();
        });
  }

  // Open already on this device: a stage retried after a crash.
  void CheckOpen() {
    auto self = shared_from_this();
    node_.host.LuksBacking(mapper_, [self](Result<std::string> backing) {
      if (backing.ok() && *backing == self->device_) {
        NBDK_LOG_INFO("luks_kept", {{"volume", self->volume_id_}, {"mapper", self->mapper_}, {"device", *backing}});
        return self->done_(self->mapper_);
      }
      if (backing.ok()) {
        return self->done_(Status::FailedPrecondition("mapper " + self->mapper_ + " is open on " + *backing +
                                                      ", not on the volume's " + self->device_));
      }
      if (backing.status().code() != Code::kNotFound) return self->done_(backing.status());
      self->Probe();
    });
  }

  void Probe() {
    auto self = shared_from_this();
    node_.host.ProbeDevice(device_, [self](Result<DeviceSignature> sig) {
      if (!sig.ok()) return self->done_(sig.status());
      auto plan = PlanLuksOpening(self->volume_id_, self->key_.state, *sig, self->read_only_);
      if (!plan.ok()) return self->done_(plan.status());
      if (*plan == LuksOpening::kOpen) return self->Open();
      if (*plan == LuksOpening::kMarkThenOpen) return self->Mark();
      NBDK_LOG_INFO("luks_format", {{"volume", self->volume_id_}, {"device", self->device_}});
      self->node_.host.FormatLuks(self->device_, self->key_.passphrase, [self](Status s) {
        if (!s.ok()) return self->done_(s.WithContext("luksFormat " + self->device_));
        self->Mark();
      });
    });
  }

  void Mark() {
    auto self = shared_from_this();
    RunBlockingStatus(
        node_.loop, [cluster = cluster_, image = image_] { return MarkEncrypted(cluster, image); },
        [self](Status s) {
          if (!s.ok()) return self->done_(s.WithContext("mark image " + self->image_.Path() + " encrypted"));
          self->Open();
        });
  }

  void Open() {
    auto self = shared_from_this();
    node_.host.OpenLuks(device_, mapper_, key_.passphrase, [self](Status s) {
      if (!s.ok()) return self->done_(s.WithContext("open " + self->mapper_));
      NBDK_LOG_INFO("luks_opened",
                    {{"volume", self->volume_id_}, {"mapper", self->mapper_}, {"device", self->device_}});
      self->done_(self->mapper_);
    });
  }

  NodeContext& node_;
  std::string volume_id_;
  bool read_only_;
  StageEncryption encryption_;
  ImageSpec image_;
  std::string device_;
  std::function<void(Result<std::string>)> done_;
  std::string mapper_;
  std::shared_ptr<RadosCluster> cluster_;
  VolumeKey key_;
};

}  // namespace

Result<LuksOpening> PlanLuksOpening(const std::string& volume_id, const std::optional<std::string>& state,
                                    const DeviceSignature& device, bool read_only) {
  const std::string volume = "volume " + volume_id;
  if (!state) {
    return Status::FailedPrecondition(volume + ": its image has no " + std::string(kEncryptionStateKey) +
                                      ": it was not created encrypted");
  }
  const bool prepared = *state == kEncryptionPrepared;
  if (!prepared && *state != kEncryptionDone) {
    return Status::FailedPrecondition(volume + ": " + kEncryptionStateKey + " is '" + *state + "', neither " +
                                      kEncryptionPrepared + " nor " + kEncryptionDone);
  }
  if (device.type == kLuksType) return prepared ? LuksOpening::kMarkThenOpen : LuksOpening::kOpen;
  if (!device.blank()) {
    return Status::FailedPrecondition(volume + " holds " + device.Describe() +
                                      ", not a LUKS header: refusing to format or open it");
  }
  if (!prepared) {
    return Status::FailedPrecondition(volume + ": its image says " + kEncryptionDone +
                                      " but the device holds no LUKS header: refusing to format it again");
  }
  if (read_only) return Status::FailedPrecondition(volume + " was never formatted and is staged read-only");
  return LuksOpening::kFormatThenOpen;
}

void OpenStagedLuks(NodeContext& node, const StageRequest& request, const ResolvedImage& image,
                    const std::string& device, std::function<void(Result<std::string>)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  std::make_shared<LuksOpen>(node, request, image, device, std::move(done))->Start();
}

void CloseVolumeLuks(NodeContext& node, const std::string& volume_id, std::vector<std::string> devices,
                     StatusCallback done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  auto name = LuksMapperName(volume_id);
  if (!name.ok()) return done(Status::Ok());  // no mapper can have that name
  NodeContext* n = &node;
  node.host.LuksBacking(*name, [n, mapper = *name, volume_id, devices, done](Result<std::string> backing) {
    // Without device-mapper (not loaded, or not allowed to this daemon) no
    // mapper of this daemon's can be open either.
    Code code = backing.status().code();
    if (!backing.ok()) {
      return done(code == Code::kNotFound || code == Code::kUnavailable ? Status::Ok() : backing.status());
    }
    if (std::find(devices.begin(), devices.end(), *backing) == devices.end()) {
      return done(Status::FailedPrecondition("mapper " + mapper + " is open on " + *backing +
                                             ", not on a device of volume " + volume_id + ": not closing it"));
    }
    n->host.CloseLuks(mapper, [mapper, volume_id, done](Status s) {
      if (s.code() == Code::kNotFound) s = Status::Ok();
      if (s.ok()) NBDK_LOG_INFO("luks_closed", {{"volume", volume_id}, {"mapper", mapper}});
      done(s.WithContext("close " + mapper));
    });
  });
}

}  // namespace nbdk
