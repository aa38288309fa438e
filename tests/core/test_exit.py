"""What a process prints when it exits with cuDNN work unfinished: nothing.

Each case runs in a child interpreter and checks its whole stderr at exit:

* a daemon thread that calls cuDNN in a loop and catches ``CudnnError`` (the shutdown refusal is one);
* daemon threads that do not catch it, in the middle of heuristics and runtime-compiled plan builds, with cuDNN's
  messages logged or captured or neither, many times over (the refusal ends them without a word);
* a ``cudnn_messages()`` block left open in a suspended generator (finalized after the exit hooks ran).
"""
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers.crash import run_python


def test_daemon_thread_catching_cudnn_error_is_quiet_at_exit():
    """After the exit hook shuts the call gate, the thread's next call raises CudnnShutdownError, which is a
    CudnnError: the user's loop catches it and nothing is printed (it was "Exception in thread ..." each exit)."""
    out = run_python("""
        import atexit, threading, time
        refused = []

        def report():  # registered before cudnn_backend's hook, so it runs after it
            time.sleep(0.5)  # the thread meets the shut gate meanwhile
            print("shut out:", sorted({type(e).__name__ for e in refused}), flush=True)

        atexit.register(report)
        import cudnn_backend as cb
        from cudnn_backend.typed import Tensor

        started = threading.Event()

        def work():
            while True:
                try:
                    started.set()
                    Tensor(unique_id=1, data_type=cb.CUDNN_DATA_FLOAT, dimensions=[1, 8], strides=[8, 1],
                           byte_alignment=16).finalize()
                except cb.CudnnError as e:
                    refused.append(e)
                    time.sleep(0.01)

        threading.Thread(target=work, daemon=True).start()
        started.wait(60)
        print("exiting", flush=True)
        """, timeout=120)
    assert out.returncode == 0, out.describe()
    assert out.stdout.split("\n")[:2] == ["exiting", "shut out: ['CudnnShutdownError']"], out.describe()
    assert out.stderr == "", out.describe()


def test_shutdown_refusal_is_a_cudnn_error_naming_the_exit():
    out = run_python("""
        import atexit, pickle
        import cudnn_backend as cb
        from cudnn_backend.core import _gate
        from cudnn_backend.typed import Tensor

        _gate._wait_at_exit(0)  # what the exit hook does first: shut the call gate
        try:
            Tensor(unique_id=1, data_type=cb.CUDNN_DATA_FLOAT, dimensions=[1, 8], strides=[8, 1],
                   byte_alignment=16).finalize()
        except cb.CudnnError as e:
            assert isinstance(e, cb.CudnnShutdownError) and isinstance(e, cb.CudnnNotInitializedError), type(e).__mro__
            assert isinstance(e, cb.CudnnBackendError) and isinstance(e, RuntimeError)
            assert e.status == cb.Status.CUDNN_STATUS_NOT_INITIALIZED, e.status
            again = pickle.loads(pickle.dumps(e))
            assert type(again) is type(e) and str(again) == str(e) and again.status == e.status
            print(e)
        """, timeout=120)
    assert out.returncode == 0, out.describe()
    assert "the interpreter is exiting" in out.stdout, out.describe()
    assert out.stderr == "", out.describe()


def test_cudnn_messages_left_open_in_a_suspended_generator_is_quiet_at_exit():
    """The block's cleanup runs when the generator is collected at shutdown, after the exit hook detached every
    capture: it printed "ValueError: list.remove(x): x not in list"."""
    out = run_python("""
        from cudnn_backend.core import cudnn_messages

        def collecting():
            with cudnn_messages() as messages:
                yield messages

        suspended = collecting()
        next(suspended)
        print("exiting", flush=True)
        """, timeout=120)
    assert out.returncode == 0, out.describe()
    assert out.stdout.strip() == "exiting" and out.stderr == "", out.describe()


