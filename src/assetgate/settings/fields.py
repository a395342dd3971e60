"""The ``Settings`` class: every field an ``ASSETGATE_*`` variable, grouped by family, each with
its marker (``roles``: operator or tuning) and its docstring, which is the text of its row in
docs/configuration.md (``python -m assetgate.cli.settings_doc`` writes the tables;
``tests/test_settings_doc.py`` fails when they differ or a field has no docstring).

No instance exists at import time: the command line (or a test) builds one and passes it down.
What a value may be is in ``values``; the defaults derived from the machine in ``derived``; the
old names still read in ``names``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from assetgate.settings.derived import (
    default_results,
    default_sources,
    default_store,
    with_derived,
)
from assetgate.settings.roles import operator, tuning
from assetgate.settings.values import (
    AdminSecret,
    ApiBase,
    ApiSecret,
    AutoFormats,
    BucketUrl,
    CommaList,
    ExistingDirectory,
    JsonSetting,
    LongSecret,
    Mounts,
    PublicUrl,
    Rate,
    Root,
    SigningKeys,
    TagHeaders,
    Widths,
    store_key_problem,
)

DEMO_ROOT = Path(__file__).parent.parent / "demo"
MIB = 1024 * 1024
GIB = 1024 * MIB
#: Shown for the budgets ``derived`` computes from the machine.
FROM_CORES = "derived from the cores ([below](#budgets-from-the-machine))"
FROM_MEMORY = "derived from the memory ([below](#budgets-from-the-machine))"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ASSETGATE_",
        extra="ignore",
        populate_by_name=True,
        use_attribute_docstrings=True,
    )

    # --- server and connections ---------------------------------------------------------------
    host: Annotated[str, operator("server")] = "127.0.0.1"
    """Bind address."""

    port: Annotated[int, operator("server")] = Field(default=8080, ge=0, le=65535)
    """TCP port."""

    workers: Annotated[int, operator("server")] = Field(default=1, ge=1, le=64)
    """uvicorn worker processes. For images one process is as fast (its render threads use every
    core) at half the memory; one per core doubles the rate of cheap answers (304s, package
    files). The render threads and memory budgets derived from the machine are divided among
    them.
    """

    trusted_proxies: Annotated[CommaList, operator("server")] = Field(default_factory=list)
    """Comma list of proxy addresses/networks whose `X-Forwarded-For` and `X-Request-Id` are
    believed.
    """

    public_url: Annotated[PublicUrl, operator("server")] = None
    """The service's address as browsers reach it (`https://cdn.example.com`, a path allowed), used
    for the absolute module URLs of `/npm/importmap`. Unset, they are built from the request
    (its `Host` header and scheme): set it whenever a proxy or a CDN is in front, so no client's
    `Host` header can choose the URLs of an answer a cache keeps. An `http(s)` URL without
    credentials, query or fragment; a trailing `/` is dropped.
    """

    log_level: Annotated[Literal["debug", "info", "warning", "error"], tuning("server")] = "info"
    """`debug`, `info`, `warning` or `error`."""

    log_format: Annotated[Literal["json", "text"], tuning("server")] = "json"
    """`json`: one JSON object a line (access lines, warnings, errors, uvicorn's own messages);
    `text`: a short line for a terminal, control characters escaped (`%0A` in a path shows as
    `\\x0a`) and a traceback indented, so a client cannot forge a line. See
    [Deploying](deploying.md#running-in-production) for the fields.
    """

    max_url_bytes: Annotated[int, tuning("server")] = Field(default=16 * 1024, ge=4096, le=65_535)
    """Longest request URL (path, `?` and query as sent, percent-encoded); longer is a 414 JSON
    error naming this variable, before any routing. 4096..65535: the HTTP parser's own limit
    (httptools: 65,535 bytes of URL, answered with a plain-text 400) stays above it. 16 KiB is
    what CDNs such as Cloudflare accept; `/openapi.json` keeps every parameter within it (`file`
    ≤ 1024 characters). The shipped nginx front sets `large_client_header_buffers 4 32k` so such
    URLs reach assetgate and get this JSON 414 (nginx's 8 KiB default would answer its own HTML
    414 first); raise both together.
    """

    limit_concurrency: Annotated[int, tuning("server")] = Field(default=1024, ge=2)
    """Requests running at once per process (the work budget); beyond → 503 at once instead of
    queueing without bound. Open connections do not count: they have
    `ASSETGATE_MAX_CONNECTIONS`; nor does a request while its body is still arriving (it counts
    once the body is in).
    """

    max_connections: Annotated[int, tuning("server")] = Field(default=4096, ge=1)
    """Open connections per process (the connection budget); past it a new connection closes the
    oldest one with no request running, else the request whose body arrives slowest, or is
    closed itself when every one has a request at work. The open-file limit is raised to fit it
    plus 512 (up to the hard limit, which can only lower the budget).
    """

    keep_alive_s: Annotated[int, tuning("server")] = Field(default=5, ge=1)
    """Idle keep-alive connections close after this many seconds. A proxy in front must close its
    idle upstream connections sooner (the shipped nginx config uses 4 s).
    """

    header_timeout_s: Annotated[float, tuning("server")] = Field(default=10.0, gt=0)
    """A request's headers must be complete within this time of the connection opening (or the
    previous answer ending), however slowly they trickle; else the connection is closed
    ([Deploying](deploying.md#facing-clients-without-nginx)).
    """

    idle_timeout_s: Annotated[float, tuning("server")] = Field(default=30.0, gt=0)
    """A request body that stops arriving for this long, or an answer the client stops reading for
    this long, closes the connection (an unread answer is dropped, not flushed).
    """

    body_min_rate: Annotated[int, tuning("server")] = Field(default=1024, ge=0)
    """Bytes per second a request body must average from its headers on, once
    `ASSETGATE_BODY_GRACE_S` has passed; below it the connection is closed (a body trickling one
    byte every few seconds never trips the idle deadline). `0` turns the body deadline off.
    """

    body_grace_s: Annotated[float, tuning("server")] = Field(default=10.0, gt=0)
    """Seconds a request body may take before `ASSETGATE_BODY_MIN_RATE` applies."""

    shutdown_grace_s: Annotated[int, tuning("server")] = Field(default=25, ge=0, le=3600)
    """On SIGTERM: stop accepting, then give in-flight requests this many seconds before they are
    cancelled; exit status 0. Keep it below the orchestrator's kill timeout (Kubernetes: 30 s by
    default).
    """

    # --- work: threads, queues, deadlines, memory ---------------------------------------------
    render_workers: Annotated[int, tuning("work", FROM_CORES)] = Field(default=0, ge=1)
    """Image jobs (renders and conversions) running at once per process: the work gate's threads.
    CSS/JS minifying runs apart, in `ASSETGATE_MINIFY_WORKERS` processes, and ES module builds in
    `ASSETGATE_ESM_BUILD_WORKERS`. Unset, one more than the process's share of the cores (cores ÷
    `ASSETGATE_WORKERS` + 1), which keeps every core busy while a render waits for the GIL.
    """

    malloc_arenas: Annotated[int, tuning("work")] = Field(default=0, ge=0)
    """glibc malloc arenas of a process (its pools of memory, each with its own lock). 0 (the
    default): two per render thread, plus two (2 × `ASSETGATE_RENDER_WORKERS` + 2: each render
    thread and its libvips worker, the event loop), so the threads that allocate at once do not
    wait for each other's lock. Fewer keep less memory: `2` (the cap before) kept 10–20 MiB less
    at the peak and cost 0.4 ms more CPU per 1 MP image, 6 % fewer images a second
    (docs/benchmarks.md, "Malloc arenas"). `MALLOC_ARENA_MAX` in the environment wins.
    """

    render_queue: Annotated[int, tuning("work")] = Field(default=64, ge=0)
    """Jobs allowed to wait for the work gate (and, in a line of their own, for the minify pool);
    one more → 503 with `Retry-After`.
    """

    render_queue_wait_s: Annotated[float, tuning("work")] = Field(default=10.0, gt=0)
    """Longest a job may wait for a worker; past it the answer is 503 with `Retry-After` (given at
    the deadline, not when a thread frees up) and the job never starts.
    """

    render_timeout_s: Annotated[float, tuning("work")] = Field(default=30.0, gt=0)
    """Longest a render or conversion may run; past it the computation under way is killed (libvips
    stops at its next tile) and the answer is 503 with `Retry-After`, never cached.
    """

    render_memory_bytes: Annotated[int, tuning("work", FROM_MEMORY)] = Field(default=0, ge=0)
    """Budget of the memory peaks of the image jobs running at once, each counted from its header
    and plan by the worst peaks measured per kind of job and content (`imaging/cost.py`,
    [Benchmarks](benchmarks.md#memory-peak-of-one-image-job-benchrender_peakspy)): e.g. 9 bytes
    a pixel for a full-size JPEG/PNG → WebP read in one pass, 40 with alpha (libwebp's alpha
    coder on a noisy alpha), +6 for a progressive JPEG, +the bands when the pipeline needs the
    decoded image whole, ~1.3 for a JPEG reduced while loading; a job that does not fit waits
    while cheaper ones go ahead; one larger than the whole budget (but within
    `ASSETGATE_RENDER_JOB_MEMORY_BYTES`) runs alone. `0` counts jobs only.
    """

    render_job_memory_bytes: Annotated[int, tuning("work", FROM_MEMORY)] = Field(default=0, ge=0)
    """The memory safety limit of one image job (a render or a conversion): a job counted (as
    above) over it is answered at once with a 413 naming `file` (optimizer) or the upload
    (`images`, /api/convert) and saying what would fit, before any pixel is decoded. At the
    derived default of a 4 GB machine (2150 MiB) a full-size WebP of a 49 MP RGBA image (~1.9
    GiB counted) fits; at 1 GB (307 MiB) a full-size WebP with alpha above ~7.5 MP does not
    ([Optimizer](optimizer.md#memory-limit), [Conversion](convert.md#memory-limit)). Together
    with the budget this bounds a process' image memory at about this plus its baseline. `0`:
    no limit, such a job runs alone.
    """

    vips_concurrency: Annotated[int, tuning("work")] = Field(default=1, ge=1)
    """libvips threads per image (parallelism comes from requests)."""

    minify_workers: Annotated[int, tuning("work", FROM_CORES)] = Field(default=0, ge=0)
    """CSS/JS minifier processes per server process, and so the most `min=1`/`safe=1` jobs running
    at once, apart from the work gate's threads: jobs wait for them in a line of their own
    (as long as `ASSETGATE_RENDER_QUEUE`, for at most `ASSETGATE_RENDER_QUEUE_WAIT_S`), so image
    work never waits behind CSS/JS ([Optimizer](optimizer.md#optimizer-css-and-javascript-a)).
    Unset or `0`: half the cores, at least 1.
    """

    minify_timeout_s: Annotated[float, tuning("work")] = Field(default=5.0, gt=0)
    """Deadline of one minify/tidy job; the minifier process is killed at it and the file is served
    unminified with `X-Minify-Skipped: timeout` (that answer is kept for 10 minutes, then
    minifying is tried again). A real 1.2 MB bundle takes ~5 ms; 8 MB of plain code ~50 ms, of
    code full of nested template literals ~0.7 s (their scan is Python): the default leaves a
    margin for a loaded machine.
    """

    # --- optimizer (A) ------------------------------------------------------------------------
    root: Annotated[Root, operator("optimizer", "the packaged demo root")] = DEMO_ROOT
    """Where the optimizer's files come from: a directory, `s3://bucket[/prefix]` (any
    S3-compatible store) or `http(s)://host[:port][/prefix]` (an origin web server)
    ([Sources](sources.md)).
    """

    signing_keys: Annotated[SigningKeys, operator("optimizer", "empty (signing off)")] = Field(
        default_factory=list, repr=False
    )
    """Comma list of URL-signing keys, each at least 32 characters; the first signs, all verify.
    When set, every transforming optimizer request needs `s=`
    ([Deploying](deploying.md#signed-urls)).
    """

    cache_control: Annotated[str, tuning("optimizer")] = (
        "public, max-age=86400, stale-while-revalidate=604800"
    )
    """`Cache-Control` of optimizer responses."""

    cors_origin: Annotated[str, tuning("optimizer")] = "*"
    """`Access-Control-Allow-Origin` of optimizer responses."""

    max_input_pixels: Annotated[int, tuning("optimizer")] = Field(default=50_000_000, ge=1)
    """Largest source image (all frames of an animation count); beyond → 413."""

    max_upscale_pixels: Annotated[int, tuning("optimizer")] = Field(default=24_000_000, ge=1)
    """Largest output with `upscaling=resampling`; beyond → 413."""

    max_avif_pixels: Annotated[int, tuning("optimizer")] = Field(default=4_000_000, ge=1)
    """Largest AVIF output; beyond → 413."""

    max_source_bytes: Annotated[int, tuning("optimizer")] = Field(default=100 * MIB, ge=1)
    """Largest source file the optimizer decodes; beyond → 413."""

    max_animation_frames: Annotated[int, tuning("optimizer")] = Field(default=1000, ge=1)
    """Most frames of an animation kept; beyond → 413 (never truncated)."""

    max_jpeg_scans: Annotated[int, tuning("optimizer")] = Field(default=100, ge=1)
    """Most scans a JPEG may have (counted from its markers before decoding; the optimizer and
    conversion alike); beyond → 413. Each scan is a pass over the whole image: real encoders
    write 1 (baseline) to ~10 (progressive), libjpeg-turbo's own tools refuse more than 500; 200
    KB of 2,649 one-bit scans over 4096×4096 cost 10–13 CPU-s to decode.
    """

    disabled_codecs: Annotated[CommaList, tuning("optimizer")] = Field(default_factory=list)
    """Comma list of codecs to treat as missing (`avif,heif,webp,…`) → 501."""

    webp_effort: Annotated[int, tuning("optimizer")] = Field(default=4, ge=0, le=6)
    """libwebp effort 0..6: 4 (libwebp's default) spends 6–7 % fewer bytes than 2 at equal
    SSIMULACRA2 for twice the encode CPU
    ([optimizer.md](optimizer.md#encoders-what-a-quality-number-means)).
    """

    avif_effort: Annotated[int, tuning("optimizer")] = Field(default=0, ge=0, le=9)
    """AVIF encoder effort 0..9 (0 = fastest: same bytes and PSNR as 2 on a photo at a fifth of the
    time; [benchmarks.md](benchmarks.md#avif-against-webp)).
    """

    auto_quality_target: Annotated[int, tuning("optimizer")] = Field(default=75, ge=30, le=95)
    """The SSIMULACRA2 score 30..95 a bare `quality=auto` reaches
    ([optimizer.md](optimizer.md#qualityauto-the-same-look-for-fewer-bytes)); part of the
    variant's ETag.
    """

    default_quality: Annotated[Literal["85", "auto"], tuning("optimizer")] = "85"
    """`auto`: requests naming no `quality` get `quality=auto`; `85` keeps the spec's default."""

    fast_shrink: Annotated[bool, tuning("optimizer")] = True
    """Decode a downscaled JPEG at the largest DCT scale (1/2, 1/4, 1/8) that covers the target, as
    sharp, imgproxy and thumbor do; `false` keeps libvips' 2× margin (~15 % more CPU, a little
    less aliasing on fine patterns).
    """

    auto_formats: Annotated[AutoFormats, tuning("optimizer")] = Field(
        default_factory=lambda: ["webp"]
    )
    """Extension: the formats a request without `format` may get by `Accept`, best first:
    `avif,webp` answers AVIF to browsers that accept it (WebP above the AVIF limit), `webp` is
    the spec's rule, empty turns negotiation off.
    [optimizer.md](optimizer.md#extensions-images-for-the-modern-web)
    """

    watermarks: Annotated[JsonSetting, tuning("optimizer")] = None
    """Extension: JSON (inline or a file) mapping a name to a watermark under the root, `{"logo":
    {"path": "brand/logo.png", "gravity": "southeast", "margin": 16, "opacity": 0.6, "size":
    0.2}}`, applied by `watermark=<name>`; checked at start.
    [optimizer.md](optimizer.md#extensions-images-for-the-modern-web)
    """

    presets: Annotated[JsonSetting, tuning("optimizer")] = None
    """JSON (inline or a file) of named parameter sets for `preset=<name>`; checked at start."""

    allowed_widths: Annotated[Widths, tuning("optimizer", "empty (any width)")] = Field(
        default_factory=list
    )
    """Comma list of widths; a requested width is rounded up to the next one (the largest above
    them all).
    """

    asset_max_bytes: Annotated[int, tuning("optimizer")] = Field(default=8 * MIB, ge=1)
    """Largest CSS/JS file minified; larger ones are served unchanged."""

    ui_file_listing: Annotated[bool, tuning("optimizer")] = True
    """`GET /ui/files` lists the document root's images, CSS and JS files for the playground's path
    completion (hidden names, `cache/` and symbolic links left out); `false` answers 404 and the
    playground asks for the path to be typed.
    """

    # --- sources and the shared result store --------------------------------------------------
    sources: Annotated[Mounts, operator("sources")] = Field(default_factory=dict)
    """JSON object mounting several sources: path prefix → directory, `s3://…` or `http(s)://…`,
    e.g. `{"products/": "s3://shop/img", "": "/srv/www"}`; the longest prefix wins and
    `ASSETGATE_ROOT` is the mount of `""` unless one is given. A source is named by its prefix
    (`/products/`) in errors, logs, `/readyz` and metrics.
    """

    s3_endpoint_url: Annotated[
        str | None, operator("sources", "unset (`AWS_ENDPOINT_URL`, else AWS)")
    ] = None
    """Endpoint of an S3-compatible store (SeaweedFS, MinIO, R2, …)."""

    s3_path_style: Annotated[
        bool | None, operator("sources", "unset: `true` with a custom endpoint, else `false`")
    ] = None
    """`true`: path-style addressing (`endpoint/bucket/key`), which self-hosted stores (SeaweedFS,
    MinIO) need and which boto3 also picks for an IP endpoint; `false`: virtual-hosted
    (`bucket.endpoint/key`), AWS's own. Unset, it is path-style whenever
    `ASSETGATE_S3_ENDPOINT_URL` (or `AWS_ENDPOINT_URL`) is set. Each bucket is checked at start
    and by `/readyz`: a source bucket by listing one key under its prefix, the result store by
    writing, reading back and deleting one small object; a failure is one line such as `source
    /: no such bucket (NoSuchBucket): check the bucket name and ASSETGATE_S3_ENDPOINT_URL; …`,
    logged as a warning at start and listed under `degraded`.
    """

    origin_allow_private: Annotated[bool, operator("sources")] = False
    """`true` lets origin fetches reach loopback, private, link-local and other non-public
    addresses (an origin on the same network). Off, such an origin is refused with 502.
    """

    source_cache_dir: Annotated[
        Path, operator("sources", "`$XDG_CACHE_HOME/assetgate/sources` (else `~/.cache/...`)")
    ] = Field(default_factory=default_sources)
    """Local copies of remote sources."""

    result_store: Annotated[BucketUrl, operator("sources")] = None
    """`s3://bucket[/prefix]`: rendered images shared by every node, under memory and local disk;
    the store down means "render here", never an error.
    """

    result_store_key: Annotated[str | None, operator("sources")] = Field(
        default=None, repr=False, validate_default=True
    )
    """The secret every node shares (at least 32 characters), required with
    `ASSETGATE_RESULT_STORE` (without it every entry point stops naming it, exit 2): each entry
    is sealed with a keyed MAC (BLAKE2b) over its name and bytes, so an entry forged, moved or
    written with another key is a miss with one warning
    ([Sources](sources.md#results-shared-by-every-node)). Changing it makes every stored entry a
    miss once. Never logged.
    """

    source_connect_timeout_s: Annotated[float, tuning("sources")] = Field(
        default=3.0,
        gt=0,
        validation_alias=AliasChoices(
            "ASSETGATE_SOURCE_CONNECT_TIMEOUT_S", "ASSETGATE_ORIGIN_CONNECT_TIMEOUT_S"
        ),
    )
    """Connect deadline of every remote read: an origin, a bucket, the shared result store. Was
    `ASSETGATE_ORIGIN_CONNECT_TIMEOUT_S`, still read for one release (`serve` warns).
    """

    source_read_timeout_s: Annotated[float, tuning("sources")] = Field(
        default=20.0,
        gt=0,
        validation_alias=AliasChoices(
            "ASSETGATE_SOURCE_READ_TIMEOUT_S", "ASSETGATE_ORIGIN_READ_TIMEOUT_S"
        ),
    )
    """Deadline of a whole remote read (origin, bucket, result store); past it → 504. Was
    `ASSETGATE_ORIGIN_READ_TIMEOUT_S`, still read for one release (`serve` warns).
    """

    source_cache_bytes: Annotated[int, tuning("sources")] = Field(default=2 * GIB, ge=1)
    """Budget of the source cache per process (least recently used goes first)."""

    source_ttl_s: Annotated[float, tuning("sources")] = Field(default=300.0, ge=0)
    """A copy is answered without asking its source for this long, then revalidated with a
    conditional GET (`0`: every request asks).
    """

    # --- caches -------------------------------------------------------------------------------
    redis_url: Annotated[str | None, operator("caches")] = None
    """One Redis URL (`redis://host:6379/0`) for state shared between processes and machines."""

    result_cache_dir: Annotated[
        Path, operator("caches", "`$XDG_CACHE_HOME/assetgate/results` (else `~/.cache/...`)")
    ] = Field(default_factory=default_results)
    """Directory of the optimizer's result cache (transformed images, minified/gzipped CSS/JS),
    shared by every worker process of the machine. A full or read-only directory means "serve
    without caching", logged once.
    """

    result_cache_bytes: Annotated[int, tuning("caches")] = Field(default=1 * GIB, ge=0)
    """Disk budget of the result cache; least recently used entries go first. `0` turns the result
    cache off (`X-Optimizer-Cache: BYPASS`).
    """

    result_cache_memory_bytes: Annotated[int, tuning("caches")] = Field(default=64 * MIB, ge=0)
    """Per-process memory tier in front of the result cache's disk (the hottest rendered images);
    off with the result cache (`ASSETGATE_RESULT_CACHE_BYTES=0`).
    """

    asset_cache_bytes: Annotated[int, tuning("caches")] = Field(default=64 * MIB, ge=0)
    """Memory budget of the minified/gzipped asset cache."""

    file_memory_bytes: Annotated[int, tuning("caches")] = Field(default=32 * MIB, ge=0)
    """Memory budget for the bytes of small source files (≤ 256 KiB each), kept beside their
    content fingerprints so a repeat answer reads nothing; `0` keeps none (small files are then
    read per request).
    """

    # --- package library (B) ------------------------------------------------------------------
    store: Annotated[
        Path, operator("packages", "`$XDG_CACHE_HOME/assetgate/packages` (else `~/.cache/...`)")
    ] = Field(default_factory=default_store)
    """On-disk package store."""

    npm_registry: Annotated[
        str | None,
        operator(
            "packages",
            "the `registry=` of `ASSETGATE_NPMRC`, else `npm_config_registry`, else "
            "`npm config get registry`, else the registry recorded at install",
        ),
    ] = None
    """npm registry base URL: the default registry (a scope's own comes from `ASSETGATE_NPMRC`).
    Where no npm is installed (the container image, a host without node), the registry recorded
    by `python -m assetgate.packages.esm.install` in `<python prefix>/share/assetgate/npm-registry`
    is the last resort: what npm said on the installing machine, npm's own default (the public
    registry) unless that npm was pointed elsewhere. The registry in force and where it came from
    are logged at start; with none, a warning says `/npm/` answers 502.
    """

    npmrc: Annotated[Path | None, operator("packages")] = None
    """An `.npmrc` in npm's syntax: `registry=`, `@scope:registry=<url>`,
    `//host[:port]/path/:_authToken=` (or `:_auth`, `:username` + `:_password`), `${ENV}`
    expansion; read at start, an unset `${NAME}` stops the start naming it. Packages of a scope
    come from its registry with the credential for its URL, which never leaves ([Private
    registries](packages.md#private-registries)).
    """

    packages_token: Annotated[LongSecret, operator("packages")] = Field(default=None, repr=False)
    """A secret of at least 32 characters: the packages of `ASSETGATE_PACKAGES_TOKEN_SCOPES` are
    served only with `Authorization: Bearer <it>` (else 401), with `Cache-Control: private`.
    """

    library_api: Annotated[str, operator("packages", "the public cdnjs API")] = (
        "https://api.cdnjs.com"
    )
    """cdnjs-compatible library catalog API."""

    library_files: Annotated[str, operator("packages", "the public cdnjs file host")] = (
        "https://cdnjs.cloudflare.com/ajax/libs"
    )
    """Library files base (`<base>/<name>/<version>/<file>`)."""

    esm_bundler_dir: Annotated[
        Path | None, operator("packages", "`<python prefix>/share/assetgate/bundler`")
    ] = None
    """Where `python -m assetgate.packages.esm.install` put esbuild and cjs-module-lexer
    (`node_modules/` below it). Missing: `+esm` and `/npm/importmap` answer 501 naming it.
    """

    esm_node: Annotated[str, operator("packages")] = "node"
    """The node binary that runs the build script (looked up on `PATH`)."""

    store_max_bytes: Annotated[int, tuning("packages")] = Field(default=2 * GIB, ge=1)
    """Store budget; least recently used versions are evicted beyond it."""

    packages_allow: Annotated[CommaList, tuning("packages", "empty (everything)")] = Field(
        default_factory=list
    )
    """Comma-separated globs over whole package and library names (`@acme/*,react,react-dom`); any
    other name is a 404 naming the setting, in files, tags, `+esm`, import maps (their
    dependencies too) and search.
    """

    packages_deny: Annotated[CommaList, tuning("packages")] = Field(default_factory=list)
    """Comma-separated globs over whole names refused the same way (before the allow-list)."""

    packages_token_scopes: Annotated[
        CommaList,
        tuning(
            "packages",
            "the scopes with a registry in `ASSETGATE_NPMRC` (`@acme/*`), else every package",
        ),
    ] = Field(default_factory=list)
    """Comma-separated globs of the names `ASSETGATE_PACKAGES_TOKEN` guards."""

    upstream_timeout_s: Annotated[float, tuning("packages")] = Field(default=10.0, gt=0)
    """Timeout of each request of the shared HTTP client, seconds: package registries, library
    catalogs, RDAP, the CDNs' purge APIs. Sources and the result store have their own deadlines
    (`ASSETGATE_SOURCE_CONNECT_TIMEOUT_S`, `ASSETGATE_SOURCE_READ_TIMEOUT_S`), a whole whois
    lookup `ASSETGATE_WHOIS_TIMEOUT_S`.
    """

    search_cache_ttl_s: Annotated[float, tuning("packages")] = Field(default=60.0, ge=0)
    """Lifetime of cached search answers, seconds."""

    packument_max_bytes: Annotated[int, tuning("packages")] = Field(default=32 * MIB, ge=1024)
    """Largest registry document (packument) read for a package; a larger one answers 502 naming
    the package. It is parsed as a stream on a worker thread and only the dist-tags, each
    version's tarball, hashes and deprecation are kept.
    """

    esm_build_workers: Annotated[int, tuning("packages", FROM_CORES)] = Field(default=0, ge=0)
    """ES module builds running at once per server process: the build pool, apart from the work
    gate, so image renders never wait behind a build
    ([Packages](packages.md#es-modules-esm-and-import-maps)). Unset or `0`: half the cores, at
    least 1.
    """

    esm_build_queue: Annotated[int, tuning("packages")] = Field(default=16, ge=0)
    """Builds that may wait for the build pool; one more is a 503 with `Retry-After`."""

    esm_build_timeout_s: Annotated[float, tuning("packages")] = Field(default=20.0, gt=0)
    """Deadline of one ES module build; past it the bundler's processes are killed and the answer
    is 504 naming the setting (and the package version's other builds answer the same at once
    for 10 minutes). A build also waits at most this long for a place in the build pool (then
    503 with `Retry-After`).
    """

    esm_build_memory_bytes: Annotated[int, tuning("packages")] = Field(
        default=2 * GIB, ge=512 * MIB
    )
    """Address-space limit of the bundler's processes (node and esbuild), at least 512 MiB; a build
    over it fails with a 502 naming the setting (node itself needs about 1 GiB to start).
    """

    importmap_timeout_s: Annotated[float, tuning("packages")] = Field(default=120.0, gt=0)
    """Deadline of one `/npm/importmap` answer: past it the answer is 504 naming the setting; the
    modules built so far are kept (asking again goes on from there) and the builds nobody else
    waits for are stopped.
    """

    # --- conversion (C) and the shared rate limit ---------------------------------------------
    work_dir: Annotated[
        ExistingDirectory, operator("convert", "the system temporary directory (`TMPDIR`)")
    ] = None
    """Directory for conversion's per-request files (uploads, WebP outputs, the ZIP); each request
    gets its own private subdirectory, removed after the response. Must exist and be writable.
    """

    rate_limit_storage: Annotated[
        str | None, operator("convert", "`ASSETGATE_REDIS_URL` when set, else `memory://`")
    ] = None
    """`memory://` (this process only) or `redis://host:port` (one budget for every process and
    machine on it); set explicitly, it wins over `ASSETGATE_REDIS_URL`. With 2 or more
    `ASSETGATE_WORKERS`, `memory://` is refused at start while a part is rate limited: each
    worker would keep its own budget and multiply the limit.
    """

    rate_limit: Annotated[Rate, tuning("convert")] = "100/10 seconds"
    """Shared budget per client address (`limits` notation)."""

    rate_limit_fail_open: Annotated[bool, tuning("convert")] = True
    """When the storage is unreachable: `true` lets requests through (logged), `false` answers 503.
    """

    rate_limit_parts: Annotated[CommaList, tuning("convert")] = Field(
        default_factory=lambda: ["convert", "whois"]
    )
    """Parts that spend the shared budget (`optimizer`, `packages`, `convert`, `whois`); any other
    name stops the start with a line naming it.
    """

    upload_max_bytes: Annotated[int, tuning("convert")] = Field(default=25 * MIB, ge=1)
    """Largest uploaded file for conversion; beyond → 413."""

    upload_max_files: Annotated[int, tuning("convert")] = Field(default=20, ge=1)
    """Most files in one conversion request; beyond → 413."""

    upload_max_total_bytes: Annotated[int, tuning("convert")] = Field(default=100 * MIB, ge=1)
    """Largest conversion request body; beyond → 413."""

    convert_output_max_bytes: Annotated[int, tuning("convert")] = Field(default=64 * MIB, ge=1)
    """Largest WebP one uploaded file may convert to; beyond → 413 naming the file (checked before
    it is written). A small, highly compressible PNG at `quality=100` can grow 180×
    ([Conversion](convert.md)).
    """

    convert_output_max_total_bytes: Annotated[int, tuning("convert")] = Field(
        default=256 * MIB, ge=1
    )
    """Largest sum of the WebPs of one answer; beyond → 413 naming the file at which the sum, in
    upload order, goes over. Later files are not started once the finished ones are over.
    """

    convert_max_growth: Annotated[float, tuning("convert")] = Field(default=20.0, ge=0)
    """Largest WebP one uploaded file may convert to, as a multiple of its upload's bytes, once the
    WebP is over 1 MiB; beyond → 413 naming the file. A 55 KB PNG made a 40.5 MB WebP (740×)
    within the byte caps: an amplifier of the answer's bandwidth and temporary disk. `0`: off.
    ([Conversion](convert.md))
    """

    # --- whois (D) ----------------------------------------------------------------------------
    whois_servers: Annotated[JsonSetting, operator("whois")] = None
    """JSON (inline or a file) mapping a TLD (or `*`) to `host[:port]`; overrides the built-in
    table and RDAP.
    """

    rdap_bootstrap: Annotated[JsonSetting, operator("whois", "the shipped IANA snapshot")] = None
    """RDAP bootstrap (inline JSON or a file, re-read when it changes) replacing the snapshot."""

    whois_restricted_tlds: Annotated[CommaList, tuning("whois")] = Field(
        default_factory=lambda: ["edu", "mil"]
    )
    """TLDs refused with 403."""

    whois_timeout_s: Annotated[float, tuning("whois")] = Field(default=10.0, gt=0)
    """Deadline of one whois lookup, seconds."""

    whois_cache_ttl_s: Annotated[float, tuning("whois")] = Field(default=6 * 3600.0, ge=0)
    """Lifetime of cached whois answers, seconds."""

    whois_negative_cache_ttl_s: Annotated[float, tuning("whois")] = Field(default=600.0, ge=0)
    """Lifetime of cached "not registered" answers, seconds."""

    # --- cache tags and purge -----------------------------------------------------------------
    admin_token: Annotated[AdminSecret, operator("purge")] = Field(default=None, repr=False)
    """Enables `POST /admin/purge` (`Authorization: Bearer <token>`), at least 24 characters;
    unset, the path answers 404 to every method.
    """

    cdn_purge_url: Annotated[ApiBase, operator("purge")] = None
    """Cloudflare-shaped API base (`https://api.cloudflare.com/client/v4`); with the zone and
    token, a purge also `POST`s `<URL>/zones/<ZONE>/purge_cache` with `{"tags": [...]}`.
    """

    cdn_purge_zone: Annotated[str | None, operator("purge")] = None
    """The Cloudflare zone id."""

    cdn_purge_token: Annotated[ApiSecret, operator("purge")] = Field(default=None, repr=False)
    """A Cloudflare API token allowed to purge the zone (`Authorization: Bearer`)."""

    fastly_purge_url: Annotated[ApiBase, operator("purge")] = "https://api.fastly.com"
    """Fastly's API base."""

    fastly_service: Annotated[str | None, operator("purge")] = None
    """Fastly service id; with the token, a purge also `POST`s `<URL>/service/<id>/purge` with
    `{"surrogate_keys": [...]}`.
    """

    fastly_token: Annotated[ApiSecret, operator("purge")] = Field(default=None, repr=False)
    """A Fastly API token with `purge_select` (`Fastly-Key`)."""

    cloudfront_purge_url: Annotated[ApiBase, operator("purge")] = "https://cloudfront.amazonaws.com"
    """CloudFront's API base."""

    cloudfront_distribution: Annotated[str | None, operator("purge")] = None
    """CloudFront distribution id; a purge also sends `CreateInvalidation` with each tag as a
    `#tag` path (the distribution needs a `CacheTagConfig` naming `Cache-Tag`).
    """

    cache_tag_headers: Annotated[TagHeaders, tuning("purge")] = Field(
        default_factory=lambda: ["cache-tag", "surrogate-key"]
    )
    """Which headers carry every file answer's cache tags: `cache-tag` (Cloudflare, CloudFront's
    `CacheTagConfig`; comma-separated), `surrogate-key` (Fastly; space-separated), both, or
    empty for none.
    """

    edge_revalidate_s: Annotated[int, tuning("purge")] = Field(default=0, ge=0, le=86400)
    """When > 0, file answers that a shared cache may keep carry `X-Accel-Expires: <s>`: nginx
    keeps them that long, then revalidates (a 304 from the hot lane), so a purge reaches the
    shipped front within about that long. nginx obeys it over `Cache-Control` for its own cache
    and never passes it on. `0`: not sent (nginx keeps answers as `Cache-Control` says and a
    purge does not reach it).
    """

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        """The budgets the operator did not set, from the machine (``derived``)."""
        return with_derived(data)

    @field_validator("result_store_key")
    @classmethod
    def _store_key(cls, value: str | None, info: ValidationInfo) -> str | None:
        problem = store_key_problem(value, info.data.get("result_store"))
        if problem is not None:
            raise ValueError(problem)
        return value

    def path_style(self, endpoint: str | None) -> bool:
        """Path-style addressing (``endpoint/bucket/key``) unless ``ASSETGATE_S3_PATH_STYLE``
        says otherwise: whenever a custom endpoint is set (what MinIO and SeaweedFS expect, and
        what boto3 picks for an IP endpoint), virtual-hosted on AWS itself."""
        if self.s3_path_style is not None:
            return self.s3_path_style
        return endpoint is not None
