"""Where ``tune/catalogue.py`` still imports ``as_data_type`` from: the families' argument coercion lives in
``core.families._build``. (Kept only until that import moves; nothing else reads this module.)"""
from __future__ import annotations

from cudnn_backend.core.families._build import as_data_type

__all__ = ["as_data_type"]
