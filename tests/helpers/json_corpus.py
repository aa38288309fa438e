"""The graphs whose JSON the JSON checks' tables are derived from (tools/derive_json_tables.py) and checked
against (tests/core/test_json_checks.py): the pattern catalogue (iterated: patterns added later are picked up), the
tests' own graphs, and one graph per operation or member the catalogue does not reach (``EXTRA_GRAPHS``). Each
pattern also comes with each boolean option flipped: the tables take a member every observed node has as required (a
norm's statistics, which inference omits), so the graphs without it must be observed too.

``graphs()`` -> {source: graph-maker}; a graph-maker returns the operations of a fresh graph, or raises (an operation
the loaded release lacks, a graph it refuses).
"""
from __future__ import annotations


def graphs():
    """{source: graph-maker}: "pattern <name>", "pattern <name> <option>=<value>", "test <name>", "extra <name>"."""
    from cudnn_backend import patterns

    out = {}
    for name, make in patterns.CATALOGUE.items():
        out[f"pattern {name}"] = lambda make=make: make(build=False).operations
        for option, value in _flipped_options(make):
            out[f"pattern {name} {option}={value}"] = \
                lambda make=make, option=option, value=value: make(build=False, **{option: value}).operations
    out.update((f"test {name}", make) for name, make in own_graphs().items())
    out.update((f"extra {name}", make) for name, make in extra_graphs().items())
    return out


def _flipped_options(make):
    """(option, the other value) of each boolean option of a pattern function (``build`` apart)."""
    import inspect

    return [(p.name, not p.default) for p in inspect.signature(make).parameters.values()
            if isinstance(p.default, bool) and p.name != "build"]


def own_graphs():
    """The tests' own graphs (tests/helpers), as functions -> operations."""
    from tests.helpers import generic_graphs as gg
    from tests.helpers import offline

    def notebook():
        g = gg.notebook_conv_graph()
        return _ops_of(g)

    def matmul_relu():
        return _ops_of(offline.matmul_relu_graph())

    return {"notebook_conv (generic Descriptor API)": notebook,
            "conv_bias_relu": lambda: offline.conv_bias_relu_graph().operations,
            "matmul_relu": matmul_relu}


def _ops_of(graph):
    from cudnn_backend._bindings.enums import AttributeName

    return list(graph.children[AttributeName.CUDNN_ATTR_OPERATIONGRAPH_OPS])


def _graph(name="g", **kw):
    from cudnn_backend.graph import Graph

    return Graph(name, **kw)


def _pointwise_modes():
    """One graph per pointwise mode this release has (every mode's members: clips, alpha, beta, axis)."""
    from cudnn_backend._bindings.enums import DataType, PointwiseMode

    out = {}
    for mode in PointwiseMode:
        def make(mode=mode):
            g = _graph("pw", io_data_type=DataType.CUDNN_DATA_FLOAT)
            x, b, t = g.tensor([2, 8, 4, 4]), g.tensor([2, 8, 4, 4]), g.tensor([2, 8, 4, 4])
            if mode.name.endswith("_BWD"):
                g.pointwise(mode, x, dy=b, output=True)
            elif mode.name == "CUDNN_POINTWISE_BINARY_SELECT":
                g.pointwise(mode, x, b, t, output=True)
            elif mode.name == "CUDNN_POINTWISE_GEN_INDEX":
                g.pointwise(mode, x, output=True, axis=1)
            else:
                try:
                    g.pointwise(mode, x, b, output=True)
                except Exception:  # noqa: BLE001 - a unary mode
                    g = _graph("pw", io_data_type=DataType.CUDNN_DATA_FLOAT)
                    g.pointwise(mode, g.tensor([2, 8, 4, 4]), output=True)
            return g.operations
        out[f"pointwise {mode.name[len('CUDNN_POINTWISE_'):].lower()}"] = make
    return out


def _relu_clipped():
    import math

    g = _graph("relu", io_data_type="CUDNN_DATA_FLOAT")
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", g.tensor([2, 8, 4, 4]), output=True, relu_upper_clip=math.inf,
                relu_lower_clip=-1.0, relu_lower_clip_slope=0.5)
    return g.operations


