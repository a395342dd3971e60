"""The CSS/JavaScript floor: ``?min=1&compress=1&safe=1`` answers (minify, tidy, gzip, cache).

A floor, not a part: the optimizer (document-root files) and packages (pinned package files) both
answer CSS/JS through ``minify.respond``, so the two cannot drift apart. It sits above ``web``
(params, caching, the CPU door) and beside ``imaging``; it never imports a part or ``imaging``.
"""
