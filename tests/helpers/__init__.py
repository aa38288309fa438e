"""Shared helpers of the test suite: generic (C-name) graph builders, the offline plan helper, GPU detection,
the crash-reporting child-process runner, and the fuzz workers."""
