"""The serving engine: what one version of a file is (``files``), answers whose headers were built
once (``prepared``), sending a file the cheapest way (``sendfile``), and the hot lane that replays
a repeat request before routing (``hotlane``).
"""