def _ops(build, io="CUDNN_DATA_HALF"):
    """A graph-maker: a fresh Graph (``io`` data type) given to ``build``, its operations returned."""
    def make():
        g = _graph("extra", io_data_type=io)
        build(g)
        return g.operations
    return make


def _f32(g, dims, strides=None, **kw):
    return g.tensor(dims, strides, "CUDNN_DATA_FLOAT", **kw)


def _i32(g, dims, **kw):
    return g.tensor(dims, None, "CUDNN_DATA_INT32", **kw)


def _i64(g, dims, **kw):
    return g.tensor(dims, None, "CUDNN_DATA_INT64", **kw)


def _attention(g, s=128, d=64):
    return [g.tensor([2, 4, s, d]) for _ in range(3)]


def extra_graphs():
    """Operations and members the catalogue does not reach (name -> graph-maker); each tried on every release."""
    return {**_pointwise_modes(), **EXTRA_GRAPHS, **TYPED_GRAPHS}


EXTRA_GRAPHS = {
    "relu clipped": _relu_clipped,
    "conv strided dilated": _ops(lambda g: g.conv_fwd(g.tensor([2, 16, 32, 32], layout="nhwc"),
                                                      g.tensor([16, 16, 3, 3], layout="nhwc"), padding=2, stride=2,
                                                      dilation=2, post_padding=1, output=True)),
    # a grouped convolution's node has groupCount (the filter's C a fraction of the input's)
    "conv grouped": _ops(lambda g: g.conv_fwd(g.tensor([2, 16, 8, 8], layout="nhwc"),
                                              g.tensor([16, 8, 3, 3], layout="nhwc"), padding=1, output=True)),
    "conv_bwd_data grouped": _ops(lambda g: g.conv_bwd_data(g.tensor([2, 16, 8, 8], layout="nhwc"),
                                                            g.tensor([16, 8, 3, 3], layout="nhwc"), [2, 16, 8, 8],
                                                            padding=1, output=True)),
    "conv_bwd_filter grouped": _ops(lambda g: g.conv_bwd_filter(g.tensor([2, 16, 8, 8], layout="nhwc"),
                                                                g.tensor([2, 16, 8, 8], layout="nhwc"), [16, 8, 3, 3],
                                                                padding=1, output=True)),
    "matmul with overrides": _ops(lambda g: g.matmul(g.tensor([1, 64, 32]), g.tensor([1, 32, 16]), output=True,
                                                     m_override=_i64(g, [1, 1, 1]), n_override=_i64(g, [1, 1, 1]),
                                                     k_override=_i64(g, [1, 1, 1]), padding_value=0.0)),
    "rng seeded": _ops(lambda g: g.rng([2, 4, 8, 8], seed=_i64(g, [1, 1, 1, 1], by_value=True),
                                       offset=_i64(g, [1, 1, 1, 1], by_value=True)), "CUDNN_DATA_FLOAT"),
    "rng normal": _ops(lambda g: g.rng([2, 4, 8, 8], distribution="normal", mean=0.0, std=1.0, seed=7),
                       "CUDNN_DATA_FLOAT"),
    "rng uniform": _ops(lambda g: g.rng([2, 4, 8, 8], distribution="uniform", minimum=0.0, maximum=1.0, seed=7),
                        "CUDNN_DATA_FLOAT"),
    "softmax max and sum": _ops(lambda g: g.softmax(g.tensor([2, 4, 128, 128]), max_sum=True, output=True)),
    "slice strided": _ops(lambda g: g.slice(g.tensor([4, 16, 8, 8]), [0, 4, 0, 0], [4, 12, 8, 8], [1, 2, 1, 1],
                                            output=True)),
    "transpose": _ops(lambda g: g.transpose(g.tensor([4, 16, 8, 8]), [0, 2, 3, 1], output=True)),
    "rope_fwd with rope_dim": _ops(lambda g: g.rope_fwd(g.tensor([2, 4, 128, 64]),
                                                        _f32(g, [128, 1, 1, 64], [64, 64, 64, 1]), rope_dim=32),
                                   "CUDNN_DATA_BFLOAT16"),
    "rope_bwd": _ops(lambda g: g.rope_bwd(g.tensor([2, 4, 128, 64]), _f32(g, [128, 1, 1, 64], [64, 64, 64, 1])),
                     "CUDNN_DATA_BFLOAT16"),
    "diagonal_band_mask": _ops(lambda g: g.diagonal_band_mask(g.tensor([2, 4, 128, 128]), g.scalar(-1e9),
                                                              output=True)),
    "diagonal_band_mask left bound": _ops(lambda g: g.diagonal_band_mask(
        g.tensor([2, 4, 128, 128]), g.scalar(-1e9), left_bound=_i32(g, [1, 1, 1, 1], by_value=True),
        seq_len_q=_i32(g, [2, 1, 1, 1]), seq_len_kv=_i32(g, [2, 1, 1, 1]), output=True)),
    "diagonal_band_mask right bound": _ops(lambda g: g.diagonal_band_mask(
        g.tensor([2, 4, 128, 128]), g.scalar(-1e9), shift_right_bound=_i32(g, [1, 1, 1, 1], by_value=True),
        comparison="CMP_LT", output=True)),
    "sdpa_fwd padded": _ops(lambda g: g.sdpa_fwd(*_attention(g), attn_scale=0.125, seq_len_q=_i32(g, [2, 1, 1, 1]),
                                                 seq_len_kv=_i32(g, [2, 1, 1, 1]))),
    "paged_cache_load": _ops(lambda g: g.paged_cache_load(g.tensor([16, 4, 64, 64]), _i32(g, [2, 1, 8, 1]),
                                                          _i32(g, [2, 1, 1, 1]), max_seq_len=512, output=True)),
    "signal": _ops(lambda g: g.signal(g.tensor([2, 8, 4, 4]), _i64(g, [1, 1, 1, 1]), 1, output=True)),
    "expand_band_matrix": _ops(lambda g: g.expand_band_matrix(g.tensor([2, 16, 3]), [2, 16, 16], lower=1, upper=1,
                                                              axis=2, pad_value=0.0, output=True)),
    "contract_band_matrix": _ops(lambda g: g.contract_band_matrix(g.tensor([2, 16, 16]), lower=1, upper=1, axis=2,
                                                                  pad_value=0.0, max_token_value=16, output=True)),
    "maxpool backward": _ops(lambda g: g.resample_bwd(
        g.tensor([2, 8, 8, 8], layout="nhwc"), [2, 8, 16, 16], index=g.tensor([2, 8, 8, 8], None, "CUDNN_DATA_INT8",
                                                                             layout="nhwc"))),
    "avgpool backward": _ops(lambda g: g.resample_bwd(g.tensor([2, 8, 8, 8], layout="nhwc"), [2, 8, 16, 16],
                                                      mode="avgpool_include_padding")),
    "bn_bwd_weights": _ops(lambda g: g.bn_bwd_weights(
        g.tensor([2, 16, 8, 8], layout="nhwc"), g.tensor([2, 16, 8, 8], layout="nhwc"),
        *[_f32(g, [1, 16, 1, 1]) for _ in range(3)])),
    "norm_backward with epsilon": _ops(lambda g: g.norm_backward(
        g.tensor([64, 128, 1, 1]), g.tensor([64, 128, 1, 1]), _f32(g, [1, 128, 1, 1]), _f32(g, [64, 1, 1, 1]),
        _f32(g, [64, 1, 1, 1]), epsilon=g.scalar(1e-5))),
    "instance_norm": _ops(lambda g: g.instance_norm(g.tensor([2, 16, 8, 8], layout="nhwc"), _f32(g, [1, 16, 1, 1]),
                                                    _f32(g, [1, 16, 1, 1]))),
    "ada_layer_norm": _ops(lambda g: g.ada_layer_norm(g.tensor([1, 64, 128, 1]), _f32(g, [1, 1, 128, 1]),
                                                      _f32(g, [1, 1, 128, 1]))),
    "instance_norm inference": _ops(lambda g: g.instance_norm(
        g.tensor([2, 16, 8, 8], layout="nhwc"), _f32(g, [1, 16, 1, 1]), _f32(g, [1, 16, 1, 1]), training=False)),
    "ada_layer_norm inference": _ops(lambda g: g.ada_layer_norm(
        g.tensor([1, 64, 128, 1]), _f32(g, [1, 1, 128, 1]), _f32(g, [1, 1, 128, 1]), training=False)),
    "moe_grouped_matmul": _ops(lambda g: g.moe_grouped_matmul(g.tensor([1, 256, 64]), g.tensor([4, 64, 32]),
                                                              _i32(g, [4, 1, 1]))),
    "moe_grouped_matmul gather": _ops(lambda g: g.moe_grouped_matmul(
        g.tensor([1, 128, 64]), g.tensor([4, 64, 32]), _i32(g, [4, 1, 1]), mode="gather",
        token_index=_i32(g, [1, 256, 1]), top_k=2)),
    "moe_grouped_matmul_bwd": _ops(lambda g: g.moe_grouped_matmul_bwd(g.tensor([1, 256, 64]), g.tensor([1, 256, 32]),
                                                                      _i32(g, [4, 1, 1]), num_experts=4)),
    "block_scale_quantize axis": _ops(lambda g: g.block_scale_quantize(g.tensor([1, 128, 256])),
                                      "CUDNN_DATA_BFLOAT16"),
    "reshape strided": _ops(lambda g: g.reshape(g.matmul(g.tensor([4, 16, 8]), g.tensor([4, 8, 8])), [1, 64, 8],
                                                output=True)),
    "concat in place": _ops(lambda g: g.concat([g.tensor([2, 8, 4, 4]), g.tensor([2, 8, 4, 4])], axis=1,
                                               output=True)),
    "gen_index": _ops(lambda g: g.gen_index(g.tensor([2, 8, 4, 4]), axis=1), "CUDNN_DATA_FLOAT"),
}


