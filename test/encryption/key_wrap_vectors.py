#!/usr/bin/python3
# Recomputes the fixed vectors of key_wrap_test.cc with tools independent of
# nbdkeeper's code: ceph_csi_dek.py's wrap (Python's hashlib.scrypt and the
# AESGCM of Debian's python3-cryptography, following ceph-csi's
# internal/kms/secretskms.go). Run once by hand:
#   /usr/bin/python3 test/encryption/key_wrap_vectors.py
# The tests do not run it (they need no Python). Both libraries sit on
# OpenSSL, so these vectors check nbdkeeper's use of it (parameters, salt,
# tag placement, base64, JSON), not the primitives. Those were checked once
# with Go's own (Debian's golang-1.19 and golang-golang-x-crypto-dev, the
# libraries ceph-csi uses): scrypt.Key, aes.NewCipher + cipher.NewGCM's Seal
# and json.Marshal of {DEK, Nonce []byte} gave this JSON byte for byte, and
# Go's Open read a random WrapVolumePassphrase output.
import base64

from ceph_csi_dek import key, wrap

ENCRYPTION_PASSPHRASE = b"my-passphrase-from-kubernetes"
VOLUME_ID = b"0001-0009-rook-ceph-0000000000000002-1b00f5f8-b1c1-11e9-8421-9243c1f659f0"
# The volume passphrase: 20 fixed bytes in URL-safe padded base64, as
# ceph-csi's generateNewEncryptionPassphrase encodes its random ones.
PASSPHRASE = base64.urlsafe_b64encode(bytes(range(0xe0, 0xe0 + 20)))
NONCE = bytes.fromhex("000102030405060708090a0b")

print("passphrase:", PASSPHRASE.decode())
print("key:       ", key(ENCRYPTION_PASSPHRASE, VOLUME_ID).hex())
print("json:      ", wrap(ENCRYPTION_PASSPHRASE, VOLUME_ID, PASSPHRASE, NONCE))
