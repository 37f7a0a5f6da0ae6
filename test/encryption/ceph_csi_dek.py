#!/usr/bin/python3
# ceph-csi's "metadata" KMS done with tools independent of nbdkeeper's code:
# Python's hashlib.scrypt and the AESGCM of Debian's python3-cryptography,
# following ceph-csi's internal/kms/secretskms.go (scrypt N=32768 r=8 p=1
# 32 bytes, salt = the CSI volume ID; AES-256-GCM, 12-byte nonce, tag
# appended, no AAD; compact JSON of standard base64, "dek" first) and
# internal/util/crypto.go (a volume passphrase is 20 random bytes in
# URL-safe base64). key_wrap_vectors.py computes the host tests' vectors
# with wrap(); the VM tests run it as a command:
#
#   ceph_csi_dek.py passphrase OUT            a new volume passphrase
#   ceph_csi_dek.py wrap SECRET VOLUME_ID IN  prints IN's passphrase wrapped
#   ceph_csi_dek.py unwrap SECRET VOLUME_ID DEK_JSON OUT
#
# Secrets travel in files only (never argv): SECRET holds the StorageClass
# secret's encryptionPassphrase, IN and OUT a volume passphrase, each byte
# for byte (no newline), OUT made 0600. The wrapped JSON is not secret.
import base64
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def key(encryption_passphrase, volume_id):
    return hashlib.scrypt(encryption_passphrase, salt=volume_id, n=32768, r=8, p=1, maxmem=64 << 20, dklen=32)


def wrap(encryption_passphrase, volume_id, passphrase, nonce):
    sealed = AESGCM(key(encryption_passphrase, volume_id)).encrypt(nonce, passphrase, None)
    return json.dumps({"dek": base64.b64encode(sealed).decode(), "nonce": base64.b64encode(nonce).decode()},
                      separators=(",", ":"))


def unwrap(encryption_passphrase, volume_id, text):
    stored = json.loads(text)
    return AESGCM(key(encryption_passphrase, volume_id)).decrypt(
        base64.b64decode(stored["nonce"]), base64.b64decode(stored["dek"]), None)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write_secret(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def main(argv):
    if len(argv) == 2 and argv[0] == "passphrase":
        write_secret(argv[1], base64.urlsafe_b64encode(os.urandom(20)))
    elif len(argv) == 4 and argv[0] == "wrap":
        print(wrap(read(argv[1]), argv[2].encode(), read(argv[3]), os.urandom(12)))
    elif len(argv) == 5 and argv[0] == "unwrap":
        write_secret(argv[4], unwrap(read(argv[1]), argv[2].encode(), argv[3]))
    else:
        sys.exit("usage: ceph_csi_dek.py passphrase OUT | wrap SECRET VOLUME_ID IN | "
                 "unwrap SECRET VOLUME_ID DEK_JSON OUT")


if __name__ == "__main__":
    main(sys.argv[1:])