# -- operations with members the Graph builder does not set: typed classes, each member by its keyword ----------
class _Tensors:
    """Finalized tensors with fresh UIDs (typed ``Tensor``), for the operations built by hand below."""

    def __init__(self):
        self.uid = 100

    def __call__(self, dims, data_type="CUDNN_DATA_HALF", strides=None, **kw):
        from cudnn_backend.typed import Tensor

        self.uid += 1
        if strides is None:
            strides = [1] * len(dims)
            for i in range(len(dims) - 2, -1, -1):
                strides[i] = strides[i + 1] * dims[i + 1]
        t = Tensor(data_type=data_type, dimensions=list(dims), strides=strides, unique_id=self.uid, byte_alignment=16,
                   **kw)
        t.finalize()
        return t

    def virtual(self, dims, data_type="CUDNN_DATA_FLOAT"):
        return self(dims, data_type, is_virtual=True)

    def scalar(self, data_type="CUDNN_DATA_FLOAT"):
        return self([1, 1, 1, 1], data_type, is_by_value=True)


def _typed(name, **keywords):
    """A finalized operation of the typed class ``name`` (``cudnn_backend.typed``), every keyword set."""
    import cudnn_backend.typed as typed

    op = getattr(typed, name)(**keywords)
    op.finalize()
    return op


