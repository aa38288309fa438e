# The kinds of config-count difference per heuristics mode (README): python kinds_of_difference.py 92801
import json,sys,collections
# graphs whose heuristics start cuDNN's static CUDA runtime offline (which_steps_start_the_runtime.py ... A / FALLBACK)
RUNTIME_HEURISTICS = {'matmul', 'matmul+relu', 'matmul+gelu'}
v=sys.argv[1]
L={ (r['name'],r['data_type'],r['layout']):r for r in json.load(open(f'live_{v}.json'))['results']}
O={ (r['name'],r['data_type'],r['layout']):r for r in json.load(open(f'off_{v}.json'))['results']}
for mode in ("A","B","FALLBACK"):
  k=collections.Counter(); n=0
  for key,l in L.items():
    o=O.get(key)
    if o is None or mode not in l['configs'] or mode not in o['configs']: continue
    n+=1
    a,b=l['configs'][mode],o['configs'][mode]
    if a==b: k['agree']+=1; continue
    eng = set(l['engines_finalized'])!=set(o['engines_finalized'])
    fam=l['family']; single = ('+' not in key[0] and '>' not in key[0])
    if o.get('unknown') or o.get('status')=='unknown' or o.get('offline_gaps'): cat='unknown offline (GPC table empty)'
    elif eng: cat='engines needing the CUDA runtime'
    elif key[0] in RUNTIME_HEURISTICS: cat='heuristics consulting the CUDA runtime'
    elif fam in ('layer_norm','rms_norm'): cat='norm persistent kernels'
    elif not single: cat='fused conv/matmul (runtime-compiled)'
    else: cat='single op, same engines'
    k[cat+(' fewer' if b<a else ' more')]+=1
  print(v, mode, n, dict(sorted(k.items())))
