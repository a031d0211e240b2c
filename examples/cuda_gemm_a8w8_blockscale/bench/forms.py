#!/usr/bin/env python3
"""Heuristic forms on the committed 42-pair sweep, sketched outside kopt, no GPU needed.

Needs numpy (Debian: python3-numpy); exploration only, kopt does not use it. It merges the four
passes (each row's lowest median), resolves ties at 0.02 as kopt does, and scores leave one
(N,K) pair out exactly as `kopt heuristic eval` does (`reproduce` prints heuristic_eval.sh's six
tie-slack rows, the check that this scorer is kopt's):
  forms.py reproduce   the tie-slack fit (kopt's greedy and pruned Gini trees) at 8 / 12 arms
  forms.py forms       the other forms of docs/PERFORMANCE.md's table (CART by depth, the fit to
                       the slowdown beyond 2% of tuned, leaves that pick by a per-kernel model)
  forms.py ceiling     the noise ceiling in eval's own scoring: machine 1's choices on machine 2
  forms.py hull        the --within 0.02 fit at 32 arms, split into pairs inside the sweep's
                       range of N and K and the four pairs at its edges (extrapolated)
"""
import csv, gzip, math, os, sys
import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                    "full_h100_2026-11-25_m%s.csv.gz")
def rows(path):
    with gzip.open(path, "rt", newline="") as f:
        return list(csv.DictReader(f))

def load(passes=("1p1", "1p2", "2p1", "2p2")):
    t = {}
    for p in passes:
        for r in rows(DATA % p):
            if not r["us"]:
                continue
            if r["err"] not in ("", "0", "0.0"):
                continue
            k = (int(r["M"]), int(r["N"]), int(r["K"]))
            us = float(r["us"])
            d = t.setdefault(k, {})
            if r["kernel"] not in d or us < d[r["kernel"]]:
                d[r["kernel"]] = us
    return t

class Table:
    def __init__(self, t, ties=0.02):
        self.shapes = sorted(t)
        self.kernels = sorted({k for d in t.values() for k in d})
        S, K = len(self.shapes), len(self.kernels)
        self.us = np.full((S, K), np.inf)
        for i, s in enumerate(self.shapes):
            for j, k in enumerate(self.kernels):
                if k in t[s]:
                    self.us[i, j] = t[s][k]
        self.M = np.array([s[0] for s in self.shapes], dtype=np.int64)
        self.N = np.array([s[1] for s in self.shapes], dtype=np.int64)
        self.K = np.array([s[2] for s in self.shapes], dtype=np.int64)
        self.pair = np.array([s[1] * 100000 + s[2] for s in self.shapes])
        self.pairs = sorted(set(self.pair.tolist()))
        self.ties = ties
        self.tuned = resolve_ties(self.us, ties)

def resolve_ties(us, ties):
    """As results.cpp: tied = within (1+ties) x raw fastest (first-by-name argmin); choice = tied
    kernel within the ties on most shapes, first by name."""
    raw = np.argmin(us, axis=1)  # first by index = by name among equal
    fastest = us[np.arange(len(us)), raw]
    if ties == 0:
        return raw
    tied = us <= fastest[:, None] * (1 + ties)
    count = tied.sum(axis=0)
    score = np.where(tied, count[None, :], -1)
    return np.argmax(score, axis=1)  # first max = first by name

