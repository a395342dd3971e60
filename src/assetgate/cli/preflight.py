"""Every setting checked before anything starts: one line naming the variable, exit status 2.

``assetgate serve``, ``assetgate optimize`` and the app factory uvicorn's workers call all get
their settings from ``checked_settings``, so they run the same checks in the same order: what
pydantic validates (``settings_errors``), then what needs the file system or a part's own
parser — the document root, the directories the service writes (created when missing, then
written to once), the JSON settings' meaning, the rate-limit parts. The first problem of each
setting is one line; nothing prints a traceback. Unknown ``ASSETGATE_*`` names are warnings
(``typo_warnings``): a typo is otherwise ignored.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from assetgate.cli.settings_errors import load_settings
from assetgate.settings import Settings, renamed_in_use, unknown_names
from assetgate.sources.guard import literal_private

#: ``ASSETGATE_*`` variables that are no setting on purpose: the compose file's own and the
#: test script's.
NOT_SETTINGS = frozenset({"ASSETGATE_SITE", "ASSETGATE_APT_UPDATED"})


class SettingsRefused(Exception):
    """Unusable settings: ``str()`` is one ``assetgate: NAME: why`` line per problem."""


def checked_settings(
    overrides: Mapping[str, object] | None = None, flags: Mapping[str, str] | None = None
) -> Settings:
    """The settings from the environment and ``overrides`` (a field -> its value from a flag,
    named in messages by ``flags``: field -> ``--flag``), every check passed; else
    ``SettingsRefused``. The one way every entry point gets its settings."""
    given = dict(overrides or {})
    flags = flags or {}
    try:
        settings = load_settings(given, flags)
    except SystemExit as exc:
        raise SettingsRefused(str(exc.code)) from None
    named = {f"ASSETGATE_{key.upper()}": flag for key, flag in flags.items() if key in given}
    found = problems(settings, named)
    if found:
        raise SettingsRefused("\n".join(found))
    return settings


def name_warnings(environ: Mapping[str, str] | None = None) -> list[str]:
    """Misspelt names (``typo_warnings``) and old names still read, one line each."""
    renamed = [
        f"assetgate: {old} is now {new}; the old name is read until the next release"
        for old, new in renamed_in_use(environ)
    ]
    return typo_warnings(environ) + renamed


def directory_problem(path: Path) -> str | None:
    """Why the service cannot create ``path`` or write in it, or None. Creates it when missing."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return f"{path} is not a directory"
    except OSError as exc:
        return f"cannot create {path} ({exc.strerror or type(exc).__name__})"
    if not path.is_dir():
        return f"{path} is not a directory"
    try:
        fd, name = tempfile.mkstemp(prefix=".assetgate-check-", dir=path)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return f"cannot write in {path} ({exc.strerror or type(exc).__name__})"
    return None


def unknown_budget_part(settings: Settings) -> str | None:
    """A name in ``ASSETGATE_RATE_LIMIT_PARTS`` that no part spending the budget has (a typo
    would otherwise leave that part unlimited without a word)."""
    from assetgate.app import PARTS

    names = sorted(part.name for part in PARTS if part.budget)
    unknown = [name for name in settings.rate_limit_parts if name not in names]
    if not unknown:
        return None
    return f"no part {unknown[0]!r} spends the budget (the parts that can: {', '.join(names)})"


def _remote(settings: Settings) -> bool:
    values = [str(settings.root), *settings.sources.values()]
    return any("://" in value for value in values)