WORK_IN_FLIGHT = """
    import logging, sys, threading, time
    import cudnn_backend as cb
    from cudnn_backend.runtime.heuristics import get_configs
    from cudnn_backend.runtime.plans import build_plan
    from tests.helpers.offline import conv_graph, h200, matmul_relu_graph

    messages = sys.argv[1]
    if messages == "logged":  # to stdout: stderr must stay empty
        logging.basicConfig(stream=sys.stdout, level=logging.DEBUG)
        cb.enable_logging(logging.INFO)
    profile = h200()
    # cuDNN's one-time library set-up, in this thread alone: threads meeting in it while cuDNN calls back into
    # Python (its messages, logged) can deadlock with a call made holding the GIL, which is no exit's doing
    conv, runtime_compiled = conv_graph(), get_configs(matmul_relu_graph(), "A", profile)
    busy = threading.Barrier(5)

    def heuristics():
        busy.wait()
        while True:
            if messages == "captured":
                with cb.cudnn_messages():
                    get_configs(conv, "B", profile)
            else:
                get_configs(conv, "A", profile)

    def runtime_compiled_plans():  # NVRTC engines: each build takes long, so exit meets one in flight
        busy.wait()
        while True:
            for config in runtime_compiled:
                try:
                    build_plan(config, device_profile=profile)
                except cb.CudnnNotSupportedError:
                    pass

    def wrapped():  # a thread that turns the refusal into its own error ends quietly too
        busy.wait()
        while True:
            try:
                get_configs(conv, "A", profile)
            except cb.CudnnError as e:
                raise RuntimeError("heuristics stopped") from e

    for work in (heuristics, heuristics, runtime_compiled_plans, wrapped):
        threading.Thread(target=work, daemon=True).start()
    busy.wait(120)
    time.sleep(float(sys.argv[2]))
    sys.stdout.write("exiting\\n")  # one write (print makes two): a log record another thread writes stays off the line
    sys.stdout.flush()
    """


@pytest.mark.parametrize("messages", ["neither", "logged", "captured"])
def test_exit_with_cudnn_work_in_flight_is_quiet(messages):
    """Daemon threads in the middle of heuristics and plan builds when the main thread returns: each is refused its
    next cuDNN call and ends; the process exits 0 with nothing on stderr, every time (it printed an
    "Exception in thread ... CudnnShutdownError" traceback per thread, every time)."""
    runs = [(i, 0.05 * (i % 4)) for i in range(6)]  # exits at different points of the threads' work
    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(lambda run: run_python(WORK_IN_FLIGHT, args=(messages, run[1]), timeout=90), runs))
    for (i, _), out in zip(runs, outs):
        assert out.returncode == 0, f"run {i}: {out.describe()}"
        assert "exiting" in out.stdout.splitlines(), f"run {i}: {out.describe()}"
        assert out.stderr == "", f"run {i}: {out.describe()}"


def test_a_thread_ending_for_another_reason_at_exit_is_still_reported():
    """Only the refusal is silenced: any other exception of a thread, even once the gate is shut, still reaches the
    program's own excepthook."""
    out = run_python("""
        import atexit, threading

        def reported(args):
            print("reported:", args.exc_type.__name__, args.exc_value, flush=True)

        def fail():
            raise ValueError("a real bug")

        def refused():
            Tensor(unique_id=1, data_type=cb.CUDNN_DATA_FLOAT, dimensions=[1, 8], strides=[8, 1],
                   byte_alignment=16).finalize()

        def after_the_gate_shut():  # registered before cudnn_backend's hooks: runs after them
            for work in (refused, fail):
                thread = threading.Thread(target=work, daemon=True)
                thread.start()
                thread.join()

        atexit.register(after_the_gate_shut)
        threading.excepthook = reported
        import cudnn_backend as cb
        from cudnn_backend.typed import Tensor
        refused()  # the gate is open: no exception
        print("exiting", flush=True)
        """, timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.describe()
    assert out.stdout.splitlines() == ["exiting", "reported: ValueError a real bug"], out.describe()
