"""What an offline answer cannot decide: cuDNN refusals caused by a fact that only a live GPU gives.

Offline, cuDNN describes the GPU with a device profile (``runtime.profiles``), and the package's libcuda stand-in
answers "no device" to every driver call. Most of what cuDNN checks comes from the profile and is answered offline
exactly as on the GPU. A few facts cuDNN reads only from a live device: a refusal that names one of them says
nothing about the GPU, so the verdict is **unknown offline** (never "not supported"), with the reason.

The kinds (``GAPS``), each recognised by the words cuDNN logs when it refuses for it:

``cluster_layout``
    cuDNN fills the cluster occupancy of its device properties (how many thread-block clusters of 1 to 16 blocks
    fit at once, one block per SM: the GPCs' SM counts) and the GPC layout from the driver, with
    ``cuOccupancyMaxActiveClusters`` on a kernel of its own, only while it describes a live device. No release's
    device-profile JSON has a member for them, and offline no release asks the driver (the stand-in's trace,
    ``CUDNN_BACKEND_STUB_TRACE=1``, shows no such call), so the stand-in cannot supply them. cuDNN 9.19 and 9.22
    leave them empty: their runtime-compiled convolution engines refuse every config with ``No GPC available at:
    cga_count == 0`` (conv wgrad + pointwise chains, dgrad with a reduction or GEN_STATS: 54 graphs of the default
    catalogue, 41 of which an H100 runs with 9.19.0). cuDNN 9.28 assumes one GPC of 18 SMs offline instead and
    accepts them; 9.10.2 and 9.14 accept them too.
``live_driver``
    cuDNN's message carries the stand-in's own answer ("no CUDA device (cudnn-backend's no-device stand-in)"): it
    asked the driver for something only a GPU answers.
``cuda_runtime``
    cuDNN links the CUDA runtime statically, and a few steps start it: some engines while they finalize (conv_fwd
    3, 4, 6 and 58, dgrad 4, 5, 7, 50 and 63, wgrad 17, 18 and 62, conv + bias 12, 13, 14 and 39: they finalize on
    the GPU, never offline), and some heuristics queries (matmul, + ReLU, + GELU; modes A and B of some single
    convolutions), which list fewer configs offline. The
    runtime starts only on a real driver: it needs the driver's private export tables, which the stand-in cannot
    give, so it gives up and cuDNN logs no reason. Not recognised by words, then, but by the stand-in's record
    (``core.device.runtime_requests``): the runtime asks the stand-in once per process and never again, so each step
    that could start it (every engine's finalize, every heuristics mode asked) is first tried in a forked copy of a
    process where it has not asked yet (``runtime_starts``); the steps that asked are recorded
    (``{"engines": [...], "heuristics": [...]}``). ``support`` probes each graph in a forked copy and scouts only
    the graphs whose copy's runtime asked (``run_observed``: the process stays observable for the next graph);
    ``explore`` scouts before its first step. In a process where it already asked (code that ran cuDNN itself
    before) this cannot be observed: a result records ``{"observed": False}``, a matrix's (an exploration's) notes
    say so (``RUNTIME_UNOBSERVED``).
``offline_layout``
    Offline no release has the GPU's cluster layout: 9.28 assumes one GPC of 18 SMs, 9.19 and 9.22 have none, and
    configs are checked against that without a word. Heuristics' lists chosen so may differ on the GPU
    (``layout_dependent``): on a release that assumes a layout (from 9.28), those with a config of the
    runtime-compiled GEMM / convolution engines (a ``KERNEL_CFG`` knob: engines 4 and 7, ...; on 9.19 and 9.22 the
    ``cluster_layout`` refusals label these); on every release, normalizations whose mode A leaves out an engine
    FALLBACK lists (the persistent layer / RMS norm kernels, whose grid of clusters A checks against the layout).
    Measured against an H200: 9.28.1 marks 362 of the default catalogue's 416 graphs supported offline, 308 of
    which list other configs live; 9.19.0 marks the 10 normalizations, all of which do. On both, every supported
    graph whose lists or engines differ live carries a label. Only a caveat: it never makes a graph unknown
    offline.

A supported graph whose heuristics met such a refusal is still supported, but heuristics' lists may differ on the
GPU (the caveat says so). Heuristics that return configs log nothing about the engines they leave out, so offline
the first configs of each engine that finalizes but was left out are tried (``silent_gaps``) and their refusals
read too: on cuDNN 9.19 this finds the cluster-layout refusal behind 318 of the default catalogue's 369 supported
graphs, and for every one of them the H100's live configs or engine counts differ from the offline ones.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import re
import select
import signal
import threading
import weakref
from dataclasses import dataclass

from cudnn_backend.core import device as _device
from cudnn_backend.core._logging import cudnn_messages
from cudnn_backend.core.versions import parse_version
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import heuristics as _heuristics

__all__ = ["UNKNOWN_OFFLINE", "Gap", "GAPS", "gaps_in", "gap", "gap_keys", "describe_gaps", "silent_gaps", "gap_caveat",
           "ENUMERATED_CONFIGS", "runtime_observable", "runtime_starts", "runtime_steps", "run_observed",
           "layout_dependent", "ASSUMES_LAYOUT_FROM", "RUNTIME_UNOBSERVED", "offline_labels"]

#: offline, the configs tried of each engine that finalizes but heuristics proposed none of (``silent_gaps``)
ENUMERATED_CONFIGS = 4

#: the verdict of a graph offline cannot decide
UNKNOWN_OFFLINE = "unknown offline"


@dataclass(frozen=True)
class Gap:
    """One kind of refusal offline cannot decide: its ``key``, the ``fact`` offline lacks, the ``pattern`` of
    cuDNN's words that names it (None: recognised otherwise, see the module's notes), and ``why`` cuDNN refuses
    for it offline."""

    key: str
    fact: str
    pattern: re.Pattern | None
    why: str


GAPS = (
    Gap("cluster_layout", "the GPU's thread-block cluster layout (GPCs)",
        re.compile(r"No GPC available|cga_count == 0"),
        "it reads them only from a live GPU, no device profile carries them, and it found none ('No GPC "
        "available')"),
    Gap("live_driver", "an answer of the CUDA driver",
        re.compile(r"no CUDA device \(cudnn-backend's no-device stand-in\)"),
        "it asked the driver for something only a GPU answers, and the no-device stand-in said 'no device'"),
    Gap("cuda_runtime", "the CUDA runtime (it starts only on a real driver)", None,
        "steps that start it get nothing from it offline"),
    Gap("offline_layout", "the GPU's cluster layout (GPCs)", None,
        "heuristics checked these configs against the layout it has offline instead (cuDNN 9.28: one GPC of 18 SMs; "
        "9.19, 9.22: none)"),
)
_BY_KEY = {g.key: g for g in GAPS}


def gap_keys() -> tuple:
    """The keys of every known offline gap, in order."""
    return tuple(_BY_KEY)


def gap(key) -> Gap:
    """The ``Gap`` of ``key`` (KeyError naming the known keys for another)."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"no offline gap {key!r}; known: {', '.join(_BY_KEY)}") from None


