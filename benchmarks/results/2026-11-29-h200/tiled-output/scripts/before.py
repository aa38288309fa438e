import cudnn_backend as cb
from cudnn_backend.typed.tensors import TensorSpec
from cudnn_backend.patterns import sdpa_composite_bwd

TensorSpec.tiled = property(lambda self: False)  # as before: every output compared, the tiled one too
p = sdpa_composite_bwd(b=1, h=2, s_q=128, s_kv=128, d=64, build=False)
ex = cb.explore(p)
print(ex.table(limit=6))
for n in ex.notes:
    print("note:", n)
p = sdpa_composite_bwd(b=1, h=2, s_q=128, s_kv=128, d=64, dq_accumulator=False, build=False)
ex = cb.explore(p)
print(ex.table(limit=6))
