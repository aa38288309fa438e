"""Hardening of the core: races on close(), pickling, interrupts inside cuDNN's logging callback,
hostile values in ``Descriptor.set``, and the statistics/shape checks cuDNN 9.19 does not make (``core.op_checks``),
exercised through the generic Descriptor (C names only).

Whatever can crash the interpreter runs in a child process (``tests.helpers.crash``), which reports the signal.
"""
import copy
import pickle
import re

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names
from cudnn_backend.errors import GraphError

from tests.helpers import generic_graphs as gg
from tests.helpers.crash import assert_survives, run_python
from tests.helpers.env import loaded_has

B = CUDNN_TYPE_BACKEND_DESCRIPTOR
FOREIGN = (AttributeError, OverflowError, RecursionError, UnicodeDecodeError, ZeroDivisionError, IndexError,
           MemoryError, UnicodeEncodeError, KeyError, SystemError)


def _refused(call, match, exc=(TypeError, ValueError)):
    """The call raises a TypeError/ValueError (or CudnnBackendError) whose message matches, never a foreign one."""
    with pytest.raises(exc, match=match) as info:
        call()
    assert not isinstance(info.value, FOREIGN) or isinstance(info.value, cb.CudnnBackendError), repr(info.value)
    return info.value


# ---------------------------------------------------------------------------------------------
# close() from two threads at once
# ---------------------------------------------------------------------------------------------
def test_two_threads_close_one_descriptor_200_rounds():
    """Both threads call close() on the same descriptor at the same moment: one destroys it, the other is a no-op;
    also with a third thread reading it meanwhile (it gets 'closed' or its answer, never a crash)."""
    assert_survives("""
        import threading
        import cudnn_backend as cb
        from tests.helpers import generic_graphs as gg
        errors = []
        for round_ in range(200):
            d = gg.tensor(round_ + 1, [1, 8, 4, 4], [128, 16, 4, 1])
            graph = gg.notebook_conv_graph() if round_ % 50 == 0 else None
            start = threading.Barrier(3)
            def close(obj=d):
                start.wait()
                try:
                    obj.close()
                except BaseException as e:
                    errors.append(repr(e))
            def read(obj=d):
                start.wait()
                for _ in range(20):
                    try:
                        obj.get(cb.CUDNN_ATTR_TENSOR_DIMENSIONS, cb.CUDNN_TYPE_INT64)
                    except ValueError as e:
                        assert "closed" in str(e), e
                        break
            threads = [threading.Thread(target=close), threading.Thread(target=close), threading.Thread(target=read)]
            for t in threads: t.start()
            for t in threads: t.join()
            assert d.closed and d.ptr == 0
            if graph is not None:
                threads = [threading.Thread(target=graph.close) for _ in range(2)]
                for t in threads: t.start()
                for t in threads: t.join()
                assert graph.closed
        assert not errors, errors[:3]
        print("ok")
        """, expect_stdout="ok", timeout=240)


def test_two_threads_close_one_handle_200_rounds():
    """Without a GPU no handle can be created: never-initialised handles exercise close() from two threads (the GPU
    variant, tests/gpu/core/test_hardening_gpu.py, uses real handles)."""
    assert_survives("""
        import threading
        import cudnn_backend as cb
        for _ in range(200):
            h = cb.Handle.__new__(cb.Handle)
            start = threading.Barrier(2)
            def close():
                start.wait()
                h.close()
            threads = [threading.Thread(target=close) for _ in range(2)]
            for t in threads: t.start()
            for t in threads: t.join()
            assert h.closed
        print("ok")
        """, expect_stdout="ok", timeout=240)


def test_close_is_idempotent_and_use_after_close_names_it():
    d = gg.tensor(1, [2, 2], [2, 1])
    d.close()
    d.close()
    _refused(lambda: d.get(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64), "closed")
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    _refused(lambda: op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, B, d), r"XDESC: element 0 .* is closed")


