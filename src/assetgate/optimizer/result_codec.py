"""The optimizer's result cache: rendered images kept on the machine's disk, keyed by the ETag.

The ETag names the source's content, the canonical transformation, the negotiated format and the
engine versions, so an entry can be kept for ever: a changed file has a new key and its old
entries leave through the disk budget. Only rendered bytes are kept; a pass-through (serve the
file itself) and every error are decided again on each request.
"""

from __future__ import annotations

from typing import Final

from assetgate.cache import FOREVER, Codec, CodecError
from assetgate.cache.codec import join_head, split_head
from assetgate.imaging.formats import INPUT_FORMATS, OUTPUT_FORMATS
from assetgate.optimizer.render import Outcome

NAME: Final = "images"
ENTRY_OVERHEAD: Final = 200


def _encode(outcome: Outcome) -> bytes:
    assert outcome.body is not None
    head = {
        "source": outcome.source,
        "output": outcome.output,
        "width": outcome.width,
        "height": outcome.height,
        "info": outcome.info,
        "quality": outcome.quality,
        "budget_met": outcome.budget_met,
        "score": outcome.score,
        "quality_label": outcome.quality_label,
        "budgeted": outcome.budgeted,
    }
    return join_head(head, outcome.body)


def _decode(data: bytes) -> Outcome:
    meta, body = split_head(data)
    source, output = meta.get("source"), meta.get("output")
    if source not in INPUT_FORMATS or output not in OUTPUT_FORMATS:
        raise CodecError(f"not a stored image: {source!r} -> {output!r}")
    try:
        return Outcome(
            source, output, body, int(meta["width"]), int(meta["height"]),
            info=meta.get("info") is True, quality=int(meta.get("quality", 0)),
            budget_met=meta.get("budget_met") is not False, score=float(meta.get("score", 0.0)),
            quality_label=str(meta.get("quality_label", "")),
            budgeted=bool(meta.get("budgeted", int(meta.get("quality", 0)) > 0)),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"not a stored image: {exc}") from exc


def keep_for(outcome: Outcome) -> float:
    return 0.0 if outcome.body is None else FOREVER


OUTCOME: Final[Codec[Outcome]] = Codec(
    _encode, _decode, lambda outcome: len(outcome.body or b"") + ENTRY_OVERHEAD
)
