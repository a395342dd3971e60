"""Signed URLs, presets and snapped widths through the app (both URL forms)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assetgate.optimizer.params import ALIASES
from assetgate.optimizer.signed import sign_url

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
OLD = "old-key-" + "o" * 32
NEW = "new-key-" + "n" * 32


def docs_signing_function() -> Callable[[str, dict[str, str], str], str]:
    """The copy-paste function of docs/deploying.md, run as a web app would."""
    text = (REPO / "docs" / "deploying.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    namespace: dict[str, Any] = {}
    exec(blocks[0], namespace)
    assert namespace["ALIASES"] == dict(ALIASES), "the docs' alias table drifted"
    function: Callable[[str, dict[str, str], str], str] = namespace["assetgate_signature"]
    return function


async def test_unsigned_or_wrongly_signed_transforms_are_403_naming_s(
    custom_client: Callable[..., Any],
) -> None:
    async with custom_client(signing_keys=[NEW]) as client:
        for target in (
            "/photo.jpg?width=100",
            "/?file=photo.jpg&width=100",
            "/?file=photo.jpg",
            "/nothing-here.jpg?width=100",  # no existence oracle: 403 before the file is looked at
            "/photo.jpg?width=100&s=AAAA",
            sign_url("/photo.jpg?width=100", NEW) + "&width=2000",  # the last width counts
            sign_url("/photo.jpg?width=100", "x" * 40),
        ):
            response = await client.get(target)
            assert response.status_code == 403, target
            body = response.json()
            assert body["code"] == 403
            assert body["error"].startswith("s: ")


async def test_both_forms_spellings_and_orders_share_one_signature(
    custom_client: Callable[..., Any],
) -> None:
    signature = docs_signing_function()("photo.jpg", {"width": "100", "format": "png"}, NEW)
    async with custom_client(signing_keys=[NEW]) as client:
        for target in (
            f"/photo.jpg?width=100&format=png&s={signature}",
            f"/photo.jpg?s={signature}&f=png&w=100",
            f"/?file=photo.jpg&format=png&width=100&s={signature}",
        ):
            response = await client.get(target)
            assert response.status_code == 200, target
            assert response.headers["content-type"] == "image/png"
            assert response.headers["x-output-format"] == "png"


async def test_keys_rotate_and_static_files_need_no_signature(
    custom_client: Callable[..., Any],
) -> None:
    async with custom_client(signing_keys=[NEW, OLD]) as client:
        assert (await client.get(sign_url("/photo.jpg?width=50", OLD))).status_code == 200
        assert (await client.get(sign_url("/?file=photo.jpg&q=60", NEW))).status_code == 200
        static = await client.get("/photo.jpg")
        assert static.status_code == 200
        assert static.headers["x-optimizer-status"] == "passthrough"
        assert (await client.get("/photo.jpg?v=3")).status_code == 200


async def test_without_keys_nothing_is_required(opt: Any) -> None:
    assert (await opt.get("/photo.jpg?width=100")).status_code == 200


async def test_a_preset_is_the_same_answer_as_its_parameters(
    custom_client: Callable[..., Any], tmp_path: Path
) -> None:
    presets = tmp_path / "presets.json"
    presets.write_text('{"thumb": {"width": 120, "format": "png"}}')
    async with custom_client(presets=presets) as client:
        by_name = await client.get("/photo.jpg?preset=thumb")
        spelled = await client.get("/photo.jpg?width=120&format=png")
        assert by_name.status_code == 200
        assert by_name.headers["etag"] == spelled.headers["etag"]
        assert by_name.content == spelled.content
        overridden = await client.get("/?file=photo.jpg&preset=thumb&w=60")
        assert overridden.headers["x-output-format"] == "png"
        assert (
            overridden.headers["etag"]
            == (await client.get("/photo.jpg?w=60&f=png")).headers["etag"]
        )
        unknown = await client.get("/photo.jpg?preset=huge")
        assert unknown.status_code == 400
        assert unknown.json()["error"].startswith("preset: ")


async def test_widths_snap_to_the_allowed_ones(custom_client: Callable[..., Any]) -> None:
    async with custom_client(allowed_widths=[100, 300, 2000]) as client:
        asked = await client.get("/photo.jpg?width=150&format=png")
        allowed = await client.get("/photo.jpg?width=300&format=png")
        assert asked.headers["etag"] == allowed.headers["etag"]
        assert asked.content == allowed.content
        assert png_width(asked.content) == 300
        # 2000 is above the 800 px source: the source's width, never enlarged.
        big = await client.get("/photo.jpg?width=1000&format=png")
        assert png_width(big.content) == 800


def png_width(data: bytes) -> int:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big")
