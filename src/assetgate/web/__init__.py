"""The HTTP floor every part stands on: methods and errors, paths and file versions, the hot lane,
the work gate, rate limiting, metrics and logs (docs/architecture.md lists each module's job).
"""
