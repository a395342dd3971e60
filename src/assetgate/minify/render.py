"""The CPU-bound part of an asset answer: read, minify or tidy, gzip (sync; run through the gate).

A transformation that fails, or a file that grew past the size cap since it was looked at, gives the
original bytes and a ``note`` saying why; the caller logs it once and answers 200 (never a 500).
A gzip that would not be smaller is not used: the identity bytes are served instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assetgate.minify.compress import gzip_bytes
from assetgate.minify.jsscan import ScanError
from assetgate.minify.minifiers import MinifyError, minify_css, minify_js
from assetgate.minify.safejs import tidy_js
from assetgate.minify.spec import AssetPlan, Encoding


@dataclass(frozen=True, slots=True)
class Rendered:
    body: bytes
    encoding: Encoding
    original_size: int
    unchanged: bool  # the body is the source file's bytes, untouched
    note: str | None = None  # why a requested transformation was not applied

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


def render_asset(data: bytes, plan: AssetPlan, *, max_bytes: int) -> Rendered:
    if len(data) > max_bytes:
        return Rendered(data, "identity", len(data), True, note="over the asset size cap")
    note = None
    try:
        body = transform_bytes(data, plan)
    except Exception as exc:  # any minifier failure: the original, never a 500
        body, note = data, f"{plan.transform} failed: {type(exc).__name__}: {exc}"
    encoding: Encoding = "identity"
    if plan.encoding == "gzip":
        packed = gzip_bytes(body)
        if len(packed) < len(body):
            body, encoding = packed, "gzip"
    return Rendered(body, encoding, len(data), encoding == "identity" and body == data, note)


def render_file(path: Path, plan: AssetPlan, max_bytes: int) -> Rendered:
    """Read and render in one job, so the read happens off the event loop too."""
    return render_asset(path.read_bytes(), plan, max_bytes=max_bytes)
