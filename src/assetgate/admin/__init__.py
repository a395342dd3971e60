"""The operator's part: ``POST /admin/purge`` (docs/caching.md, "Purge")."""
