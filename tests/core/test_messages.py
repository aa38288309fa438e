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