def _checks(settings: Settings) -> list[tuple[str, Callable[[], str | None]]]:
    """(variable, check) in the order they are reported; a check answers its problem or None."""
    from assetgate.imaging.limits import DecodeLimits
    from assetgate.optimizer.presets import load_presets
    from assetgate.optimizer.watermark_images import checker
    from assetgate.optimizer.watermarks import parse_watermarks
    from assetgate.packages.registry import read_npmrc
    from assetgate.web.ratelimit import shared_budget_problem
    from assetgate.whois.bootstrap import load_bootstrap
    from assetgate.whois.servers import load_server_config

    def root() -> str | None:
        if isinstance(settings.root, Path) and not settings.root.is_dir():
            return f"{settings.root} is not a directory"
        return None

    def parsed(load: Callable[[], object]) -> Callable[[], str | None]:
        def check() -> str | None:
            try:
                load()
            except ValueError as exc:
                return str(exc)
            return None

        return check

    real_root = os.path.realpath(str(settings.root))
    check_image = checker(DecodeLimits.from_settings(settings))  # the requests' decode limits
    checks: list[tuple[str, Callable[[], str | None]]] = [
        ("ASSETGATE_ROOT", root),
        ("ASSETGATE_STORE", lambda: directory_problem(settings.store)),
    ]
    if settings.result_cache_bytes > 0:
        checks.append(
            ("ASSETGATE_RESULT_CACHE_DIR", lambda: directory_problem(settings.result_cache_dir))
        )
    if _remote(settings):
        checks.append(
            ("ASSETGATE_SOURCE_CACHE_DIR", lambda: directory_problem(settings.source_cache_dir))
        )
    if settings.work_dir is not None:
        work_dir = settings.work_dir
        checks.append(("ASSETGATE_WORK_DIR", lambda: directory_problem(work_dir)))
    checks += [
        ("ASSETGATE_PRESETS", parsed(lambda: load_presets(settings.presets))),
        (
            "ASSETGATE_WATERMARKS",
            parsed(lambda: parse_watermarks(settings.watermarks, real_root, check_image)),
        ),
        ("ASSETGATE_WHOIS_SERVERS", parsed(lambda: load_server_config(settings.whois_servers))),
        ("ASSETGATE_RDAP_BOOTSTRAP", parsed(lambda: load_bootstrap(settings.rdap_bootstrap))),
        ("", parsed(lambda: read_npmrc(settings.npmrc, os.environ))),  # names ASSETGATE_NPMRC
        ("ASSETGATE_RATE_LIMIT_PARTS", lambda: unknown_budget_part(settings)),
        ("", lambda: shared_budget_problem(settings)),  # names its own variables
    ]
    return checks


def problems(settings: Settings, named: Mapping[str, str] | None = None) -> list[str]:
    """One ``assetgate: NAME: why`` line per unusable setting; ``named`` maps a variable to the
    command-line flag that set it instead (``--root``)."""
    lines = []
    for variable, check in _checks(settings):
        problem = check()
        if problem is not None:
            name = (named or {}).get(variable, variable)
            lines.append(f"assetgate: {name}: {problem}" if name else f"assetgate: {problem}")
    return lines


def typo_warnings(environ: Mapping[str, str] | None = None) -> list[str]:
    """A warning line for each ``ASSETGATE_*`` variable no setting reads."""
    lines = []
    for name, closest in unknown_names(environ):
        if name in NOT_SETTINGS:
            continue
        hint = f"; did you mean {closest}?" if closest else ""
        lines.append(f"assetgate: warning: {name} is no setting and is ignored{hint}")
    return lines


def origin_warnings(settings: Settings) -> list[str]:
    """An origin whose host is loopback or private by itself (``http://127.0.0.1:9000``,
    ``localhost``) while private addresses are refused: every fetch would be refused."""
    if settings.origin_allow_private:
        return []
    named = {"": str(settings.root), **settings.sources}
    lines = []
    for prefix, url in named.items():
        host = urlsplit(url).hostname if url.startswith(("http://", "https://")) else None
        if host is not None and literal_private(host):
            variable = (
                "ASSETGATE_ROOT"
                if prefix == "" and url == str(settings.root)
                else ("ASSETGATE_SOURCES")
            )
            lines.append(
                f"assetgate: warning: {variable}: {url} is a private or loopback address, which "
                "origin fetches refuse; set ASSETGATE_ORIGIN_ALLOW_PRIVATE=true to allow it"
            )
    return lines