def _attention_tensors(t, b=2, h=4, s=128, d=64, data_type="CUDNN_DATA_HALF", ragged=False):
    make = _ragged_multiplied if ragged else (lambda t: t([b, h, s, d], data_type))
    q, k, v, o = (make(t) for _ in range(4))
    return q, k, v, o, t([b, h, s, 1], "CUDNN_DATA_FLOAT")


def _keywords(t, extra):
    return {name: (value(t) if callable(value) else value) for name, value in extra.items()}


def _sdpa_fwd(data_type="CUDNN_DATA_HALF", stats=True, **extra):
    def make():
        t = _Tensors()
        q, k, v, o, s = _attention_tensors(t, data_type=data_type)
        modifier = extra.get("subgraph")
        keywords = _keywords(t, {k: v for k, v in extra.items() if k != "subgraph"})
        if modifier is not None:
            keywords.update(modifier(t))
        if stats:
            keywords["statsdesc"] = s
        return [_typed("OperationSdpaFwd", qdesc=q, kdesc=k, vdesc=v, odesc=o, scaledesc=t.scalar(), **keywords)]
    return make


def _score_modifier(t):
    """A score-modifier subgraph: S + bias (S, the subgraph's input, and its output: virtual)."""
    from cudnn_backend.typed import OperationGraph

    s, out = t.virtual([2, 4, 128, 128]), t.virtual([2, 4, 128, 128])
    pw = _typed("Pointwise", mode="CUDNN_POINTWISE_ADD", math_prec="CUDNN_DATA_FLOAT")
    add = _typed("OperationPointwise", pw_descriptor=pw, xdesc=s, bdesc=t([1, 4, 128, 128], "CUDNN_DATA_FLOAT"),
                 ydesc=out)
    graph = OperationGraph(ops=[add])
    graph.finalize()
    return {"subgraph": graph, "subgraph_input_uid": s.unique_id, "subgraph_output_uid": out.unique_id}


