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

A supported graph whose heuristics met such a refusal is still supported, but heuristics' lists may differ on the
GPU (the caveat says so). Heuristics that return configs log nothing about the engines they leave out, so offline
the first configs of each engine that finalizes but was left out are tried (``silent_gaps``) and their refusals
read too: on cuDNN 9.19 this finds the cluster-layout refusal behind 318 of the default catalogue's 369 supported
graphs, and for every one of them the H100's live configs or engine counts differ from the offline ones.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from cudnn_backend.core._logging import cudnn_messages
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import engines as _engines

__all__ = ["UNKNOWN_OFFLINE", "Gap", "GAPS", "gaps_in", "gap", "describe_gaps", "silent_gaps", "gap_caveat",
           "ENUMERATED_CONFIGS"]

#: offline, the configs tried of each engine that finalizes but heuristics proposed none of (``silent_gaps``)
ENUMERATED_CONFIGS = 4

#: the verdict of a graph offline cannot decide
UNKNOWN_OFFLINE = "unknown offline"


@dataclass(frozen=True)
class Gap:
    """One kind of refusal offline cannot decide: its ``key``, the ``fact`` offline lacks, the ``pattern`` of
    cuDNN's words that names it, and ``why`` cuDNN refuses for it offline."""

    key: str
    fact: str
    pattern: re.Pattern
    why: str


GAPS = (
    Gap("cluster_layout", "the GPU's thread-block cluster layout (GPCs)",
        re.compile(r"No GPC available|cga_count == 0"),
        "it reads them only from a live GPU, no device profile carries them, and it found none ('No GPC "
        "available')"),
    Gap("live_driver", "an answer of the CUDA driver",
        re.compile(r"no CUDA device \(cudnn-backend's no-device stand-in\)"),
        "it asked the driver for something only a GPU answers, and the no-device stand-in said 'no device'"),
)
_BY_KEY = {g.key: g for g in GAPS}


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
    return [g.key for g in GAPS if g.pattern.search(text)]


def describe_gaps(keys, release=None) -> str:
    """One sentence per gap: what cuDNN ``release`` ("9.19.0") lacked offline and why it refused."""
    who = f"cuDNN {release}" if release else "cuDNN"
    return "; ".join(f"{who} lacks {gap(k).fact} offline: {gap(k).why}" for k in keys)


def gap_caveat(keys, release=None, *, refused) -> str:
    """What the gaps ``keys`` mean for an offline answer, in words: for a ``refused`` graph that the GPU may run it,
    for a supported one that heuristics' lists may differ on the GPU ("" without gaps)."""
    if not keys:
        return ""
    if refused:
        return f"the GPU may run this graph: {describe_gaps(keys, release)}; probe it on the GPU"
    return f"heuristics' lists may differ on the GPU: {describe_gaps(keys, release)}"


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
