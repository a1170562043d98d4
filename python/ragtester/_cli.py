"""The ``ragtester`` console script: the command line, run inside the extension module."""

import signal
import sys

from . import _native


def main() -> None:
    """Run ``ragtester`` with this process's arguments and exit with its exit code. A reader that stops
    early (``ragtester … | head``) ends the command quietly, as it ends coreutils': SIGPIPE's default,
    which Python replaces, is restored for the console script only."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(_native.main(sys.argv[1:]))


if __name__ == "__main__":
    main()
