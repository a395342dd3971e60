"""assetgate: image/asset optimizer, package library, WebP conversion and whois in one service."""

__version__ = "0.1.0"