def gaps_in(messages) -> list:
    """The keys of the gaps whose words occur in ``messages`` (cuDNN's log lines, or one text), in ``GAPS`` order."""
    if isinstance(messages, str):
        messages = (messages,)
    text = "\n".join(str(m) for m in messages)
    return [g.key for g in GAPS if g.pattern is not None and g.pattern.search(text)]


def _runtime_words(runtime) -> str:
    """What needed the CUDA runtime (``runtime``: ``{"engines": [...], "heuristics": [...]}``), in words."""
    runtime = runtime or {}
    parts = []
    if runtime.get("engines"):
        engines = runtime["engines"]
        parts.append(f"engine{'s' if len(engines) > 1 else ''} {', '.join(map(str, engines))} "
                     f"need{'' if len(engines) > 1 else 's'} a live GPU to finalize: {UNKNOWN_OFFLINE}")
    if runtime.get("heuristics"):
        parts.append(f"heuristics {', '.join(runtime['heuristics'])} consulted it: their lists may differ on the GPU")
    return ", ".join(parts) or gap("cuda_runtime").why


def describe_gaps(keys, release=None, runtime=None) -> str:
    """One sentence per gap: what cuDNN ``release`` ("9.19.0") lacked offline and why it refused (``runtime``: the
    steps that needed the CUDA runtime, for ``cuda_runtime``)."""
    who = f"cuDNN {release}" if release else "cuDNN"
    return "; ".join(f"{who} lacks {gap(k).fact} offline: "
                     + (_runtime_words(runtime) if k == "cuda_runtime" else gap(k).why) for k in keys)


def gap_caveat(keys, release=None, *, refused, runtime=None) -> str:
    """What the gaps ``keys`` mean for an offline answer, in words: for a ``refused`` graph that the GPU may run it,
    for a supported one that heuristics' lists (and, with engines that need the CUDA runtime, which engines
    finalize) may differ on the GPU ("" without gaps)."""
    if not keys:
        return ""
    if refused:
        return f"the GPU may run this graph: {describe_gaps(keys, release, runtime)}; probe it on the GPU"
    what = "heuristics' lists" + (" and the engines that finalize" if (runtime or {}).get("engines") else "")
    return f"{what} may differ on the GPU: {describe_gaps(keys, release, runtime)}"


