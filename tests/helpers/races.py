"""Threads racing to close an object while others use it (the hardening tests' close races)."""
from __future__ import annotations

import threading

__all__ = ["close_race"]


def close_race(close, uses=(), *, closers=2, calls=10) -> list:
    """``closers`` threads call ``close`` once and one thread per entry of ``uses`` calls it up to ``calls`` times,
    all released together by one barrier. A use refused because the object is closed (a ValueError saying
    "closed") ends that thread's calls; anything else any thread raises is returned (``repr``), [] when none."""
    start = threading.Barrier(closers + len(uses))
    errors = []

    def run(f, times):
        start.wait()
        for _ in range(times):
            try:
                f()
            except ValueError as e:
                if "closed" not in str(e):
                    errors.append(repr(e))
                return
            except BaseException as e:  # noqa: BLE001 - reported to the test
                errors.append(repr(e))
                return

    threads = [threading.Thread(target=run, args=(close, 1)) for _ in range(closers)]
    threads += [threading.Thread(target=run, args=(f, calls)) for f in uses]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
