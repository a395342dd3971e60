"""``python -m assetgate``: the same command line as the ``assetgate`` script."""

from assetgate.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