# ---------------------------------------------------------------------------------------------
# pickling and copying
# ---------------------------------------------------------------------------------------------
def test_descriptors_and_handles_refuse_pickling_naming_the_class():
    from cudnn_backend.typed import Tensor

    for obj, name in ((cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR), "Descriptor"),
                      (Tensor(unique_id=1), "Tensor"), (gg.notebook_conv_graph(), "Descriptor"),
                      (cb.Handle.__new__(cb.Handle), "Handle")):
        for protocol in (2, pickle.HIGHEST_PROTOCOL):
            _refused(lambda: pickle.dumps(obj, protocol), rf"cannot pickle a (cudnn_backend\.)?{name}", TypeError)
    _refused(lambda: copy.copy(cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)), "cannot copy a Descriptor", TypeError)
    _refused(lambda: copy.deepcopy(Tensor(unique_id=1)), "cannot copy a Tensor", TypeError)


def test_errors_pickle():
    for err in (cb.errors.JsonCheckError("plan", "a.b", "bad"), cb.CudnnUnsafeCallError("x"),
                cb.errors.make_error(cb.Status(3000), "f")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)


# ---------------------------------------------------------------------------------------------
# KeyboardInterrupt inside cuDNN's logging callback
# ---------------------------------------------------------------------------------------------
def test_keyboard_interrupt_in_the_logging_callback_reaches_the_caller():
    """A log handler that raises KeyboardInterrupt while cuDNN calls back: the interrupt must not unwind through
    cuDNN's C++ frames; it is raised in the calling thread when the cuDNN call returns."""
    out = run_python("""
        import logging
        import cudnn_backend as cb
        armed = []
        class Interrupting(logging.Handler):
            def emit(self, record):
                if armed:
                    raise KeyboardInterrupt("from the log handler")
        logger = logging.getLogger("cudnn_backend.cudnn")
        logger.addHandler(Interrupting())
        logger.setLevel(1)
        cb.enable_logging(logging.INFO)
        assert cb.logging_enabled()
        t = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        t.set(cb.CUDNN_ATTR_TENSOR_DATA_TYPE, cb.CUDNN_TYPE_DATA_TYPE, cb.CUDNN_DATA_HALF)
        t.set(cb.CUDNN_ATTR_TENSOR_DIMENSIONS, cb.CUDNN_TYPE_INT64, [1, 2, 3, 4])
        t.set(cb.CUDNN_ATTR_TENSOR_STRIDES, cb.CUDNN_TYPE_INT64, [24, 12, 4])  # cuDNN refuses and logs why
        t.set(cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64, 1)
        t.set(cb.CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, cb.CUDNN_TYPE_INT64, 16)
        armed.append(True)
        try:
            t.finalize()
        except KeyboardInterrupt as e:
            print("interrupt", e)
        except cb.CudnnError as e:
            print("no interrupt", e.status.name)
        armed.clear()
        cb.disable_logging()
        t2 = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)  # the next call is clean
        print("after", t2.closed)
        """, env={"CUDNN_LOGLEVEL_DBG": "3", "CUDNN_LOGDEST_DBG": "stderr"}, timeout=120)
    assert out.returncode == 0, out.describe()
    assert out.stdout.split("\n")[:2] == ["interrupt from the log handler", "after False"], out.describe()


# ---------------------------------------------------------------------------------------------
# hostile values through Descriptor.set
# ---------------------------------------------------------------------------------------------
class LyingLen:
    """Claims 2**62 elements."""

    def __len__(self):
        return 2 ** 62

    def __iter__(self):
        return iter([1, 2, 3])


class RaisingLen:
    def __len__(self):
        raise RuntimeError("len is broken")

    def __iter__(self):
        return iter([1, 2])


class RaisingIndex:
    def __index__(self):
        raise RuntimeError("index is broken")


class RaisingIter:
    def __len__(self):
        return 2

    def __iter__(self):
        raise ZeroDivisionError("iter is broken")


@pytest.mark.parametrize("attribute", ["CUDNN_ATTR_TENSOR_DIMENSIONS", "CUDNN_ATTR_TENSOR_STRIDES"])
@pytest.mark.parametrize("bad, exc, match", [
    (0, ValueError, r"element 1 is 0; it must be >= 1"), (-3, ValueError, r"element 1 is -3; it must be >= 1"),
    (2.0, TypeError, "expected an integer, not float"), (True, TypeError, "expected an integer, not bool"),
    ("4", TypeError, "expected an integer, not str"), (None, TypeError, "expected an integer, not NoneType"),
    (2 ** 63, ValueError, "does not fit in 64 bits"), (np.float32(2), TypeError, "expected an integer, not float32"),
    (RaisingIndex(), TypeError, "cannot read an integer from RaisingIndex"),
])
def test_descriptor_set_refuses_bad_sizes_naming_the_attribute(attribute, bad, exc, match):
    d = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    _refused(lambda: d.set(attribute, CUDNN_TYPE_INT64, [8, bad, 4]), f"CUDNN_BACKEND_TENSOR_DESCRIPTOR.{attribute}.*{match}",
             exc)
    assert getattr(cb, attribute) not in d.set_attributes


