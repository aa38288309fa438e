"""Capturing cuDNN's messages (``cudnn_messages``): blocks nest and end in any order."""
import pytest

import cudnn_backend as cb
from cudnn_backend.core import cudnn_messages
from cudnn_backend.typed import Tensor


def _refused_tensor():
    """A finalize cuDNN refuses, with a message through the callback."""
    with pytest.raises(cb.CudnnBadParamError):
        Tensor(unique_id=1, data_type=cb.CUDNN_DATA_HALF, dimensions=[1, 2], strides=[2, 1],
               byte_alignment=3).finalize()


def test_an_inner_block_ending_leaves_the_outer_one_collecting():
    """Both lists start empty, hence equal: the inner block's end removed the outer's list (list.remove) and the
    outer block then raised ValueError."""
    with cudnn_messages() as outer:
        with cudnn_messages() as inner:
            pass
        _refused_tensor()
    assert inner == [] and len(outer) == 1 and "cudnnBackendFinalize" in outer[0]


def test_blocks_ending_out_of_order():
    first_block, second_block = cudnn_messages(), cudnn_messages()
    first, second = first_block.__enter__(), second_block.__enter__()
    first_block.__exit__(None, None, None)
    _refused_tensor()
    second_block.__exit__(None, None, None)
    _refused_tensor()
    assert first == [] and len(second) == 1


def test_a_get_before_finalize_says_the_descriptor_is_not_finalized():
    d = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    d.set(cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64, 7)
    with pytest.raises(cb.CudnnError, match=r"CUDNN_ATTR_TENSOR_UNIQUE_ID.*\n  hint: the descriptor is not finalized: "
                                            r"cuDNN gives the attributes of finalized descriptors only"):
        d.get(cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64)
    assert d.value_of(cb.CUDNN_ATTR_TENSOR_UNIQUE_ID) == 7  # what was set, as the hint says


def test_a_get_cuDNN_does_not_answer_says_value_of_reads_what_was_set():
    from tests.helpers import generic_graphs as gg

    x = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1])
    y = gg.tensor(2, [1, 8, 4, 4], [128, 16, 4, 1])
    op = gg.pointwise_op(cb.CUDNN_POINTWISE_RELU_FWD, x, y)
    og = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    og.set(cb.CUDNN_ATTR_OPERATIONGRAPH_OPS, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR, [op])
    og.finalize()
    # cuDNN 9.10 to 9.28 refuse to give an operation graph's operations back (NOT_SUPPORTED, no message)
    with pytest.raises(cb.CudnnNotSupportedError, match=r"CUDNN_ATTR_OPERATIONGRAPH_OPS.*\n  hint: cuDNN does not "
                                                       r"give CUDNN_ATTR_OPERATIONGRAPH_OPS back; value_of\(\) reads"):
        og.get(cb.CUDNN_ATTR_OPERATIONGRAPH_OPS, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR)
    assert og.value_of(cb.CUDNN_ATTR_OPERATIONGRAPH_OPS) == (op,)


def test_a_finalize_cuDNN_gives_no_reason_for_lists_the_values_set():
    """cuDNN's reduction descriptor refuses AVG (9.10-9.28) with no message: the hint names what was set, enums by
    name, child descriptors left out."""
    d = cb.Descriptor(cb.CUDNN_BACKEND_REDUCTION_DESCRIPTOR)
    d.set(cb.CUDNN_ATTR_REDUCTION_OPERATOR, cb.CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, cb.CUDNN_REDUCE_TENSOR_AVG)
    d.set(cb.CUDNN_ATTR_REDUCTION_COMP_TYPE, cb.CUDNN_TYPE_DATA_TYPE, cb.CUDNN_DATA_FLOAT)
    with pytest.raises(cb.CudnnNotSupportedError) as err:
        d.finalize()
    assert err.value.cudnn_message == ""
    assert "hint: cuDNN gives no reason; the values set: CUDNN_ATTR_REDUCTION_OPERATOR=CUDNN_REDUCE_TENSOR_AVG, " \
           "CUDNN_ATTR_REDUCTION_COMP_TYPE=CUDNN_DATA_FLOAT; for cuDNN's own log" in str(err.value)
    g = cb.Graph("avg")
    with pytest.raises(cb.CudnnNotSupportedError, match="CUDNN_REDUCE_TENSOR_AVG"):
        g.reduction(g.tensor([1, 8, 4, 4]), "avg", output=True)


def test_a_finalize_with_cuDNNs_message_keeps_it():
    with pytest.raises(cb.CudnnBadParamError) as err:
        Tensor(unique_id=1, data_type=cb.CUDNN_DATA_HALF, dimensions=[1, 2], strides=[2, 1],
               byte_alignment=3).finalize()
    assert err.value.cudnn_message and "values set" not in str(err.value)


def test_a_refused_engine_config_names_its_knob_choices():
    import cudnn_backend.runtime.engines as engines
    from tests.helpers.offline import conv_bias_relu_graph
    og = conv_bias_relu_graph()
    config = cb.get_configs(og, device_profile="h200")[0]
    with pytest.raises(cb.CudnnError) as err:
        engines.make_config(config.engine, {cb.CUDNN_KNOB_TYPE_KERNEL_CFG: 99999}, check=False)
    if err.value.cudnn_message:
        pytest.skip(f"cuDNN {cb.get_version()} says why itself: {err.value.cudnn_message}")
    assert "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES=KNOB_CHOICE(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE=" \
           "CUDNN_KNOB_TYPE_KERNEL_CFG, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE=99999)" in str(err.value)
