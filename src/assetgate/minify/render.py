"""The CPU-bound part of an asset answer: read, minify or tidy, gzip (sync; run through the gate).

A transformation that fails or runs past its deadline, or a file that grew past the size cap since
it was looked at, gives the original bytes, a ``note`` saying why (the caller logs it once) and a
``skipped`` reason the answer names in ``X-Minify-Skipped``; the answer is a 200, never a 500.
A gzip that would not be smaller is not used: the identity bytes are served instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assetgate.errors import AppError
from assetgate.minify.compress import gzip_bytes
from assetgate.minify.jsscan import ScanError
from assetgate.minify.minifiers import MinifyError, minify_css, minify_js
from assetgate.minify.safejs import tidy_js
from assetgate.minify.spec import AssetPlan, Encoding

Skipped = Literal["timeout", "refused", "size"]


@dataclass(frozen=True, slots=True)
class Rendered:
    body: bytes
    encoding: Encoding
    original_size: int
    unchanged: bool  # the body is the source file's bytes, untouched
    note: str | None = None  # why a requested transformation was not applied
    skipped: Skipped | None = None  # the same, as a token for X-Minify-Skipped

    @property
    def weight(self) -> int:
        """Bytes this entry holds in a cache."""
        return len(self.body) + 200


def transform_bytes(data: bytes, plan: AssetPlan) -> bytes:
    """Apply ``plan.transform``; raises MinifyError when it cannot be done safely."""
    if plan.transform == "minify":
        return minify_css(data) if plan.kind == "css" else minify_js(data)
    if plan.transform == "safe":
        text = data.decode("utf-8", "surrogateescape")
        try:
            tidy = tidy_js(text)
        except ScanError as exc:
            raise MinifyError(f"safe mode could not lex the file: {exc}") from exc
        return data if tidy is text else tidy.encode("utf-8", "surrogateescape")
    return data


Transformer = Callable[[bytes, AssetPlan], bytes]


def render_asset(
    data: bytes, plan: AssetPlan, *, max_bytes: int, transform: Transformer = transform_bytes
) -> Rendered:
    """``transform``: where the transformation runs (``minify.sandbox`` in the server)."""
    if len(data) > max_bytes:
        cap = "over the asset size cap"
        return Rendered(data, "identity", len(data), True, note=cap, skipped="size")
    note = None
    skipped: Skipped | None = None
    try:
        body = transform(data, plan) if plan.transform != "none" else data
    except AppError:  # the client left: nobody to answer
        raise
    except Exception as exc:  # any minifier failure or timeout: the original, never a 500
        body, note = data, f"{plan.transform} failed: {type(exc).__name__}: {exc}"
        skipped = "timeout" if isinstance(exc, TimeoutError) else "refused"
    encoding: Encoding = "identity"
    if plan.encoding == "gzip":
        packed = gzip_bytes(body)
        if len(packed) < len(body):
            body, encoding = packed, "gzip"
    same = encoding == "identity" and body == data
    return Rendered(body, encoding, len(data), same, note, skipped)


def render_file(
    path: Path, plan: AssetPlan, max_bytes: int, transform: Transformer = transform_bytes
) -> Rendered:
    """Read and render in one job, so the read happens off the event loop too."""
    return render_asset(path.read_bytes(), plan, max_bytes=max_bytes, transform=transform)
