"""An Idempotency-Key (initd/state/idempotency.py): what a key may be, and the digest of a
request that tells a repeat from another request under the same key."""

from __future__ import annotations

import pytest

from initd.state.idempotency import BadKey, check_key


@pytest.mark.parametrize("key", ["", "a b", "x" * 201, "é", "tab\there", "nl\n"])
def test_bad_keys(key: str) -> None:
    with pytest.raises(BadKey, match="Idempotency-Key"):
        check_key(key)


def test_good_keys() -> None:
    for key in ("k", "toolu_01ABC", "x" * 200, "a:b/c=d"):
        assert check_key(key) == key
