"""Configuration: one pydantic-settings object, every field an ``ASSETGATE_*`` variable.

No instance exists at import time: the command line (or a test) builds one and passes it down. Every
field must appear in docs/configuration.md; ``tests/test_docs.py`` checks that.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import limits
from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from assetgate.machine import render_budget, usable_memory

DEMO_ROOT = Path(__file__).parent / "demo"
#: Old variable -> the one that replaced it; the old name is still read for one release, and
#: ``assetgate serve`` warns when it is set (``renamed_in_use``).
RENAMED: dict[str, str] = {
    "ASSETGATE_ORIGIN_CONNECT_TIMEOUT_S": "ASSETGATE_SOURCE_CONNECT_TIMEOUT_S",
    "ASSETGATE_ORIGIN_READ_TIMEOUT_S": "ASSETGATE_SOURCE_READ_TIMEOUT_S",
}
MIN_SIGNING_KEY_LENGTH = 32
MIN_ADMIN_TOKEN_LENGTH = 24


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")) / "assetgate"


def _default_store() -> Path:
    return _cache_home() / "packages"


def _default_results() -> Path:
    return _cache_home() / "results"


def _default_sources() -> Path:
    return _cache_home() / "sources"


def _default_render_workers() -> int:
    """One more than the cores. A render's own Python steps (which wait for the GIL) and libvips'
    hand-offs between its threads leave a core idle now and then; a third thread on 2 cores keeps
    both busy at the same CPU per render (docs/benchmarks.md: +2-3.5 % renders/s)."""
    return (os.cpu_count() or 1) + 1


#: Derived from the memory the process may use when not set (``assetgate.machine``).
DERIVED_MEMORY = ("render_memory_bytes", "render_job_memory_bytes")


def _text_or_none(value: object) -> object:
    """A path object as text; empty text as unset (``ASSETGATE_WHOIS_SERVERS=``)."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, str) and not value.strip():
        return None
    return value


#: A JSON setting: the JSON itself (text starting with ``{`` or ``[``) or the path of a file
#: holding it; ``json_text`` reads either.
JsonSetting = Annotated[str | None, BeforeValidator(_text_or_none), NoDecode]


def is_inline_json(value: str | os.PathLike[str]) -> bool:
    return isinstance(value, str) and value.lstrip().startswith(("{", "["))


def json_text(value: str | os.PathLike[str]) -> str:
    """The JSON a setting holds: the value itself when inline, else the text of the file it
    names; ValueError naming the whole path (never only its last part) when that cannot be read."""
    if isinstance(value, str) and is_inline_json(value):
        return value
    path = Path(value).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise ValueError(f"cannot read {path}: not UTF-8 text") from None


