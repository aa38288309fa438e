# compare two support matrices (python compare_before_after.py before.json after.json): verdicts, statuses, engines, configs, first configs, reasons; the labels counted apart
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
A = {(r['name'], r['data_type'], r['layout']): r for r in a['results']}
B = {(r['name'], r['data_type'], r['layout']): r for r in b['results']}
keys = ['reason', 'supported', 'stage', 'status', 'verified', 'engines_total', 'engines_supported', 'engines_finalized', 'configs', 'first_configs', 'kinds', 'chosen', 'denied']
labels = ['offline_gaps', 'caveat', 'cuda_runtime']
diff = {k: 0 for k in keys + labels}
for key in A:
    for k in keys + labels:
        if A[key].get(k) != B[key].get(k):
            diff[k] += 1
            if k in keys and diff[k] <= 3: print("DIFF", k, key, A[key].get(k), B[key].get(k))
print(len(A), len(B), "graphs; differing per field:", {k: v for k, v in diff.items() if v} or "none")
