"""Interface C, WebP conversion: ``POST /api/convert`` streams uploads to disk and converts each
through the work gate as it arrives (docs/convert.md).
"""
