"""The command line (``cudnn-backend`` and ``python -m cudnn_backend``): all terminal output lives here."""
from cudnn_backend.cli.app import main

__all__ = ["main"]