def _sdpa_bwd(ragged=False, **extra):
    def make():
        t = _Tensors()
        q, k, v, o, stats = _attention_tensors(t, ragged=ragged)
        modifier = extra.pop("subgraph", None)
        keywords = _keywords(t, extra)
        if modifier is not None:
            keywords.update(modifier(t))
        return [_typed("OperationSdpaBwd", qdesc=q, kdesc=k, vdesc=v, odesc=o, statsdesc=stats, scaledesc=t.scalar(),
                       doddesc=t([2, 4, 128, 64]), dqdesc=t([2, 4, 128, 64]), dkdesc=t([2, 4, 128, 64]),
                       dvdesc=t([2, 4, 128, 64]), **keywords)]
    return make


def _seed(t):
    return t([1, 1, 1, 1], "CUDNN_DATA_INT64")


def _per_batch(t):
    return t([2, 1, 1, 1], "CUDNN_DATA_INT32")


def _cumulative(t):
    return t([3, 1, 1, 1], "CUDNN_DATA_INT32")


def _softmax_with_sink():
    t = _Tensors()
    x = t([2, 4, 128, 128])
    return [_typed("OperationSoftmax", xdesc=x, ydesc=t([2, 4, 128, 128]), stats_desc=t([2, 4, 128, 1],
                   "CUDNN_DATA_FLOAT"), sink_desc=t([1, 4, 1, 1], "CUDNN_DATA_FLOAT"))]


def _softmax_log2():
    t = _Tensors()
    return [_typed("OperationSoftmax", xdesc=t([2, 4, 128, 128]), ydesc=t([2, 4, 128, 128]),
                   stats_desc=t([2, 4, 128, 1], "CUDNN_DATA_FLOAT"), stats_log2=True)]


def _ragged_tensor(t):
    offsets = t([3, 1, 1, 1], "CUDNN_DATA_INT32")
    return t([2, 4, 128, 64], ragged_offset_desc=offsets)


def _ragged_multiplied(t):
    offsets = t([3, 1, 1, 1], "CUDNN_DATA_INT32")
    return t([2, 4, 128, 64], ragged_offset_desc=offsets, ragged_offset_multiplier=64)


def _sdpa_ragged(multiplier):
    def make():
        t = _Tensors()
        ragged = _ragged_multiplied if multiplier else _ragged_tensor
        q, k, v, o = (ragged(t) for _ in range(4))
        return [_typed("OperationSdpaFwd", qdesc=q, kdesc=k, vdesc=v, odesc=o, statsdesc=t([2, 4, 128, 1],
                       "CUDNN_DATA_FLOAT"), scaledesc=t.scalar(), seq_len_qdesc=_per_batch(t),
                       seq_len_kvdesc=_per_batch(t))]
    return make


def _constant_tensor(data_type, value):
    """A pointwise add of a constant tensor (its value in the graph: CUDNN_ATTR_TENSOR_CONSTANT_VALUE, 9.22+)."""
    def make():
        t = _Tensors()
        x = t([2, 8, 4, 4], "CUDNN_DATA_FLOAT")
        c = t([1, 1, 1, 1], data_type, is_by_value=True, constant_value=value)
        pw = _typed("Pointwise", mode="CUDNN_POINTWISE_ADD", math_prec="CUDNN_DATA_FLOAT")
        return [_typed("OperationPointwise", pw_descriptor=pw, xdesc=x, bdesc=c,
                       ydesc=t([2, 8, 4, 4], "CUDNN_DATA_FLOAT"))]
    return make


