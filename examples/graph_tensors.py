"""The graph: tensors, UIDs, virtual and by-value tensors, layouts and strides.

Runs anywhere (no GPU needed: cuDNN finalizes tensors, operations and graphs without one).

    python examples/graph_tensors.py
"""
import numpy as np

import cudnn_backend as cb
from cudnn_backend import Graph
from cudnn_backend.graph import shapes
from cudnn_backend.typed import Tensor


# [layouts]
def layouts():
    """The same 4-D shape in the layouts cuDNN's samples use: strides are in elements."""
    dims = [8, 64, 56, 56]                                 # always N, C, H, W: the layout lives in the strides
    return {
        "nchw": shapes.layout_strides(dims, "nchw"),       # [200704, 3136, 56, 1]: W fastest
        "nhwc": shapes.layout_strides(dims, "nhwc"),       # [200704, 1, 3584, 64]: C fastest (channels last)
        "row_major": shapes.packed_strides(dims),          # the default without a layout: same as nchw
    }
# [/layouts]


# [typed_tensor]
def typed_tensor():
    """One tensor by hand: every attribute cuDNN requires, then finalize."""
    x = Tensor(unique_id=1, data_type=cb.CUDNN_DATA_HALF, dimensions=[8, 64, 56, 56],
               strides=[200704, 1, 3584, 64], byte_alignment=16)
    x.finalize()
    return x
# [/typed_tensor]


# [graph_tensors]
def graph_tensors():
    """Tensors made by a Graph: UIDs unique in the graph, strides from a layout, names for tables and errors."""
    g = Graph("tensors")
    x = g.tensor([8, 64, 56, 56], layout="nhwc", name="x")          # uid 1: the next free one
    w = g.tensor([32, 64, 3, 3], layout="nhwc", name="w", uid=10)   # a UID of your choosing
    alpha = g.scalar(0.5, name="alpha")                             # by value: a host number, not a buffer
    y = g.conv_fwd(x, w, padding=1)                                 # an operation's output: virtual by default
    z = g.mul(y, alpha, output=True, name="z")                      # output=True: a real tensor, io data type
    g.build()
    return g, {"x": x, "w": w, "alpha": alpha, "y": y, "z": z}
# [/graph_tensors]


# [from_array]
def from_array():
    """A tensor shaped like an array: dims, strides (in elements), data type and alignment read from it."""
    a = np.zeros((2, 4, 5, 3), dtype=np.float16).transpose(0, 3, 1, 2)   # logical NCHW, channels-last memory
    t = Tensor.from_array(a, uid=7, name="a")
    return t
# [/from_array]


# [uid_clash]
def uid_clash():
    """UIDs identify tensors in variant packs: two tensors of one graph may not share one."""
    g = Graph("clash")
    g.tensor([1, 8], uid=5)
    try:
        g.tensor([1, 8], uid=5)
    except cb.GraphError as e:
        return str(e)
# [/uid_clash]


def main():
    for name, strides in layouts().items():
        print(f"{name:10s} strides {strides}")
    print("typed:", typed_tensor().describe())
    g, t = graph_tensors()
    for name, tensor in t.items():
        print(f"{name:6s} uid {tensor.uid:3d} virtual={tensor.virtual!s:5s} by_value={tensor.by_value!s:5s} "
              f"{tensor.describe()}")
    print(g.table())
    print("from_array:", from_array().describe())
    print("uid clash:", uid_clash())


if __name__ == "__main__":
    main()
