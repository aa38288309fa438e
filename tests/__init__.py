"""The cudnn-backend test suite (a package, so ``tests.helpers`` is importable from every area)."""
