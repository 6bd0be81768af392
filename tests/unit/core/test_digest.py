"""kplugin.core.digest: the interpreter's own SHA-256 gives hashlib's digests."""

from __future__ import annotations

import hashlib

import pytest

from kplugin.core import digest


@pytest.mark.parametrize("data", [b"", b"abc", bytes(range(256)) * 1000])
def test_same_digest_as_hashlib(data: bytes) -> None:
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_known_vector_and_streaming() -> None:
    # FIPS 180-2's example: SHA-256("abc")
    expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    hasher = digest.sha256(b"a")
    hasher.update(b"b")
    hasher.update(b"c")
    assert hasher.hexdigest() == expected == digest.sha256_hex(b"abc")
