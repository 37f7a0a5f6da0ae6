#!/usr/bin/python3
# Recomputes the fixed vectors of key_wrap_test.cc with tools independent of
# nbdkeeper's code: Python's hashlib.scrypt and the AESGCM of Debian's
# python3-cryptography, following ceph-csi's internal/kms/secretskms.go
# (scrypt N=32768 r=8 p=1 32 bytes, salt = volume ID; AES-256-GCM, 12-byte
# nonce, tag appended, no AAD; JSON of standard base64). Run once by hand:
#   /usr/bin/python3 test/encryption/key_wrap_vectors.py
# The tests do not run it (they need no Python). Both libraries sit on
# OpenSSL, so these vectors check nbdkeeper's use of it (parameters, salt,
# tag placement, base64, JSON), not the primitives. Those were checked once
# with Go's own (Debian's golang-1.19 and golang-golang-x-crypto-dev, the
# libraries ceph-csi uses): scrypt.Key, aes.NewCipher + cipher.NewGCM's Seal
# and json.Marshal of {DEK, Nonce []byte} gave this JSON byte for byte, and
# Go's Open read a random WrapVolumePassphrase output.
import base64
import hashlib
import json

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ENCRYPTION_PASSPHRASE = b"my-passphrase-from-kubernetes"
VOLUME_ID = b"0001-0009-rook-ceph-0000000000000002-1b00f5f8-b1c1-11e9-8421-9243c1f659f0"
# The volume passphrase: 20 fixed bytes in URL-safe padded base64, as
# ceph-csi's generateNewEncryptionPassphrase encodes its random ones.
PASSPHRASE = base64.urlsafe_b64encode(bytes(range(0xe0, 0xe0 + 20)))
NONCE = bytes.fromhex("000102030405060708090a0b")

key = hashlib.scrypt(ENCRYPTION_PASSPHRASE, salt=VOLUME_ID, n=32768, r=8, p=1, maxmem=64 << 20, dklen=32)
sealed = AESGCM(key).encrypt(NONCE, PASSPHRASE, None)
text = json.dumps({"dek": base64.b64encode(sealed).decode(), "nonce": base64.b64encode(NONCE).decode()},
                  separators=(",", ":"))
print("passphrase:", PASSPHRASE.decode())
print("key:       ", key.hex())
print("json:      ", text)