@pytest.mark.parametrize("values, match", [
    (LyingLen(), "claims 4611686018427387904 elements"), (RaisingLen(), r"len\(\) of the RaisingLen failed"),
    (RaisingIter(), "iterating the RaisingIter failed"), (np.zeros(1 << 21, dtype=np.int64), "2097152 elements"),
])
def test_descriptor_set_refuses_lying_sequences(values, match):
    d = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    _refused(lambda: d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, values), match)


def test_char_attributes_refuse_surrogates_nul_and_non_text():
    dp = cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
    _refused(lambda: dp.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, "\ud800"), "not valid Unicode")
    _refused(lambda: dp.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, "{\x00}"), "device profile JSON")
    _refused(lambda: dp.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, b"\xff\xfe"), "not UTF-8")
    _refused(lambda: dp.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 5), "takes JSON text", TypeError)
    _refused(lambda: dp.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, "[" * 200_000 + "]" * 200_000),
             "nested deeper than 32 levels")
    assert not dp.set_attributes


def test_enum_arguments_refuse_lone_surrogates_and_strange_names():
    _refused(lambda: cb.Descriptor("\ud800"), "is not a name of DescriptorType")
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    _refused(lambda: t.set("\ud800", CUDNN_TYPE_INT64, 1), "is not a name of AttributeName")
    _refused(lambda: t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, "\ud800"), "is not a name of DataType")


# ---------------------------------------------------------------------------------------------
# the statistics and shape checks cuDNN 9.19 does not make (core.op_checks), generic descriptors
# ---------------------------------------------------------------------------------------------
def _t(uid, dims, dtype=CUDNN_DATA_FLOAT, layout="nhwc", by_value=False):
    strides = gg.nhwc_strides(*dims) if layout == "nhwc" and len(dims) == 4 else _packed(dims)
    t = gg.tensor(uid, dims, strides, data_type=dtype)
    if by_value:
        t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        for attr, atype, value in ((CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, dtype),
                                   (CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims),
                                   (CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, [1] * len(dims)),
                                   (CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid),
                                   (CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16),
                                   (CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, True)):
            t.set(attr, atype, value)
        t.finalize()
    return t


def _packed(dims):
    out, acc = [], 1
    for d in reversed(dims):
        out.insert(0, acc)
        acc *= d
    return out


def _op(dtype, *attrs):
    op = cb.Descriptor(dtype)
    for attr, atype, value in attrs:
        op.set(attr, atype, value)
    return op


def gen_stats(x_dims, stats_dims, sq_dims=None):
    return _op(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR,
               (CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, CUDNN_GENSTATS_SUM_SQSUM),
               (CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT),
               (CUDNN_ATTR_OPERATION_GENSTATS_XDESC, B, _t(1, x_dims, CUDNN_DATA_HALF)),
               (CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, B, _t(2, stats_dims)),
               (CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, B, _t(3, sq_dims or stats_dims)))


def test_gen_stats_sums_of_the_wrong_shape_are_refused_naming_the_tensors():
    """cudnn-frontend's scale_bias_conv_genstats sample: [1,32,1,1] sums for a 256-channel input. cuDNN 9.19 accepts
    it and writes all 256 sums (1,024 bytes) into each 128-byte buffer."""
    e = _refused(lambda: gen_stats([4, 256, 16, 16], [1, 32, 1, 1]).finalize(), r"sumdesc \(t2\) has dims \[1, 32, 1, 1\] "
                 r"but must be \[1, 256, 1, 1\] \(one value per channel of xdesc \[4, 256, 16, 16\]\)", GraphError)
    assert "OPERATION_GEN_STATS" in str(e) and "out of bounds" in str(e)
    for bad in ([1, 512, 1, 1], [4, 256, 1, 1], [1, 256, 16, 16]):
        _refused(lambda: gen_stats([4, 256, 16, 16], bad).finalize(), "sumdesc", GraphError)
    _refused(lambda: gen_stats([4, 256, 16, 16], [1, 256, 1, 1], [1, 32, 1, 1]).finalize(), r"sqsumdesc \(t3\)",
             GraphError)
    assert gen_stats([4, 256, 16, 16], [1, 256, 1, 1]).finalize().finalized


