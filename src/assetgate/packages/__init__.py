"""Interface B, the package library: /npm search over several catalogs and version-pinned files.

Files are verified against the registry's integrity before they are kept in the content-addressed
store; the map of the modules is in docs/architecture.md, the behaviour in docs/packages.md.
"""