def silent_gaps(engine_infos, proposed, limit=ENUMERATED_CONFIGS) -> list:
    """The gaps behind engines heuristics left out without a word: for each ``EngineInfo`` (of an engine that
    finalizes for the graph, with its descriptor) whose engine is not in ``proposed`` (engine indices heuristics
    returned configs of), its first ``limit`` configs are finalized, cuDNN's messages read, until one names a
    gap."""
    for info in engine_infos:
        if info.engine_index in proposed or info.engine is None:
            continue
        for knobs in info.knob_space(limit=limit):
            with cudnn_messages() as log:
                try:
                    _engines.make_config(info.engine, knobs, check=False)
                except CudnnBackendError as err:
                    log.append(str(err))
            found = gaps_in(log)
            if found:
                return found
    return []


# ---------------------------------------------------------------------------------------------
# the CUDA runtime: which steps start it (``cuda_runtime``)
# ---------------------------------------------------------------------------------------------
#: what an answer says where the CUDA runtime's start cannot be observed (it already asked in this process)
RUNTIME_UNOBSERVED = ("not verified: whether engines or heuristics need the CUDA runtime (which starts only on a "
                      "real driver): it already failed to start in this process, so no step can be seen to start it; "
                      "a fresh process sees it (cudnn-backend support)")


_QUIET_THREADS: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()


def never_calls_cudnn(thread: threading.Thread) -> threading.Thread:
    """Mark ``thread`` as one that never enters cuDNN (a progress display's refresh), so that it does not keep the
    runtime's start from being observed (``runtime_observable``); returns it."""
    _QUIET_THREADS.add(thread)
    return thread


def runtime_observable() -> bool:
    """Whether a step's start of cuDNN's CUDA runtime can be seen here: the no-device stand-in is the driver, the
    runtime has not asked it yet in this process (it asks once and remembers that it could not start), and no other
    thread that may enter cuDNN runs (the steps run in forked copies, which hold only the forking thread: a lock
    another thread holds inside cuDNN, its first-time initialisation, would never be released there)."""
    if _device.runtime_requests() != 0:
        return False
    me = threading.current_thread()
    return all(t is me or t in _QUIET_THREADS for t in threading.enumerate())


_exited = []  # copies that gave their result, reaped later: their exit (freeing their memory) need not be waited for


def _reap():
    for pid in list(_exited):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _exited.remove(pid)


def _in_child(fn):
    """(True, fn()) computed in a forked copy of this process, its result pickled back; (False, None) when the copy
    gave none (it raised, or died). The copy ends with ``os._exit``: nothing of this process runs twice."""
    _reap()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy
        try:
            os.close(read)
            try:
                data = pickle.dumps(fn())
            except BaseException:  # noqa: BLE001 - whatever it was, the caller does it again here
                data = b""
            with os.fdopen(write, "wb") as f:
                f.write(data)
        finally:
            os._exit(0)
    os.close(write)
    data = _read_child(read, pid)
    if not data:
        os.waitpid(pid, 0)
        return False, None
    _exited.append(pid)
    return True, pickle.loads(data)


CHILD_SECONDS = 600.0  # a copy that has not answered after this long is stuck (a lock no thread of the copy holds)


def _read_child(fd, pid) -> bytes:
    """The bytes a forked copy writes to ``fd`` until it closes it; b"" (the copy killed) where it stays silent for
    ``CHILD_SECONDS``, so that a copy that cannot finish never holds this process."""
    chunks = []
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    try:
        while True:
            if not poller.poll(int(CHILD_SECONDS * 1000)):
                os.kill(pid, signal.SIGKILL)
                return b""
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except BaseException:  # (an interrupt: the copy is ended and reaped, not left behind)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    finally:
        os.close(fd)


def run_observed(fn) -> tuple:
    """(``fn()``, asked): where the CUDA runtime's start is observable here (``runtime_observable``), ``fn`` runs in a
    forked copy of this process, so that it stays observable (for ``runtime_starts``, for the next graph), and
    ``asked`` says whether the copy's runtime asked the stand-in; otherwise, or when the copy gave no result (what
    ``fn`` raises or how it crashes is then this process's, as it was), ``fn`` runs here and ``asked`` is None."""
    if runtime_observable():
        ok, got = _in_child(lambda: (fn(), _device.runtime_requests() > 0))
        if ok:
            return got
    return fn(), None