def json_value(value: str | os.PathLike[str]) -> object:
    """``json_text`` parsed; ValueError saying where the JSON is broken."""
    text = json_text(value)
    try:
        return json.loads(text)
    except ValueError as exc:
        where = "" if is_inline_json(value) else f"{Path(value).expanduser()}: "
        raise ValueError(f"{where}not JSON ({exc})") from None


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def check_source_url(value: str) -> str:
    """A source other than a directory: ``s3://bucket[/prefix]`` or ``http(s)://host[:port][/p]``.

    Refused here, at start, naming the variable: credentials in the URL (they would end up in
    logs), a query or fragment (nothing to map a path onto), a missing bucket or host."""
    parts = urlsplit(value)
    if parts.scheme not in ("s3", "http", "https") or not parts.hostname:
        raise ValueError("expected a directory, s3://bucket[/prefix] or http(s)://host[/prefix]")
    if parts.username is not None or parts.password is not None:
        raise ValueError("credentials do not belong in a source URL (use the AWS variables)")
    if parts.query or parts.fragment:
        raise ValueError("a source URL has no query or fragment")
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise ValueError("the port is not a number within 0..65535") from None
    return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ASSETGATE_", extra="ignore", populate_by_name=True
    )

    # --- server -------------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    workers: int = Field(default=1, ge=1, le=64)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    max_url_bytes: int = Field(default=16 * 1024, ge=4096, le=65_535)

    # --- optimizer (A) ------------------------------------------------------------------------
    root: Annotated[Path | str, NoDecode] = DEMO_ROOT  # a directory, s3://... or http(s)://...
    cache_control: str = "public, max-age=86400, stale-while-revalidate=604800"
    cors_origin: str = "*"
    max_input_pixels: int = Field(default=50_000_000, ge=1)
    max_upscale_pixels: int = Field(default=24_000_000, ge=1)
    max_avif_pixels: int = Field(default=4_000_000, ge=1)
    max_source_bytes: int = Field(default=100 * 1024 * 1024, ge=1)
    max_animation_frames: int = Field(default=1000, ge=1)
    disabled_codecs: Annotated[list[str], NoDecode] = Field(default_factory=list)
    render_workers: int = Field(default_factory=_default_render_workers, ge=1)
    render_queue: int = Field(default=64, ge=0)
    webp_effort: int = Field(default=4, ge=0, le=6)  # docs/optimizer.md "Encoders"
    #: ``quality=auto``: the SSIMULACRA2 score a bare ``auto`` reaches (docs/optimizer.md).
    auto_quality_target: int = Field(default=75, ge=30, le=95)
    #: ``auto``: requests naming no quality get ``quality=auto`` (the spec's ``85`` otherwise).
    default_quality: Literal["85", "auto"] = "85"
    avif_effort: int = Field(default=0, ge=0, le=9)  # docs/benchmarks.md: AVIF against WebP
    vips_concurrency: int = Field(default=1, ge=1)
    fast_shrink: bool = True
    asset_max_bytes: int = Field(default=8 * 1024 * 1024, ge=1)
    asset_cache_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    file_memory_bytes: int = Field(default=32 * 1024 * 1024, ge=0)
    minify_workers: int = Field(default=0, ge=0)  # 0: half the cores, at least one
    minify_timeout_s: float = Field(default=5.0, gt=0)
    max_jpeg_scans: int = Field(default=100, ge=1)
    # images for the modern web (issue 25; docs/optimizer.md "Extensions")
    auto_formats: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["webp"])
    watermarks: JsonSetting = None  # JSON or its file, checked against the root at start

    # --- package library (B) ------------------------------------------------------------------
    store: Path = Field(default_factory=_default_store)
    store_max_bytes: int = Field(default=2 * 1024 * 1024 * 1024, ge=1)
    npm_registry: str | None = None
    # private and scoped registries, what may be served (issue 39; docs/packages.md)
    npmrc: Path | None = None  # an .npmrc: registry=, @scope:registry=, //host/:_authToken=
    packages_allow: Annotated[list[str], NoDecode] = Field(default_factory=list)  # globs
    packages_deny: Annotated[list[str], NoDecode] = Field(default_factory=list)  # globs
    packages_token: SecretStr | None = Field(default=None, repr=False)  # clients must send ...
    packages_token_scopes: Annotated[list[str], NoDecode] = Field(default_factory=list)  # these
    library_api: str = "https://api.cdnjs.com"
    library_files: str = "https://cdnjs.cloudflare.com/ajax/libs"
    upstream_timeout_s: float = Field(default=10.0, gt=0)
    search_cache_ttl_s: float = Field(default=60.0, ge=0)
    packument_max_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    esm_bundler_dir: Path | None = None  # None: <python prefix>/share/assetgate/bundler
    esm_node: str = "node"
    esm_build_timeout_s: float = Field(default=20.0, gt=0)
    esm_build_memory_bytes: int = Field(default=2 * 1024 * 1024 * 1024, ge=512 * 1024 * 1024)
    esm_build_workers: int = Field(default=0, ge=0)  # 0: half the cores, at least one
    esm_build_queue: int = Field(default=16, ge=0)
    importmap_timeout_s: float = Field(default=120.0, gt=0)
    # The service's own address as browsers reach it, for the absolute URLs of import maps; None:
    # the request's (its Host header, so behind a proxy or a CDN set this).
    public_url: str | None = None

    # --- conversion (C) and the shared rate limiter -------------------------------------------
    rate_limit: str = "100/10 seconds"
    rate_limit_storage: str | None = None  # None: ASSETGATE_REDIS_URL when set, else memory://
    rate_limit_fail_open: bool = True
    rate_limit_parts: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["convert", "whois"]
    )
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    upload_max_bytes: int = Field(default=25 * 1024 * 1024, ge=1)
    upload_max_files: int = Field(default=20, ge=1)
    upload_max_total_bytes: int = Field(default=100 * 1024 * 1024, ge=1)
    work_dir: Path | None = None  # where conversion writes its per-request files; None: system temp
    convert_output_max_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    convert_output_max_total_bytes: int = Field(default=256 * 1024 * 1024, ge=1)
    convert_max_growth: float = Field(default=20.0, ge=0)  # x the upload, past 1 MiB; 0: off

    # --- whois (D) ----------------------------------------------------------------------------
    whois_servers: JsonSetting = None
    rdap_bootstrap: JsonSetting = None
    whois_restricted_tlds: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["edu", "mil"]
    )
    whois_timeout_s: float = Field(default=10.0, gt=0)
    whois_cache_ttl_s: float = Field(default=6 * 3600.0, ge=0)
    whois_negative_cache_ttl_s: float = Field(default=600.0, ge=0)

    # --- caches and shared state (Redis) -------------------------------------------------------
    redis_url: str | None = None
    result_cache_dir: Path = Field(default_factory=_default_results)
    result_cache_bytes: int = Field(default=1024 * 1024 * 1024, ge=0)
    result_cache_memory_bytes: int = Field(default=64 * 1024 * 1024, ge=0)

    # --- observability: metrics, logs, health, shutdown ---------------------------------------
    log_format: Literal["json", "text"] = "json"
    shutdown_grace_s: int = Field(default=25, ge=0, le=3600)

    # --- deployment edges, signing and presets ------------------------------------------------
    limit_concurrency: int = Field(default=1024, ge=2)
    keep_alive_s: int = Field(default=5, ge=1)
    header_timeout_s: float = Field(default=10.0, gt=0)
    idle_timeout_s: float = Field(default=30.0, gt=0)
    max_connections: int = Field(default=4096, ge=1)
    body_min_rate: int = Field(default=1024, ge=0)  # bytes per second after the grace; 0: off
    body_grace_s: float = Field(default=10.0, gt=0)
    signing_keys: Annotated[list[str], NoDecode] = Field(default_factory=list, repr=False)
    presets: JsonSetting = None
    allowed_widths: Annotated[list[int], NoDecode] = Field(default_factory=list)

    # --- reliability: deadlines, cost-aware door ----------------------------------------------
    render_timeout_s: float = Field(default=30.0, gt=0)
    render_queue_wait_s: float = Field(default=10.0, gt=0)
    # Unset: derived from the memory the process may use (``_derive_memory``, assetgate.machine).
    render_memory_bytes: int = Field(default=0, ge=0)
    render_job_memory_bytes: int = Field(default=0, ge=0)

    # --- pages and command line ---------------------------------------------------------------
    ui_file_listing: bool = True

    # --- sources in object storage and on origins, results shared by every node ---------------
    sources: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    s3_endpoint_url: str | None = None  # None: AWS_ENDPOINT_URL, else the AWS default
    # None: path-style whenever a custom endpoint is set (SeaweedFS, MinIO), else virtual-hosted.
    s3_path_style: bool | None = None
    origin_allow_private: bool = False
    # Every remote read (origin, bucket, the result store): ASSETGATE_ORIGIN_*_TIMEOUT_S, the
    # names before they covered buckets and the store, are read for one release (RENAMED).
    source_connect_timeout_s: float = Field(
        default=3.0,
        gt=0,
        validation_alias=AliasChoices(
            "ASSETGATE_SOURCE_CONNECT_TIMEOUT_S",
            "ASSETGATE_ORIGIN_CONNECT_TIMEOUT_S",
        ),
    )
    source_read_timeout_s: float = Field(
        default=20.0,
        gt=0,
        validation_alias=AliasChoices(
            "ASSETGATE_SOURCE_READ_TIMEOUT_S",
            "ASSETGATE_ORIGIN_READ_TIMEOUT_S",
        ),
    )
    source_cache_dir: Path = Field(default_factory=_default_sources)
    source_cache_bytes: int = Field(default=2 * 1024 * 1024 * 1024, ge=1)
    source_ttl_s: float = Field(default=300.0, ge=0)
    result_store: str | None = None
    # The secret that authenticates result-store entries (keyed MAC); every node has the same.
    result_store_key: str | None = Field(default=None, repr=False, validate_default=True)

    # --- cache tags and purge (docs/caching.md "Purge", docs/deploying.md "Purging a CDN") ----
    cache_tag_headers: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["cache-tag", "surrogate-key"]
    )
    admin_token: SecretStr | None = Field(default=None, repr=False)  # None: /admin/purge is a 404
    cdn_purge_url: str | None = None  # a Cloudflare-shaped API base
    cdn_purge_zone: str | None = None
    cdn_purge_token: SecretStr | None = Field(default=None, repr=False)
    fastly_purge_url: str | None = "https://api.fastly.com"
    fastly_service: str | None = None
    fastly_token: SecretStr | None = Field(default=None, repr=False)
    cloudfront_purge_url: str | None = "https://cloudfront.amazonaws.com"
    cloudfront_distribution: str | None = None
    edge_revalidate_s: int = Field(default=0, ge=0, le=86400)  # nginx's X-Accel-Expires; 0: off

    @model_validator(mode="before")
    @classmethod
    def _derive_memory(cls, data: Any) -> Any:
        """The render budgets the operator did not set, from the memory this process may use
        and the worker processes sharing it (an unusable ASSETGATE_WORKERS counts as one; its
        own error is reported)."""
        if not isinstance(data, dict) or all(name in data for name in DERIVED_MEMORY):
            return data
        try:
            workers = max(1, int(data.get("workers", 1)))
        except (TypeError, ValueError):
            workers = 1
        budget = render_budget(usable_memory(), workers)
        return {name: budget for name in DERIVED_MEMORY} | data

    @field_validator("rate_limit")
    @classmethod
    def _rate_limit_notation(cls, value: str) -> str:
        """Checked here so a typo stops the server at start, naming the variable."""
        try:
            limits.parse(value)
        except ValueError:
            raise ValueError(
                "expected a rate in limits notation such as '100/10 seconds'"
            ) from None
        return value

    @field_validator("cache_tag_headers", mode="before")
    @classmethod
    def _tag_headers(cls, value: object) -> object:
        """``cache-tag,surrogate-key`` (either, both, or empty for none)."""
        value = _split_csv(value)
        if isinstance(value, list):
            names = [str(name).lower() for name in value]
            if any(name not in ("cache-tag", "surrogate-key") for name in names):
                raise ValueError("expected a comma-separated list of cache-tag and surrogate-key")
            return list(dict.fromkeys(names))
        return value

    @field_validator("admin_token", "cdn_purge_token", "fastly_token")
    @classmethod
    def _token(cls, value: SecretStr | None) -> SecretStr | None:
        """An empty value is no token."""
        if value is None or not value.get_secret_value().strip():
            return None
        return value

    @field_validator("admin_token")
    @classmethod
    def _long_admin_token(cls, value: SecretStr | None) -> SecretStr | None:
        """A short token is guessable; refused at start rather than trusted."""
        if value is not None and len(value.get_secret_value()) < MIN_ADMIN_TOKEN_LENGTH:
            raise ValueError(f"shorter than {MIN_ADMIN_TOKEN_LENGTH} characters")
        return value

    @field_validator("cdn_purge_url", "fastly_purge_url", "cloudfront_purge_url")
    @classmethod
    def _api_base(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected http(s)://host[:port][/path]")
        if parts.username is not None or parts.password is not None or parts.query:
            raise ValueError("an API base carries no credentials and no query")
        return value.rstrip("/")

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected http(s)://host[:port][/path]")
        if parts.username is not None or parts.password is not None:
            raise ValueError("a public URL carries no credentials")
        if parts.query or parts.fragment:
            raise ValueError("a public URL has no query or fragment")
        return value.rstrip("/")

    @field_validator("root", mode="before")
    @classmethod
    def _root_or_url(cls, value: object) -> object:
        """A URL (``s3://``, ``http(s)://``) stays text: ``Path`` would fold its ``//``."""
        if isinstance(value, str) and "://" in value:
            return check_source_url(value)
        if isinstance(value, str):
            return Path(value)
        return value

    @field_validator("sources", mode="before")
    @classmethod
    def _mounts(cls, value: object) -> object:
        """``{"prefix/": "s3://bucket/prefix", "": "/srv/images"}``, inline or in a file."""
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if isinstance(value, str):
            value = json_value(value) if value.strip() else {}
        if not isinstance(value, dict):
            raise ValueError("expected a JSON object of path prefix -> source")
        return {
            str(prefix): url if "://" not in str(url) else check_source_url(str(url))
            for prefix, url in value.items()
        }

    @field_validator("result_store")
    @classmethod
    def _store_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("s3://"):
            raise ValueError("expected s3://bucket[/prefix]")
        return None if value is None else check_source_url(value)

    @field_validator("result_store_key")
    @classmethod
    def _store_key(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Without it an entry forged by anyone who can write the bucket is served as a hit."""
        if value is None and info.data.get("result_store") is not None:
            raise ValueError(
                "required when ASSETGATE_RESULT_STORE is set: a secret of at least "
                f"{MIN_SIGNING_KEY_LENGTH} characters every node shares"
            )
        if value is not None and len(value) < MIN_SIGNING_KEY_LENGTH:
            raise ValueError(f"shorter than {MIN_SIGNING_KEY_LENGTH} characters")
        return value

    @field_validator("work_dir")
    @classmethod
    def _existing_directory(cls, value: Path | None) -> Path | None:
        """Checked here so a wrong path stops the server at start, not every upload with a 500."""
        if value is not None and not value.is_dir():
            raise ValueError("expected an existing directory")
        return value

    @field_validator("watermarks", "whois_servers", "rdap_bootstrap", "presets")
    @classmethod
    def _json(cls, value: str | None) -> str | None:
        """Readable and JSON, checked here; what the JSON means is checked by its part at start."""
        if value is not None:
            json_value(value)
        return value

    def path_style(self, endpoint: str | None) -> bool:
        """Path-style addressing (``endpoint/bucket/key``) unless ``ASSETGATE_S3_PATH_STYLE``
        says otherwise: whenever a custom endpoint is set (what MinIO and SeaweedFS expect, and
        what boto3 picks for an IP endpoint), virtual-hosted on AWS itself."""
        if self.s3_path_style is not None:
            return self.s3_path_style
        return endpoint is not None

    @field_validator(
        "disabled_codecs",
        "rate_limit_parts",
        "trusted_proxies",
        "whois_restricted_tlds",
        "signing_keys",
        "allowed_widths",
        "packages_allow",
        "packages_deny",
        "packages_token_scopes",
        mode="before",
    )
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        """Lists come from the environment as ``a,b,c``, not JSON."""
        return _split_csv(value)

    @field_validator("auto_formats", mode="before")
    @classmethod
    def _auto_formats(cls, value: object) -> object:
        """``avif,webp``: the formats ``Accept`` may pick, best first (only these two)."""
        value = _split_csv(value)
        if isinstance(value, list):
            formats = [str(name).lower() for name in value]
            if any(name not in ("avif", "webp") for name in formats):
                raise ValueError("expected a comma-separated list of avif and webp")
            if len(set(formats)) != len(formats):
                raise ValueError("a format is listed twice")
            return formats
        return value

    @field_validator("signing_keys")
    @classmethod
    def _long_keys(cls, value: list[str]) -> list[str]:
        """A short key is guessable; refused at start rather than trusted."""
        for index, key in enumerate(value, start=1):
            if len(key) < MIN_SIGNING_KEY_LENGTH:
                raise ValueError(f"key {index} is shorter than {MIN_SIGNING_KEY_LENGTH} characters")
        return value

    @field_validator("packages_token")
    @classmethod
    def _long_token(cls, value: SecretStr | None) -> SecretStr | None:
        """A guessable token guards nothing; an empty one is no token."""
        if value is None or not value.get_secret_value():
            return None
        if len(value.get_secret_value()) < MIN_SIGNING_KEY_LENGTH:
            raise ValueError(f"shorter than {MIN_SIGNING_KEY_LENGTH} characters")
        return value

    @field_validator("allowed_widths")
    @classmethod
    def _widths(cls, value: list[int]) -> list[int]:
        if any(not 1 <= width <= 50_000 for width in value):
            raise ValueError("expected widths within 1..50000")
        return sorted(set(value))


def known_names() -> list[str]:
    """Every variable assetgate reads: the fields' names and the old names still read."""
    return [f"ASSETGATE_{name.upper()}" for name in Settings.model_fields] + list(RENAMED)


def unknown_names(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """``ASSETGATE_*`` variables no setting reads (a typo is otherwise silently ignored), each
    with the closest known name, or None when none is close."""
    env = os.environ if environ is None else environ
    known = known_names()
    found = []
    for name in sorted(env):
        if name.startswith("ASSETGATE_") and name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
            found.append((name, close[0] if close else None))
    return found


def renamed_in_use(environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """The old setting names set in ``environ`` (default: the process's), with their new names."""
    env = os.environ if environ is None else environ
    return [(old, new) for old, new in RENAMED.items() if old in env]