def tiles(M, N, bm, bn):
    return ((M + bm - 1) // bm) * ((N + bn - 1) // bn)

def waves(M, N, bm, bn, c):
    return (tiles(M, N, bm, bn) + c - 1) // c

def fill(M, N, bm, bn, c):
    t = tiles(M, N, bm, bn)
    w = (t + c - 1) // c
    return np.where(t <= 0, 100, 100 * t // np.maximum(w * c, 1))

FILL_TILES = [(16,32),(16,64),(16,128),(32,64),(32,128),(64,64),(64,128),(128,64),(128,128)]
MAIN = [(16,64),(16,128),(32,64),(64,64),(64,128),(128,128)]

def features(tb, sets="ratios"):
    M, N, K = tb.M, tb.N, tb.K
    names, cols = ["M", "N", "K", "M*N"], [M, N, K, M * N]
    if sets in ("fills", "ratios"):
        for bm, bn in FILL_TILES:
            names.append("fill(%dx%d,264)" % (bm, bn)); cols.append(fill(M, N, bm, bn, 264))
    if sets == "ratios":
        for i in range(len(MAIN)):
            for j in range(i + 1, len(MAIN)):
                a = waves(M, N, *MAIN[i], 264); b = waves(M, N, *MAIN[j], 264)
                names.append("waves(%dx%d,264)/waves(%dx%d,264)" % (MAIN[i] + MAIN[j]))
                cols.append(np.where(b == 0, 0, 1000 * a // np.maximum(b, 1)))
    return names, np.stack(cols, axis=1).astype(np.int64)
PEN = math.log(1000.0)

def cost_matrix(us, tuned, ties):
    fastest = us.min(axis=1)
    c = np.log(us / fastest[:, None])
    c = np.clip(c, math.log1p(ties), PEN)
    c[~np.isfinite(us)] = PEN
    c[np.arange(len(us)), tuned] = 0
    return c

class Node:
    __slots__ = ("idx", "kernel", "cost", "feat", "thr", "left", "right", "gain")
    def __init__(self, idx):
        self.idx = idx; self.left = self.right = None; self.gain = 0.0

def leaf_cost(C, idx):
    s = C[idx].sum(axis=0)
    k = int(np.argmin(s))
    return k, float(s[k])

def best_split(C, X, idx, min_leaf, score):
    """score(left_cum (n-1,K), right (n-1,K), counts) -> array of split values (larger better)."""
    best = (1e-9, None, None)  # value, feature, threshold
    n = len(idx)
    if n < 2:
        return best
    for f in range(X.shape[1]):
        v = X[idx, f]
        order = np.argsort(v, kind="stable")
        vs = v[order]
        valid = vs[:-1] != vs[1:]
        cnt = np.arange(1, n)
        valid &= (cnt >= min_leaf) & (n - cnt >= min_leaf)
        if not valid.any():
            continue
        val = score(order, cnt)
        val = np.where(valid, val, -np.inf)
        i = int(np.argmax(val))
        if val[i] > best[0] + 1e-12:
            best = (float(val[i]), f, int(vs[i] + (vs[i + 1] - vs[i]) // 2))
    return best

def cost_split(C, X, node, min_leaf):
    idx = node.idx
    Cs = C[idx]
    tot = Cs.sum(axis=0)
    def score(order, cnt):
        cs = np.cumsum(Cs[order], axis=0)[:-1]
        return node.cost - cs.min(axis=1) - (tot[None, :] - cs).min(axis=1)
    g, f, t = best_split(C, X, idx, min_leaf, score)
    node.gain, node.feat, node.thr = (g, f, t) if f is not None else (0.0, None, None)

def greedy(C, X, max_arms, min_leaf=1):
    root = Node(np.arange(len(C)))
    root.kernel, root.cost = leaf_cost(C, root.idx)
    cost_split(C, X, root, min_leaf)
    leaves = [root]
    while len(leaves) < max_arms:
        b = 0
        for i in range(1, len(leaves)):
            if leaves[i].gain > leaves[b].gain + 1e-12:
                b = i
        p = leaves[b]
        if p.gain <= 1e-9:
            break
        m = X[p.idx, p.feat] <= p.thr
        l, r = Node(p.idx[m]), Node(p.idx[~m])
        for ch in (l, r):
            ch.kernel, ch.cost = leaf_cost(C, ch.idx)
            cost_split(C, X, ch, min_leaf)
        p.left, p.right = l, r
        leaves[b:b + 1] = [l, r]
    return root, leaves

def gini_tree(C, X, labels, K, max_arms, min_leaf=1):
    nodes = []
    def grow(idx):
        nd = Node(idx)
        nd.kernel, nd.cost = leaf_cost(C, idx)
        nodes.append(nd)
        n = len(idx)
        oh = np.zeros((n, K)); oh[np.arange(n), labels[idx]] = 1
        tot = oh.sum(axis=0)
        parent = n - (tot ** 2).sum() / n
        def score(order, cnt):
            cs = np.cumsum(oh[order], axis=0)[:-1]
            nl = cnt.astype(float); nr = n - nl
            il = nl - (cs ** 2).sum(axis=1) / nl
            ir = nr - ((tot[None, :] - cs) ** 2).sum(axis=1) / nr
            return parent - il - ir
        g, f, t = best_split(C, X, idx, min_leaf, score)
        if f is None:
            return nd
        nd.feat, nd.thr = f, t
        m = X[idx, f] <= t
        nd.left = grow(idx[m]); nd.right = grow(idx[~m])
        return nd
    root = grow(np.arange(len(C)))
    nleaves = sum(1 for nd in nodes if nd.left is None)
    while nleaves > max_arms:
        weakest, least = None, 0
        for nd in nodes:
            if nd.left is None or nd.left.left is not None or nd.right.left is not None:
                continue
            inc = nd.cost - nd.left.cost - nd.right.cost
            if weakest is None or inc < least - 1e-12:
                weakest, least = nd, inc
        weakest.left = weakest.right = None
        nleaves -= 1
    return root, collect(root)

def collect(nd, out=None):
    out = [] if out is None else out
    if nd.left is None:
        out.append(nd)
    else:
        collect(nd.left, out); collect(nd.right, out)
    return out

def fit(C, X, labels, K, max_arms, min_leaf=1):
    gr, gl = greedy(C, X, max_arms, min_leaf)
    pr, pl = gini_tree(C, X, labels, K, max_arms, min_leaf)
    g = sum(l.cost for l in gl); p = sum(l.cost for l in pl)
    if p < g - 1e-9 or (p <= g + 1e-9 and len(pl) < len(gl)):
        return pr, len(pl)
    return gr, len(gl)

def predict(root, X):
    out = np.empty(len(X), dtype=np.int64)
    def go(nd, idx):
        if nd.left is None:
            out[idx] = nd.kernel; return
        m = X[idx, nd.feat] <= nd.thr
        go(nd.left, idx[m]); go(nd.right, idx[~m])
    go(root, np.arange(len(X)))
    return out
def score(tb, pick, default, tie=0.02):
    """As evaluate_rules: vs tb.tuned (resolved over all shapes)."""
    r = np.arange(len(tb.us))
    tuned_us = tb.us[r, tb.tuned]
    sl = tb.us[r, pick] / tuned_us
    d = tb.us[r, default] / tuned_us
    return dict(match=float(np.mean(pick == tb.tuned)),
                within=float(np.mean((pick == tb.tuned) | (sl <= 1 + tie))),
                geomean=float(np.exp(np.mean(np.log(sl)))), worst=float(sl.max()),
                worst_at=tb.shapes[int(np.argmax(sl))],
                default=float(np.exp(np.mean(np.log(d)))))

def lopo(tb, X, fitter):
    """fitter(train_index, tuned_train) -> predict function over rows of X. Returns picks."""
    pick = np.empty(len(tb.us), dtype=np.int64)
    for p in tb.pairs:
        test = np.where(tb.pair == p)[0]
        train = np.where(tb.pair != p)[0]
        tuned_tr = resolve_ties(tb.us[train], tb.ties)
        pick[test] = fitter(train, tuned_tr)(test)
    return pick

def fmt(name, s):
    return "| %s | %.1f%% | %.1f%% | %.4fx | %.3fx | %.3fx |" % (
        name, 100 * s["match"], 100 * s["within"], s["geomean"], s["worst"], s["default"])


def within_cost(us, tuned, band=0.02):
    """kopt heuristic fit --within: 0 within (1 + band) x the tuned time, else log(slowdown)."""
    sl = us / us[np.arange(len(us)), tuned][:, None]
    c = np.where(sl <= 1 + band, 0.0, np.minimum(np.log(sl), PEN))
    c[~np.isfinite(us)] = PEN
    return c


def depth_tree(C, X, depth, min_leaf=1):
    """CART to a fixed depth, each split the largest cost reduction, leaves the least cost."""
    def grow(idx, d):
        nd = Node(idx)
        nd.kernel, nd.cost = leaf_cost(C, idx)
        if d == 0:
            return nd
        cost_split(C, X, nd, min_leaf)
        if nd.feat is None or nd.gain <= 1e-9:
            return nd
        m = X[idx, nd.feat] <= nd.thr
        nd.left, nd.right = grow(idx[m], d - 1), grow(idx[~m], d - 1)
        return nd
    return grow(np.arange(len(C)), depth)


def plain_cost(us, tuned):
    """The geomean time vs tuned, no tie slack."""
    c = np.log(us / us[np.arange(len(us)), tuned][:, None])
    c = np.clip(c, 0, PEN)
    c[~np.isfinite(us)] = PEN
    return c


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which == "ceiling":
        a, b = Table(load(("1p1", "1p2"))), Table(load(("2p1", "2p2")))
        d = a.kernels.index("a8w8_bs_64x64_w2x2_s3")
        print("| choices of | scored on | match | within 2% | geomean | worst | default only |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for x, y, nx, ny in ((a, b, "machine 1", "machine 2"), (b, a, "machine 2", "machine 1")):
            print(fmt("%s, tuned (ties 0.02) | %s" % (nx, ny), score(y, x.tuned, d)))
            print(fmt("%s, raw argmin | %s" % (nx, ny), score(y, np.argmin(x.us, axis=1), d)))
        return
    tb = Table(load())
    d = tb.kernels.index("a8w8_bs_64x64_w2x2_s3")
    KN = len(tb.kernels)

    def run(label, X, make):
        def fitter(train, tuned):
            root = make(tb.us[train], tuned, X[train])
            return lambda test: predict(root, X[test])
        pick = lopo(tb, X, fitter)
        print(fmt(label, score(tb, pick, d)), flush=True)
        return pick

    print("| form (leave one pair out) | match | within 2% | geomean | worst | default only |")
    print("|---|---:|---:|---:|---:|---:|")
    if which == "reproduce":
        for sets in ("base", "fills", "ratios"):
            X = features(tb, sets)[1]
            for arms in (8, 12):
                run("tie-slack fit, %s, %d arms" % (sets, arms), X,
                    lambda us, tu, Xt: fit(cost_matrix(us, tu, 0.02), Xt, tu, KN, arms)[0])
    elif which == "forms":
        X = features(tb, "ratios")[1]
        for depth in (3, 4, 5, 6):
            run("CART depth %d, tie-slack cost" % depth, X,
                lambda us, tu, Xt: depth_tree(cost_matrix(us, tu, 0.02), Xt, depth))
        for depth in (4, 5, 6):
            run("CART depth %d, geomean time (no slack)" % depth, X,
                lambda us, tu, Xt: depth_tree(plain_cost(us, tu), Xt, depth))
        for depth in (4, 5, 6):
            run("CART depth %d, slowdown beyond 2%%" % depth, X,
                lambda us, tu, Xt: depth_tree(within_cost(us, tu), Xt, depth))
        for arms in (12, 16, 24, 32, 48, 64):
            run("best-first, slowdown beyond 2%%, %d arms (--within 0.02)" % arms, X,
                lambda us, tu, Xt: greedy(within_cost(us, tu), Xt, arms)[0])
        for arms in (16, 32):
            run("kopt's two trees, slowdown beyond 2%%, %d arms" % arms, X,
                lambda us, tu, Xt: fit(within_cost(us, tu), Xt, tu, KN, arms)[0])
        # Leaves that pick by a model: per leaf, each kernel's log slowdown vs tuned is a least-
        # squares fit over [1, log M, log N, log K, log waves of the kernel's tile]; the leaf
        # picks the kernel of least predicted slowdown.
        tile = [tuple(int(v) for v in k.split("_")[2].split("x")) for k in tb.kernels]

        def design(idx, j):
            w = waves(tb.M[idx], tb.N[idx], *tile[j], 264)
            return np.stack([np.ones(len(idx)), np.log(tb.M[idx]), np.log(tb.N[idx]),
                             np.log(tb.K[idx]), np.log(w)], axis=1)
        for arms in (1, 8, 16):
            def fitter(train, tuned):
                us = tb.us[train]
                rel = np.log(us / us[np.arange(len(train)), tuned][:, None])
                root = greedy(within_cost(us, tuned), X[train], arms)[0]
                leaf = predict(root, X[train])
                models = {}
                for l in set(leaf.tolist()):
                    sel = np.where(leaf == l)[0]
                    models[l] = [np.linalg.lstsq(design(train[sel], j), rel[sel, j], rcond=None)[0]
                                 for j in range(KN)]

                def pick(test):
                    lt = predict(root, X[test])
                    pred = np.stack([np.einsum("ij,ij->i", design(test, j),
                                               np.stack([models[l][j] for l in lt]))
                                     for j in range(KN)], axis=1)
                    return np.argmin(pred, axis=1)
                return pick
            print(fmt("model leaves under a %d-leaf best-first tree" % arms,
                      score(tb, lopo(tb, X, fitter), d)), flush=True)
    elif which == "hull":
        X = features(tb, "ratios")[1]
        pick = run("best-first, slowdown beyond 2%, 32 arms", X,
                   lambda us, tu, Xt: greedy(within_cost(us, tu), Xt, 32)[0])
        ns, ks = sorted(set(tb.N.tolist())), sorted(set(tb.K.tolist()))
        edge = (tb.N == ns[0]) | (tb.N == ns[-1]) | (tb.K == ks[0]) | (tb.K == ks[-1])
        sl = tb.us[np.arange(len(tb.us)), pick] / tb.us[np.arange(len(tb.us)), tb.tuned]
        for name, m in (("pairs inside the range of N and K", ~edge),
                        ("pairs at its edges (%s)" % ", ".join(
                            "%d,%d" % p for p in sorted(set(zip(tb.N[edge].tolist(),
                                                                tb.K[edge].tolist())))), edge)):
            hit = (pick[m] == tb.tuned[m]) | (sl[m] <= 1.02)
            print("| %s: %d shapes | | %.1f%% | %.4fx | %.3fx | |" % (
                name, m.sum(), 100 * hit.mean(), np.exp(np.log(sl[m]).mean()), sl[m].max()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