def runtime_starts(steps) -> list | None:
    """The indices of ``steps`` (callables, in order) that start cuDNN's CUDA runtime, or None where that cannot be
    observed (``runtime_observable``). The steps run in forked copies: one runs them in order until a step makes
    the runtime ask the stand-in, the next goes on after that step (the runtime asks only once per process); this
    process runs none of them."""
    if not runtime_observable():
        return None
    found, start = [], 0

    def scout(first):
        for j in range(first, len(steps)):
            try:
                steps[j]()
            except Exception:  # noqa: BLE001 - a step that raises is the real run's to report
                pass
            if _device.runtime_requests():
                return j
        return None

    while start < len(steps):
        ok, j = _in_child(lambda first=start: scout(first))
        if not ok or j is None:
            break
        found.append(j)
        start = j + 1
    return found


def runtime_steps(op_graph, device_profile, modes, sm_count_target=None, engines=None) -> dict | None:
    """``{"engines": [...], "heuristics": [...]}``: the ``engines`` (indices; default all) whose finalize and the
    heuristics ``modes`` whose query start cuDNN's CUDA runtime for ``op_graph`` (``runtime_starts``); none with a
    real driver (the runtime starts there); None where that cannot be observed (the stand-in's runtime already asked
    in this process)."""
    if _device.runtime_requests() is None:
        return {"engines": [], "heuristics": []}
    engines = list(range(_engines.engine_count(op_graph)) if engines is None else engines)
    steps = [lambda i=i: _engines.inspect_engine(op_graph, i, device_profile, probe_configs=False) for i in engines]
    steps += [lambda m=m: _heuristics.get_configs(op_graph, m, device_profile, sm_count_target, raise_if_empty=False,
                                                  errata=False) for m in modes]
    found = runtime_starts(steps)
    if found is None:
        return None
    n = len(engines)
    return {"engines": [engines[j] for j in found if j < n], "heuristics": [modes[j - n] for j in found if j >= n]}


# ---------------------------------------------------------------------------------------------
# configs chosen against the cluster layout cuDNN has offline (``offline_layout``)
# ---------------------------------------------------------------------------------------------
#: the first release measured to assume a cluster layout offline (one GPC of 18 SMs) rather than leave it empty
#: (9.19 and 9.22: the ``cluster_layout`` refusals); 9.10 and 9.14 accept offline too, but no live record says
#: whether their configs differ
ASSUMES_LAYOUT_FROM = 92800


def layout_dependent(release, lists, operations) -> bool:
    """Whether heuristics' ``lists`` ({mode: [(engine, {knob name: value})]}) for a graph of ``operations``
    (operation labels: "ConvolutionForward", "NormForward", ...) were chosen against the cluster layout cuDNN
    ``release`` has offline: a normalization whose mode A leaves out an engine FALLBACK lists (its persistent
    kernels), or, on a release that assumes a layout, a config with a ``KERNEL_CFG`` knob (the runtime-compiled GEMM
    / convolution engines' kernels)."""
    a = {e for e, _ in lists.get("A", ())}
    fallback = {e for e, _ in lists.get("FALLBACK", ())}
    if any(op.startswith("Norm") for op in operations) and fallback - a:
        return True
    if release is None or parse_version(release) < ASSUMES_LAYOUT_FROM:
        return False
    return any("KERNEL_CFG" in knobs for configs in lists.values() for _, knobs in configs)


# ---------------------------------------------------------------------------------------------
# an offline answer's labels, for ``support`` and ``explore`` alike
# ---------------------------------------------------------------------------------------------
def offline_labels(gaps, runtime, finalizes, *, supported, release, lists, operations) -> tuple:
    """(the gap keys of an offline answer in ``GAPS`` order, its ``cuda_runtime`` record): the ``gaps`` cuDNN's
    messages named (or ``silent_gaps``), the steps that started the CUDA ``runtime`` (``runtime_steps``; None: not
    observable here, and the record None too) less the engines that ``finalizes(index)`` anyway, and, on a
    ``supported`` graph, heuristics' ``lists`` chosen against the cluster layout ``release`` has offline
    (``layout_dependent``)."""
    gaps = set(gaps)
    record = None
    if runtime is not None:
        engines = [i for i in runtime["engines"] if not finalizes(i)]
        record = {"engines": engines, "heuristics": list(runtime["heuristics"])} \
            if engines or runtime["heuristics"] else {}
        if record:
            gaps.add("cuda_runtime")
    if supported and layout_dependent(release, lists, operations):
        gaps.add("offline_layout")
    return [g.key for g in GAPS if g.key in gaps], record
