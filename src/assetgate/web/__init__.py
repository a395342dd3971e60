"""HTTP conventions every part follows: methods, HEAD and CORS, the JSON error, validators and
conditional requests, negotiation, query readers, the path check, media types, signed URLs, the
rate limit, the OpenAPI document (docs/architecture.md lists each module's job).
"""