def bn_finalize(c=32, bad=None, bad_dims=None):
    attrs = [(CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE, CUDNN_TYPE_BN_FINALIZE_STATS_MODE,
              CUDNN_BN_FINALIZE_STATISTICS_TRAINING),
             (CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)]
    uid = 10
    for part in ("Y_SUM", "Y_SQ_SUM", "SCALE", "BIAS", "SAVED_MEAN", "SAVED_INV_STD", "EQ_SCALE", "EQ_BIAS"):
        uid += 1
        dims = bad_dims if part == bad else [1, c, 1, 1]
        attrs.append((getattr(cb, f"CUDNN_ATTR_OPERATION_BN_FINALIZE_{part}_DESC"), B, _t(uid, dims)))
    attrs += [(CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC, B, _t(30, [1, 1, 1, 1], CUDNN_DATA_INT64, by_value=True)),
              (CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC, B, _t(31, [1, 1, 1, 1], by_value=True)),
              (CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC, B, _t(32, [1, 1, 1, 1], by_value=True))]
    return _op(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR, *attrs)


@pytest.mark.parametrize("part, slot", [("SCALE", "scale_desc"), ("EQ_BIAS", "eq_bias_desc"),
                                        ("SAVED_INV_STD", "saved_inv_std_desc"), ("Y_SQ_SUM", "y_sq_sum_desc"),
                                        ("Y_SUM", "y_sum_desc")])  # (the one of another shape is named, the sum too)
def test_bn_finalize_per_channel_tensors_must_match_the_sums(part, slot):
    assert bn_finalize().finalize().finalized
    _refused(lambda: bn_finalize(bad=part, bad_dims=[1, 16, 1, 1]).finalize(),
             rf"{slot} \(t\d+\) has dims \[1, 16, 1, 1\] but must be \[1, 32, 1, 1\]", GraphError)


def norm_forward(mode, x_dims, stats_dims, stats_dtype=CUDNN_DATA_FLOAT, phase=CUDNN_NORM_FWD_TRAINING, scale_dims=None):
    c = x_dims[1]
    scale_dims = scale_dims or [1, c, 1, 1]
    return _op(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR,
               (CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, mode),
               (CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, phase),
               (CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, B, _t(1, x_dims, CUDNN_DATA_HALF)),
               (CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, B, _t(2, scale_dims)),
               (CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, B, _t(3, scale_dims)),
               (CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, B, _t(4, [1, 1, 1, 1], by_value=True)),
               (CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, B, _t(5, stats_dims, stats_dtype)),
               (CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, B, _t(6, stats_dims, stats_dtype)),
               (CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, B, _t(7, x_dims, CUDNN_DATA_HALF)))


@pytest.mark.parametrize("mode, x_dims, good, bad", [
    (CUDNN_BATCH_NORM, [4, 64, 16, 16], [1, 64, 1, 1], [1, 32, 1, 1]),
    (CUDNN_BATCH_NORM, [4, 64, 16, 16], [1, 64, 1, 1], [4, 64, 1, 1]),
    (CUDNN_INSTANCE_NORM, [4, 64, 16, 16], [4, 64, 1, 1], [1, 64, 1, 1]),
    (CUDNN_LAYER_NORM, [512, 128, 1, 1], [512, 1, 1, 1], [256, 2, 1, 1]),
])
def test_norm_statistics_shapes(mode, x_dims, good, bad):
    scale = [1, x_dims[1], 1, 1]
    assert norm_forward(mode, x_dims, good, scale_dims=scale).finalize().finalized
    _refused(lambda: norm_forward(mode, x_dims, bad, scale_dims=scale).finalize(),
             r"mean_desc \(t5\) has dims " + re.escape(repr(bad)) + " but must be", GraphError)


