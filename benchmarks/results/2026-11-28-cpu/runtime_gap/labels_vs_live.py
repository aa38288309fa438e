# the labels of an offline matrix against the live one: python labels_vs_live.py live.json offline.json
import json, sys, collections
L = {(r['name'], r['data_type'], r['layout']): r for r in json.load(open(sys.argv[1]))['results']}
O = {(r['name'], r['data_type'], r['layout']): r for r in json.load(open(sys.argv[2]))['results']}
c = collections.Counter()
for k, o in O.items():
    l = L.get(k)
    if l is None: continue
    same_lists = l['configs'] == o['configs'] and l['first_configs'] == o['first_configs']
    same_eng = sorted(l['engines_finalized']) == sorted(o['engines_finalized'])
    g = o['offline_gaps']
    if o['supported']:
        c['supported'] += 1
        labelled = bool(g)
        c[f"supported, lists {'agree' if same_lists else 'DIFFER'}, engines {'agree' if same_eng else 'DIFFER'}, {'labelled' if labelled else 'no label'}"] += 1
        if 'assumed_layout' in g:
            c['assumed_layout'] += 1; c['assumed_layout, lists differ'] += not same_lists
    if 'cuda_runtime' in g:
        c['cuda_runtime'] += 1
        if o['cuda_runtime'].get('engines'): c['cuda_runtime engines, engines differ live'] += not same_eng; c['cuda_runtime engines'] += 1
        if o['cuda_runtime'].get('heuristics'): c['cuda_runtime heuristics, lists differ live'] += not same_lists; c['cuda_runtime heuristics'] += 1
    if not same_eng:
        c['engines differ live'] += 1; c['engines differ live, named'] += bool(set(l['engines_finalized']) - set(o['engines_finalized']) <= set(o['cuda_runtime'].get('engines', [])))
    if l['supported'] != o['supported']:
        c[f"verdict differs: live {l['supported']} offline {o['status']}"] += 1
for k, v in sorted(c.items()): print(f"{v:5d}  {k}")
