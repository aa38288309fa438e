"""Which graphs does cuDNN fuse, on which GPU and release, and why does it refuse the others?

A slice of the support matrix (convolution forward + bias + ReLU graphs, fp16 NHWC) for the H100 profile, the same
slice compared with the H200, and the explanation of a refusal: an fp32 stride-2 dgrad with a bias in its epilogue,
NCHW, which cuDNN 9.19's runtime fusion engine takes only on SM80 and SM120. Offline: everything runs against the
bundled device profiles; on a GPU, ``cudnn-backend support --kernels`` adds the kernel counts.

    python examples/support_matrix.py
"""
import cudnn_backend as cb
from cudnn_backend.graph import shapes


# [matrix]
def matrix_slice(profile="h100"):
    """Probe a few catalogue graphs: supported or not, at which stage refused, engines, configs, engine kinds."""
    m = cb.support_matrix(device_profile=profile, family="conv_fwd", data_type="fp16", layout="nhwc",
                          name="+bias+relu", cache=False)  # cache=True (the default) keeps results per release
    print(m.title())
    for r in m:
        first = r.chosen or {}
        print(f"  {r.status:<15} {r.name:<30} engines {r.engines_supported}/{r.engines_total}, configs "
              f"A {r.configs.get('A')} FALLBACK {r.configs.get('FALLBACK')}, first: engine {first.get('engine')} "
              f"({first.get('kind')})")
    return m
# [/matrix]


# [why]
def strided_dgrad_fp32():
    """fp32 dgrad with stride 2 and a per-channel bias in its epilogue, NCHW."""
    g = cb.Graph("strided_dgrad_fp32", io_data_type="float")
    n, c, h, w, k = 4, 64, 16, 16, 64
    dy = g.tensor(shapes.conv_output_dims([n, c, h, w], [k, c, 3, 3], 1, 2, 1), layout="nchw", name="dy")
    wt = g.tensor([k, c, 3, 3], layout="nchw", name="w")
    dx = g.conv_bwd_data(dy, wt, [n, c, h, w], padding=1, stride=2, name="dx")
    g.bias(dx, g.tensor([1, c, 1, 1], layout="nchw", name="bias"), output=True, name="y")
    return g


def explain(profile="h100"):
    ex = cb.why(strided_dgrad_fp32(), profile)
    print(ex.text())
    return ex
# [/why]


# [compare]
def compare_gpus():
    c = cb.compare_support(profiles=("h100", "h200"), family="conv_fwd", data_type="fp16", layout="nhwc",
                           name="+bias+relu", cache=False)
    print(f"{c.label_a} vs {c.label_b}: {c.counts()}")
    return c
# [/compare]


def main():
    m = matrix_slice()
    assert len(m) == 4 and all(r.supported for r in m)
    ex = explain()
    assert ex.stage == "heuristics" and ex.minimization is not None
    compare_gpus()


if __name__ == "__main__":
    main()
