"""The ``ragtester`` console script: the command line, run inside the extension module."""

import sys

from . import _native


def main() -> None:
    """Run ``ragtester`` with this process's arguments and exit with its exit code."""
    sys.exit(_native.main(sys.argv[1:]))


if __name__ == "__main__":
    main()
