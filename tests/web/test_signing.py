"""The signing message and HMAC: one signature for every spelling of the same request."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from assetgate.web.signing import canonical_message, sign, verify

ALIASES = {"w": "width", "q": "quality"}
KEY = "k" * 32
OTHER = "o" * 32


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("photo.jpg", [("width", "400"), ("format", "webp")]),
        ("/photo.jpg", [("format", "webp"), ("w", "400")]),
        ("photo.jpg", [("w", "1"), ("format", "webp"), ("width", "400"), ("s", "x")]),
        (
            "photo.jpg",
            [("file", "photo.jpg"), ("width", "9"), ("width", "400"), ("format", "webp")],
        ),
    ],
)
def test_spellings_and_orders_share_one_message(path: str, params: list[tuple[str, str]]) -> None:
    assert canonical_message(path, params, ALIASES) == "/photo.jpg?format=webp&width=400"


def test_values_and_paths_are_percent_encoded() -> None:
    message = canonical_message("a b/ü.jpg", [("v", "a&b=c"), ("tint", "ff0000")], ALIASES)
    assert message == "/a%20b/%C3%BC.jpg?tint=ff0000&v=a%26b%3Dc"
    assert canonical_message("x.jpg", [], ALIASES) == "/x.jpg?"


def test_signature_is_base64url_hmac_sha256_without_padding() -> None:
    message = "/photo.jpg?width=400"
    expected = hmac.new(KEY.encode(), message.encode(), hashlib.sha256).digest()
    signature = sign(KEY, message)
    assert "=" not in signature
    assert base64.urlsafe_b64decode(signature + "=") == expected


def test_every_key_verifies_and_nothing_else_does() -> None:
    message = "/photo.jpg?width=400"
    assert verify([KEY, OTHER], message, sign(OTHER, message))
    assert verify([KEY, OTHER], message, sign(KEY, message))
    assert not verify([KEY], message, sign(OTHER, message))
    assert not verify([KEY], "/photo.jpg?width=401", sign(KEY, message))
    assert not verify([KEY], message, None)
    assert not verify([KEY], message, "")
    assert not verify([KEY], message, "é" + sign(KEY, message)[1:])
