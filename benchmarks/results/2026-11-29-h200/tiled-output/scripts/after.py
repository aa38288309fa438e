import cudnn_backend as cb
from cudnn_backend.patterns import sdpa_composite_bwd

p = sdpa_composite_bwd(b=1, h=2, s_q=128, s_kv=128, d=64, build=False)
ex = cb.explore(p)
print(ex.table(limit=6))
print("check:", ex.check)
for n in ex.notes:
    print("note:", n)
print("statuses:", sorted({r.status_text for r in ex.results}))