def test_norm_statistics_must_be_float():
    e = _refused(lambda: norm_forward(CUDNN_LAYER_NORM, [512, 128, 1, 1], [512, 1, 1, 1], CUDNN_DATA_HALF).finalize(),
                 r"mean_desc \(t5\) is CUDNN_DATA_HALF but must be CUDNN_DATA_FLOAT", GraphError)
    assert "NORM_FORWARD" in str(e)


def reduction(x_dims, y_dims):
    red = _op(CUDNN_BACKEND_REDUCTION_DESCRIPTOR,
              (CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, CUDNN_REDUCE_TENSOR_ADD),
              (CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)).finalize()
    return _op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
               (CUDNN_ATTR_OPERATION_REDUCTION_XDESC, B, _t(1, x_dims, CUDNN_DATA_HALF)),
               (CUDNN_ATTR_OPERATION_REDUCTION_YDESC, B, _t(2, y_dims)),
               (CUDNN_ATTR_OPERATION_REDUCTION_DESC, B, red))


@pytest.mark.parametrize("y_dims, ok", [([1, 64, 1, 1], True), ([1, 1, 1, 1], True), ([8, 64, 16, 16], True),
                                        ([1, 32, 1, 1], True),  # a partial (grouped) reduction: 32 divides 64
                                        ([1, 48, 1, 1], False), ([1, 128, 1, 1], False), ([1, 64, 1], False)])
def test_reduction_output_dims_must_divide_the_input_dims(y_dims, ok):
    op = reduction([8, 64, 16, 16], y_dims)
    if ok:
        assert op.finalize().finalized
    else:
        _refused(op.finalize, r"ydesc \(t2\) has dims .* which is no reduction of xdesc \(t1\) \[8, 64, 16, 16\]: each "
                 "output dim must divide", GraphError)


def pointwise(mode, x_dims, y_dims, b_dims=None, dy=False):
    pw = _op(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, (CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode),
             (CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)).finalize()
    attrs = [(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, B, pw),
             (CUDNN_ATTR_OPERATION_POINTWISE_XDESC, B, _t(1, x_dims, CUDNN_DATA_HALF))]
    if b_dims is not None:
        attrs.append((CUDNN_ATTR_OPERATION_POINTWISE_DYDESC if dy else CUDNN_ATTR_OPERATION_POINTWISE_BDESC, B,
                      _t(2, b_dims, CUDNN_DATA_HALF)))
    attrs.append((CUDNN_ATTR_OPERATION_POINTWISE_DXDESC if dy else CUDNN_ATTR_OPERATION_POINTWISE_YDESC, B,
                  _t(3, y_dims, CUDNN_DATA_HALF)))
    return _op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, *attrs)


@pytest.mark.parametrize("mode, x, b, y, ok", [
    (CUDNN_POINTWISE_ADD, [4, 64, 16, 16], [1, 64, 1, 1], [4, 64, 16, 16], True),
    (CUDNN_POINTWISE_ADD, [1, 64, 1, 1], [4, 1, 16, 16], [4, 64, 16, 16], True),  # both broadcast
    (CUDNN_POINTWISE_ADD, [4, 64, 16, 16], [1, 64, 1, 1], [1, 64, 1, 1], False),  # Y smaller than the broadcast
    (CUDNN_POINTWISE_ADD, [4, 64, 16, 16], [4, 64, 16, 16], [4, 32, 16, 16], False),
    (CUDNN_POINTWISE_RELU_FWD, [1, 64, 1, 1], None, [4, 64, 16, 16], False),  # unary X smaller than Y
    (CUDNN_POINTWISE_RELU_FWD, [4, 64, 16, 16], None, [4, 64, 16, 16], True),
    (CUDNN_POINTWISE_ADD, [4, 64, 16, 16], [4, 32, 16, 16], [4, 64, 16, 16], False),  # no broadcast at axis 1
])
def test_pointwise_output_is_the_broadcast_of_the_inputs(mode, x, b, y, ok):
    op = pointwise(mode, x, y, b)
    if ok:
        assert op.finalize().finalized
    else:
        _refused(op.finalize, r"ydesc \(t3\) has dims .*\(the broadcast shape of the inputs|do not broadcast at axis",
                 GraphError)