TYPED_GRAPHS = {
    "sdpa_fwd dropout": _sdpa_fwd(dropout_seed_desc=_seed, dropout_offset_desc=_seed, dropout_probability=0.1),
    "sdpa_fwd dropout dump": _sdpa_fwd(dropout_seed_desc=_seed, dropout_offset_desc=_seed, dropout_probability=0.1,
                                       dropout_rng_dump_desc=lambda t: t([2, 4, 128, 128], "CUDNN_DATA_FLOAT")),
    "sdpa_fwd unfused fma": _sdpa_fwd(unfuse_fma=True),
    "sdpa_fwd block mask": _sdpa_fwd(block_mask_desc=lambda t: t([2, 4, 1, 1], "CUDNN_DATA_UINT8")),
    "sdpa_fwd paged": _sdpa_fwd(page_table_kdesc=lambda t: t([2, 1, 2, 1], "CUDNN_DATA_INT32"),
                                page_table_vdesc=lambda t: t([2, 1, 2, 1], "CUDNN_DATA_INT32"),
                                seq_len_qdesc=_per_batch, seq_len_kvdesc=_per_batch),
    "sdpa_fwd cumulative lengths": _sdpa_fwd(cu_seq_len_qdesc=_cumulative, cu_seq_len_kvdesc=_cumulative),
    "sdpa_fwd fp8 scales": _sdpa_fwd("CUDNN_DATA_FP8_E4M3",
                                     descale_qdesc=lambda t: t.scalar(), descale_kdesc=lambda t: t.scalar(),
                                     descale_vdesc=lambda t: t.scalar(), descale_sdesc=lambda t: t.scalar(),
                                     scale_sdesc=lambda t: t.scalar(), scale_odesc=lambda t: t.scalar(),
                                     amax_sdesc=lambda t: t([1, 1, 1, 1], "CUDNN_DATA_FLOAT"),
                                     amax_odesc=lambda t: t([1, 1, 1, 1], "CUDNN_DATA_FLOAT")),
    "sdpa_fwd softmax sink": _sdpa_fwd(stats=False, softmax_desc=lambda t: _typed(
        "OperationSoftmax", xdesc=t.virtual([2, 4, 128, 128]), ydesc=t.virtual([2, 4, 128, 128]),
        stats_desc=t([2, 4, 128, 1], "CUDNN_DATA_FLOAT"), sink_desc=t([1, 4, 1, 1], "CUDNN_DATA_FLOAT"))),
    "sdpa_fwd score modifier": _sdpa_fwd(subgraph=_score_modifier),
    "sdpa_fwd ragged": _sdpa_ragged(False),
    "sdpa_fwd ragged multiplier": _sdpa_ragged(True),
    "sdpa_bwd sink": _sdpa_bwd(sink_desc=lambda t: t([1, 4, 1, 1], "CUDNN_DATA_FLOAT"),
                               dsink_desc=lambda t: t([1, 4, 1, 1], "CUDNN_DATA_FLOAT")),
    "sdpa_bwd ragged totals": _sdpa_bwd(True, seq_len_qdesc=_per_batch, seq_len_kvdesc=_per_batch,
                                        max_total_seq_len_q=256, max_total_seq_len_kv=256),
    "sdpa_bwd cumulative lengths": _sdpa_bwd(cu_seq_len_qdesc=_cumulative, cu_seq_len_kvdesc=_cumulative),
    "sdpa_bwd dropout": _sdpa_bwd(dropout_seed_desc=_seed, dropout_offset_desc=_seed, dropout_probability=0.1),
    "sdpa_bwd dbias": _sdpa_bwd(dbias_desc=lambda t: t([1, 4, 128, 128], "CUDNN_DATA_FLOAT"), subgraph=_score_modifier),
    "softmax with sink": _softmax_with_sink,
    "softmax stats log2": _softmax_log2,
    "pointwise constant float": _constant_tensor("CUDNN_DATA_FLOAT", b"\x00\x00\x00\x40"),  # 2.0
    "pointwise constant int32": _constant_tensor("CUDNN_DATA_INT32", b"\x03\x00\x00\x00"),
    "pointwise constant bool": _constant_tensor("CUDNN_DATA_BOOLEAN", b"\x01"),
}
