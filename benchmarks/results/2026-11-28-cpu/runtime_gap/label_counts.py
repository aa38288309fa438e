# label counts of an offline matrix (and probe seconds against another): python label_counts.py after.json [before.json]
import json, sys, collections
d = json.load(open(sys.argv[1]))['results']
b = json.load(open(sys.argv[2]))['results'] if len(sys.argv) > 2 else None
print("probe seconds", round(sum(r['seconds'] for r in d)), "before", round(sum(r['seconds'] for r in b)) if b else "")
c = collections.Counter()
for r in d:
    for g in r['offline_gaps']: c[g] += 1
    if r['cuda_runtime'].get('engines'): c['cuda_runtime: engines'] += 1
    if r['cuda_runtime'].get('heuristics'): c['cuda_runtime: heuristics'] += 1
    if not r['supported'] and r['offline_gaps']: c['unknown offline'] += 1
    if not r['supported'] and 'cuda_runtime' in r['offline_gaps']: c['refused, with cuda_runtime'] += 1
    if 'not verified: whether any' in r['caveat']: c['unobserved'] += 1
print(dict(c), collections.Counter(r['status'] for r in d))
eng = collections.Counter((r['name'].split('[')[0], tuple(r['cuda_runtime'].get('engines', []))) for r in d if r['cuda_runtime'].get('engines'))
print(sorted({(n.split('+')[0] if '+' not in n else n, e) for n, e in eng}))
print(sorted(collections.Counter((r['name'], tuple(r['cuda_runtime']['heuristics'])) for r in d if r['cuda_runtime'].get('heuristics'))))
