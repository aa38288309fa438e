"""``python -m cudnn_backend``: the command line (see ``cudnn_backend.cli``)."""
import sys

from cudnn_backend.cli import main

if __name__ == "__main__":
    sys.exit(main())
