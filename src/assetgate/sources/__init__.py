"""Where the optimizer's files come from: a directory, an S3-compatible bucket or an origin web
server, mounted by path prefix (``ASSETGATE_ROOT``, ``ASSETGATE_SOURCES``; docs/sources.md)."""

from assetgate.sources.mounts import Mounts

__all__ = ["Mounts"]
