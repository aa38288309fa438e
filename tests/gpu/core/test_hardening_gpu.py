"""Hardening of the core on a GPU (the CPU side: tests/core/test_hardening.py): two threads close one real handle,
200 rounds, in a child process that reports a crash."""
from tests.helpers.crash import assert_survives


def test_two_threads_close_one_real_handle_200_rounds():
    assert_survives("""
        import threading
        import cudnn_backend as cb
        errors = []
        for _ in range(200):
            h = cb.Handle()
            start = threading.Barrier(2)
            def close():
                start.wait()
                try:
                    h.close()
                except BaseException as e:
                    errors.append(repr(e))
            threads = [threading.Thread(target=close) for _ in range(2)]
            for t in threads: t.start()
            for t in threads: t.join()
            assert h.closed and h.ptr == 0
        assert not errors, errors[:3]
        print("ok")
        """, expect_stdout="ok", timeout=300)
