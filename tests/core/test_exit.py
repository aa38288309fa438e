"""What a process prints when it exits with cuDNN work unfinished: nothing.

Each case runs in a child interpreter and checks its whole stderr at exit:

* a daemon thread that calls cuDNN in a loop and catches ``CudnnError`` (the shutdown refusal is one);
* a ``cudnn_messages()`` block left open in a suspended generator (finalized after the exit hooks ran).
"""
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
