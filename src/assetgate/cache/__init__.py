"""One cache layer for every part: get-or-compute with single flight over memory, disk and Redis.

Parts never build their own LRU: they receive named ``Cache`` objects built in the lifespan.
"""

from assetgate.cache.codec import Codec, CodecError, bytes_codec, dataclass_codec, memory_codec
from assetgate.cache.disk import DiskTier
from assetgate.cache.layer import Cache
from assetgate.cache.objects import ObjectTier, largest_entry, mac_key, s3_store
from assetgate.cache.prefetch import Prefetch
from assetgate.cache.shared import SharedTier, connect
from assetgate.cache.tiers import FOREVER

__all__ = [
    "FOREVER",
    "Cache",
    "Codec",
    "CodecError",
    "DiskTier",
    "ObjectTier",
    "Prefetch",
    "SharedTier",
    "bytes_codec",
    "connect",
    "dataclass_codec",
    "largest_entry",
    "mac_key",
    "memory_codec",
    "s3_store",
]
