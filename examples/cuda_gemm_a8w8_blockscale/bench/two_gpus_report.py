"""Reads two_gpus.sh's logs: wall time per -j, the ratio, and whether any GPU ever ran two
benchmarks at once (from the launcher's start/end log and from nvidia-smi's process samples)."""
import collections
import csv
import sys

out = sys.argv[1]
wall = {}
for j in (1, 2):
    start, end = map(float, open(f"{out}/wall_j{j}.txt").read().split())
    wall[j] = end - start
    runs = []
    for line in open(f"{out}/runs_j{j}.log"):
        s, e, gpu, rc, *cmd = line.split()
        cand = cmd[cmd.index("--candidate") + 1] if "--candidate" in cmd else "?"
        runs.append((float(s), float(e), gpu, rc, cand))
    runs.sort()
    t0 = float(start)
    print(f"-j {j}: {wall[j]:.1f} s wall, {len(runs)} benchmarks")
    for s, e, gpu, rc, cand in runs:
        print(f"  candidate {cand}: {gpu:<16} {s - t0:7.1f} s -> {e - t0:7.1f} s  rc={rc}")
    overlaps = 0
    by_gpu = collections.defaultdict(list)
    for s, e, gpu, _, cand in runs:
        by_gpu[gpu].append((s, e, cand))
    for gpu, spans in by_gpu.items():
        spans.sort()
        for (s1, e1, c1), (s2, e2, c2) in zip(spans, spans[1:]):
            if s2 < e1:
                overlaps += 1
                print(f"  OVERLAP on {gpu}: {c1} and {c2}")
    print(f"  same-GPU overlaps (launcher log): {overlaps}; GPUs used: {sorted(by_gpu)}")
print(f"throughput ratio -j 2 vs -j 1: {wall[1] / wall[2]:.2f}x")

# nvidia-smi: at each sample, how many harness processes per GPU. One sample's rows differ by a
# millisecond or two in their timestamps, so rows are grouped per tenth of a second.
samples = collections.defaultdict(lambda: collections.defaultdict(set))
for row in csv.reader(open(f"{out}/apps.csv")):
    if len(row) < 4 or "candidate_" not in row[3]:
        continue
    samples[row[0].strip()[:-2]][row[1].strip()].add(row[2].strip())
worst = max((len(p) for per_gpu in samples.values() for p in per_gpu.values()), default=0)
both = sum(1 for per_gpu in samples.values() if len(per_gpu) >= 2)
print(f"nvidia-smi: {len(samples)} samples with a harness running, {both} with both GPUs busy, "
      f"at most {worst} harness process(es) on one GPU")
