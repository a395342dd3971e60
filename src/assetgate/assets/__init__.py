"""CSS and JavaScript: minify, safe-mode tidy, gzip, cache.

Shared by the optimizer and the package library.
"""
