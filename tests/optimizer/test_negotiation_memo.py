"""The negotiation remembered per Accept value still follows every input it depends on."""

from __future__ import annotations

from assetgate.optimizer.variants import _negotiation

ACCEPT = "image/avif,image/webp,*/*"


def test_the_same_accept_under_other_settings_is_negotiated_again() -> None:
    both = _negotiation(ACCEPT, (), ("avif", "webp"))
    webp_only = _negotiation(ACCEPT, (), ("webp",))
    avif_disabled = _negotiation(ACCEPT, ("avif",), ("avif", "webp"))
    assert (both.avif, both.webp) == (True, True)
    assert (webp_only.avif, webp_only.webp) == (False, True)
    assert (avif_disabled.avif, avif_disabled.webp) == (False, True)
    assert _negotiation("image/png,*/*", (), ("avif", "webp")).webp is False
    assert _negotiation(ACCEPT, (), ("avif", "webp")) is both  # remembered


def test_a_client_inventing_accept_values_cannot_grow_the_memo() -> None:
    for n in range(1000):
        _negotiation(f"image/x-{n},image/webp", (), ("webp",))
    assert _negotiation.cache_info().currsize <= 256
