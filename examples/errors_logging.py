"""Errors and logging: what a refusal tells you, and how to see cuDNN's own log.

* Python mistakes (an unknown keyword, a wrong type, a required attribute not set) raise ``TypeError`` /
  ``ValueError`` before cuDNN is called, naming the attribute.
* cuDNN's refusals raise ``CudnnError`` subclasses (``CudnnBadParamError``, ``CudnnNotSupportedError``, ...)
  carrying ``.status``, the function, the descriptor type and attribute, and cuDNN's own message.
* ``enable_logging()`` routes cuDNN's messages to Python's ``logging``; ``cudnn_messages()`` collects them;
  ``CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stderr`` makes cuDNN write its full log itself.

Runs anywhere.

    python examples/errors_logging.py
"""
import logging
import os
import subprocess
import sys

import cudnn_backend as cb
from cudnn_backend.typed import Tensor


# [python_errors]
def python_errors():
    """Caught before cuDNN sees anything: each message names what is wrong."""
    out = []
    for make in (lambda: Tensor(uniqe_id=1),                                   # a typo
                 lambda: Tensor(unique_id="x"),                                # a wrong type
                 lambda: Tensor(unique_id=1, data_type=cb.CUDNN_DATA_HALF, dimensions=[1, 2]).finalize()):
        try:
            make()
        except (TypeError, ValueError) as e:
            out.append(f"{type(e).__name__}: {e}")
    return out
# [/python_errors]


# [cudnn_error]
def cudnn_error():
    """cuDNN refuses: a byte alignment that is not a multiple of the element size."""
    try:
        Tensor(unique_id=1, data_type=cb.CUDNN_DATA_HALF, dimensions=[1, 2], strides=[2, 1], byte_alignment=3).finalize()
    except cb.CudnnBadParamError as e:          # a CudnnError, a CudnnBackendError, a RuntimeError
        return e
# [/cudnn_error]


# [logging]
def python_logging():
    """cuDNN's messages as records of the ``cudnn_backend.cudnn`` logger (off until asked for)."""
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logger = logging.getLogger("cudnn_backend.cudnn")
    handler = Keep()
    logger.addHandler(handler)
    cb.enable_logging(logging.WARNING)           # errors and warnings; INFO also needs CUDNN_LOGLEVEL_DBG=3
    try:
        cudnn_error()
    finally:
        cb.disable_logging()
        logger.removeHandler(handler)
    return records
# [/logging]


# [capture]
def captured_messages():
    """The same messages collected for one block of code, e.g. to show them next to a failure."""
    with cb.cudnn_messages() as messages:
        cudnn_error()
    return messages
# [/capture]


# [cudnn_log]
def cudnn_own_log():
    """cuDNN's own log (every API call, every attribute) from a child process with the two variables set."""
    env = dict(os.environ, CUDNN_LOGLEVEL_DBG="3", CUDNN_LOGDEST_DBG="stderr")
    code = ("from cudnn_backend.typed import Tensor; import cudnn_backend as cb; "
            "Tensor(unique_id=1, data_type=cb.CUDNN_DATA_HALF, dimensions=[1, 2], strides=[2, 1], "
            "byte_alignment=16).finalize()")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    return run.returncode, run.stderr.splitlines()
# [/cudnn_log]


def main():
    for line in python_errors():
        print(line)
    e = cudnn_error()
    print(f"{type(e).__name__}: status {e.status.name}, function {e.function}, descriptor "
          f"{e.descriptor_type.name}\n  cuDNN says: {e.cudnn_message}\n  reason: {e.reason}")
    records = python_logging()
    print(f"logging: {len(records)} record(s); first: {records[0].levelname} {records[0].getMessage()[:100]!r}"
          if records else "logging: no records")
    messages = captured_messages()
    print(f"cudnn_messages: {len(messages)} message(s)")
    rc, lines = cudnn_own_log()
    print(f"CUDNN_LOGLEVEL_DBG=3: exit {rc}, {len(lines)} log lines, e.g. {next((ln for ln in lines if ln.strip()), '')!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