def test_activation_backward_dx_is_the_broadcast_of_x_and_dy():
    assert pointwise(CUDNN_POINTWISE_RELU_BWD, [4, 64, 8, 8], [4, 64, 8, 8], [4, 64, 8, 8], dy=True).finalize().finalized
    _refused(pointwise(CUDNN_POINTWISE_RELU_BWD, [4, 64, 8, 8], [4, 32, 8, 8], [4, 64, 8, 8], dy=True).finalize,
             r"dxdesc \(t3\) has dims \[4, 32, 8, 8\] but must be \[4, 64, 8, 8\]", GraphError)


def bn_bwd_weights(c=32, bad=None):
    x_dims = [4, c, 8, 8]
    attrs = [(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT),
             (CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC, B, _t(1, x_dims, CUDNN_DATA_HALF)),
             (CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC, B, _t(2, x_dims, CUDNN_DATA_HALF))]
    uid = 2
    for part in ("MEAN_DESC", "INVSTD_DESC", "BN_SCALE_DESC", "DBN_SCALE_DESC", "DBN_BIAS_DESC", "EQ_DY_SCALE_DESC",
                 "EQ_X_SCALE_DESC", "EQ_BIAS"):
        uid += 1
        attrs.append((getattr(cb, f"CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_{part}"), B,
                      _t(uid, [1, 8, 1, 1] if part == bad else [1, c, 1, 1])))
    return _op(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR, *attrs)


@pytest.mark.parametrize("part, slot", [("DBN_SCALE_DESC", "dbn_scale_desc"), ("EQ_BIAS", "eq_bias"),
                                        ("MEAN_DESC", "mean_desc")])
def test_bn_bwd_weights_per_channel_tensors(part, slot):
    assert bn_bwd_weights().finalize().finalized
    _refused(bn_bwd_weights(bad=part).finalize, rf"{slot} \(t\d+\) has dims \[1, 8, 1, 1\] but must be \[1, 32, 1, 1\]",
             GraphError)


def resample_bwd(mode, index):
    rs = _op(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR, (CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE, mode),
             (CUDNN_ATTR_RESAMPLE_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT),
             (CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2),
             (CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, CUDNN_TYPE_INT64, [2, 2]),
             (CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_INT64, [2, 2]),
             (CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_INT64, [0, 0]),
             (CUDNN_ATTR_RESAMPLE_POST_PADDINGS, CUDNN_TYPE_INT64, [0, 0])).finalize()
    attrs = [(CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DESC, B, rs),
             (CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC, B, _t(1, [4, 16, 8, 8], CUDNN_DATA_HALF)),
             (CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC, B, _t(2, [4, 16, 16, 16], CUDNN_DATA_HALF)),
             (CUDNN_ATTR_OPERATION_RESAMPLE_BWD_XDESC, B, _t(3, [4, 16, 16, 16], CUDNN_DATA_HALF)),
             (CUDNN_ATTR_OPERATION_RESAMPLE_BWD_YDESC, B, _t(4, [4, 16, 8, 8], CUDNN_DATA_HALF)),
             (CUDNN_ATTR_OPERATION_RESAMPLE_BWD_ALPHA, CUDNN_TYPE_DOUBLE, 1.0),
             (CUDNN_ATTR_OPERATION_RESAMPLE_BWD_BETA, CUDNN_TYPE_DOUBLE, 0.0)]
    if index:
        attrs.append((CUDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC, B, _t(5, [4, 16, 8, 8], CUDNN_DATA_INT8)))
    return _op(CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR, *attrs)


def test_max_pooling_backward_without_its_index_is_refused():
    """cuDNN 9.19 crashes (SIGSEGV in heuristics) on a max-pool backward with xdesc/ydesc and no index."""
    _refused(resample_bwd(CUDNN_RESAMPLE_MAXPOOL, index=False).finalize,
             "CUDNN_RESAMPLE_MAXPOOL backward needs idxdesc", GraphError)
    assert resample_bwd(CUDNN_RESAMPLE_MAXPOOL, index=True).finalize().finalized
    assert resample_bwd(CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING, index=False).finalize().finalized


