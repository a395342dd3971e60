"""Configuration: one pydantic-settings object, every field an ``ASSETGATE_*`` variable.

- ``fields``: the ``Settings`` class — the fields by family, each marked operator or tuning
  (``roles``) and documented by its docstring, the text docs/configuration.md's tables are
  generated from;
- ``values``: what a value may be (the checks that refuse one at start, naming the variable),
  and the JSON settings' reader;
- ``derived``: the defaults that come from the machine (memory, cores) or the user's cache;
- ``names``: the variables read, the old names still read, the ones no setting reads.

What needs the file system or a part's own parser is checked by ``cli/preflight.py``, at every
entry point.
"""

from assetgate.settings.fields import DEMO_ROOT, Settings
from assetgate.settings.names import RENAMED, known_names, renamed_in_use, unknown_names, variable
from assetgate.settings.values import check_source_url, is_inline_json, json_text, json_value

__all__ = [
    "DEMO_ROOT",
    "RENAMED",
    "Settings",
    "check_source_url",
    "is_inline_json",
    "json_text",
    "json_value",
    "known_names",
    "renamed_in_use",
    "unknown_names",
    "variable",
]