@pytest.mark.parametrize("dims, strides, refused", [
    ([2, 2], [2 ** 63 - 1, 1], True), ([2, 2], [2 ** 56, 1], True), ([3, 2], [2 ** 55, 1], True),
    ([2, 2], [2 ** 56 - 2, 1], False), ([1, 2], [2 ** 63 - 1, 1], False), ([4, 4], [4, 1], False),
    ([1, 2 ** 29, 2 ** 29], [1, 1, 1], True), ([2 ** 28, 2 ** 28], [1, 1], False)])  # (overlapping: 2**58, 2**56)
def test_a_tensor_past_two_to_the_56_elements_is_refused_by_every_api(dims, strides, refused):
    # cuDNN takes them and computes byte offsets that overflow, and refuses to load a plan's JSON of them (its span or
    # its count, overlapping strides holding more elements than they span); a dim of 1 never steps by its stride
    def finalized():
        return cb.typed.Tensor(unique_id=5, data_type=cb.CUDNN_DATA_HALF, dimensions=dims, strides=strides,
                               byte_alignment=16).finalize()

    if not refused:
        finalized()
        cb.Graph("t").tensor(dims, strides)
        return
    with pytest.raises(ValueError, match=r"CUDNN_BACKEND_TENSOR_DESCRIPTOR \(uid 5\): dims .* hold or span more than "
                                         r"2\*\*56 elements"):
        finalized()
    with pytest.raises(ValueError, match=r"(span more than 2\*\*56|spans at most 72057594037927936) elements"):
        cb.Graph("t").tensor(dims, strides)


class _StreamProtocol:
    def __init__(self, pair):
        self.pair = pair

    def __cuda_stream__(self):
        return self.pair


@pytest.mark.parametrize("stream,exc,match", [
    (1.5, TypeError, r"^stream: expected an int, a CUDA stream object or None, not float$"),
    ("7", TypeError, r"^stream: expected an int, a CUDA stream object or None, not str$"),
    (b"7", TypeError, r"not bytes$"),
    (np.float64(2.0), TypeError, r"not float64$"),
    (True, TypeError, r"not bool$"),
    (-1, ValueError, r"^stream"),
    (2 ** 64, ValueError, r"^stream"),
    (_StreamProtocol(None), TypeError, r"^stream: the _StreamProtocol's __cuda_stream__\(\) gave None, not the "
                                       r"\(version, address\) pair"),
    (_StreamProtocol((0,)), TypeError, r"gave \(0,\), not the \(version, address\) pair"),
])
def test_a_stream_argument_is_an_int_or_a_stream_never_a_number_converted(stream, exc, match):
    from cudnn_backend.core._coerce import stream_address
    _refused(lambda: stream_address(stream), match, exc)


@pytest.mark.parametrize("stream,address", [(None, 0), (0, 0), (2, 2), (np.int64(7), 7),
                                            (_StreamProtocol((0, 0x1234)), 0x1234)])
def test_stream_arguments_taken(stream, address):
    from cudnn_backend.core._coerce import stream_address
    assert stream_address(stream) == address


def test_a_stream_protocol_pair_may_be_a_tuple_subclass():
    import collections
    from cudnn_backend.core._coerce import stream_address
    pair = collections.namedtuple("StreamPair", "version address")
    assert stream_address(_StreamProtocol(pair(0, 0x2000))) == 0x2000


@pytest.mark.parametrize("mode, slots, problem", [
    ("RELU_FWD", (), r"RELU_FWD needs x \(xdesc: the tensor it reads\)"),
    ("RELU_FWD", ("XDESC",), r"RELU_FWD needs y \(ydesc: the tensor it writes\)"),
    ("RELU_FWD", ("XDESC", "DXDESC"), r"RELU_FWD needs y"),
    ("RELU_FWD", ("XDESC", "YDESC", "DXDESC"), r"RELU_FWD writes y alone, not dx"),
    ("RELU_FWD", ("DYDESC", "DXDESC"), r"RELU_FWD takes no dy"),
    ("RELU_BWD", ("BDESC", "YDESC"), r"RELU_BWD needs dy"),
    ("RELU_BWD", ("XDESC", "DYDESC", "YDESC"), r"RELU_BWD needs dx \(dxdesc"),
    ("ADD", ("XDESC", "BDESC"), r"ADD needs y"),
    ("GEN_INDEX", ("YDESC",), r"GEN_INDEX needs x"),
])
def test_a_pointwise_operation_without_the_tensors_its_mode_takes_is_refused(mode, slots, problem):
    """cuDNN 9.28.1 finalizes it and its graph, and its heuristics then crash the process (SIGSEGV, SIGFPE); the
    broadcast fast path used to accept any set of tensors whose shapes agreed."""
    pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, getattr(cb, f"CUDNN_POINTWISE_{mode}"))
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    if mode == "GEN_INDEX":
        pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1)
    pw.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
    for uid, slot in enumerate(slots, 1):
        op.set(getattr(cb, f"CUDNN_ATTR_OPERATION_POINTWISE_{slot}"), CUDNN_TYPE_BACKEND_DESCRIPTOR,
               gg.tensor(uid, [8, 64, 4, 4], gg.nhwc_strides(8, 64, 4, 4)))
    with pytest.raises(GraphError, match=r"^CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: " + problem):
        op.finalize()
    with pytest.raises(GraphError, match=problem):  # the typed classes' way
        cb.typed.OperationPointwise(pw_descriptor=pw).finalize() if not slots else op.finalize()


def _by_value(**extra):
    return cb.typed.Tensor(unique_id=100, data_type="CUDNN_DATA_FLOAT", dimensions=[1, 1, 1, 1], strides=[1, 1, 1, 1],
                           byte_alignment=16, is_by_value=True, **extra)


@pytest.mark.parametrize("value, refused", [
    (np.float32(2.5), None), (np.float32(2.5).tobytes(), None),
    (2.5, "8 bytes, but a CUDNN_DATA_FLOAT element is 4"),  # a float64: cuDNN read its first 4 bytes (0.0)
    (b"\x01", "1 bytes, but a CUDNN_DATA_FLOAT element is 4"),  # cuDNN read past it
    (np.float16(2.5), "2 bytes, but a CUDNN_DATA_FLOAT element is 4"),
])
def test_a_constant_value_must_be_one_element_of_the_tensors_data_type(value, refused):
    if not loaded_has("9.22.0"):
        pytest.skip("constant values came with cuDNN 9.22")
    if refused is None:
        assert _by_value(constant_value=value).finalize().finalized
        return
    with pytest.raises(ValueError, match=r"^CUDNN_BACKEND_TENSOR_DESCRIPTOR \(uid 100\): "
                                         r"CUDNN_ATTR_TENSOR_CONSTANT_VALUE: " + re.escape(refused)):
        _by_value(constant_value=value).finalize()


def test_a_by_value_tensor_is_no_virtual_one():
    with pytest.raises(ValueError, match=r"^CUDNN_BACKEND_TENSOR_DESCRIPTOR \(uid 100\): CUDNN_ATTR_TENSOR_IS_BY_VALUE: "
                                         r"a by-value tensor is never virtual"):
        _by_value(is_virtual=True).finalize()


def test_one_dimension_given_alone_is_held_to_the_extent_limit():
    # a scalar dims value is kept as given: the extent check read only tuples
    d = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 2 ** 60)
    d.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 1)
    d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1)
    d.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    with pytest.raises(ValueError, match=r"dims \[1152921504606846976\] with strides \[1\] hold or span more than 2\*\*56"):
        d.finalize()


@pytest.mark.parametrize("data_type", ["CUDNN_DATA_FLOAT", "CUDNN_DATA_HALF", "CUDNN_DATA_INT8"])
def test_matmul_size_overrides_of_other_than_integers_are_refused_in_every_api(data_type):
    """cuDNN reads them as integers whatever their type, and plans the graph (the Graph builder refused them)."""
    a, b = gg.tensor(1, [4, 8, 16], [128, 16, 1]), gg.tensor(2, [4, 16, 8], [128, 8, 1])
    c = gg.tensor(3, [4, 8, 8], [64, 8, 1])
    sizes = gg.tensor(4, [4, 1, 1], [1, 1, 1], data_type=getattr(cb, data_type))
    op = cb.typed.OperationMatmul(adesc=a, bdesc=b, cdesc=c, gemm_m_override_desc=sizes,
                                  desc=cb.typed.Matmul(comp_type="CUDNN_DATA_FLOAT").finalize())
    with pytest.raises(GraphError, match=rf"gemm_m_override_desc is {data_type}; per-batch sizes are INT32 or INT64"):
        op.finalize()
