"""maps.py PREFIX: the scratch runs' sweeps (PREFIX_sweep_<pass>_<variant>.csv.gz) against 16's pick
(variant 'auto' or '16') and cuBLASLt (PREFIX_anchor.csv, and PREFIX_anchor2.csv if there): per
variant and instance, the geomean time against 16 and cuBLASLt's time over ours; per shape, the best."""
import csv,sys,math,glob,os,collections,gzip
P=sys.argv[1]
def load(f): return {(int(r['M']),int(r['N']),int(r['K'])):r for r in csv.DictReader(open(f))}
anc=load(P+'_anchor.csv'); anc2=load(P+'_anchor2.csv') if os.path.exists(P+'_anchor2.csv') else anc
def pick(M,N,K): return 'a8w8_bs_16x64_w1x4_s4' if N>=24576 else 'a8w8_bs_16x64_w1x4_s6'
t=collections.defaultdict(list)
for f in sorted(glob.glob(P+'_sweep_*.csv.gz')):
    var=os.path.basename(f)[len(P)+7:-7].split('_',1)[1]
    for r in csv.DictReader(gzip.open(f,'rt')):
        s=(int(r['M']),int(r['N']),int(r['K']))
        t[(s,r['kernel'].replace('a8w8_bs_','').replace('_w1x4',''),var)].append(float(r['us']))
med=lambda v: sorted(v)[len(v)//2]
gm=lambda v: math.exp(sum(map(math.log,v))/len(v))
shapes=sorted(anc)
combos=sorted({(k,v) for (s,k,v) in t})
lt={s:(float(anc[s]['us_lt'])*float(anc2[s]['us_lt']))**0.5 for s in shapes}
ref='auto' if any(v=='auto' for (_,_,v) in t) else '16'
base={s:med(t[(s,pick(*s).replace('a8w8_bs_','').replace('_w1x4',''),ref)]) for s in shapes}
print('combo            vs16   lt/ours faster')
for c in combos:
    o={s:med(t[(s,)+c]) for s in shapes}
    print(f"{c[0]:8s} {c[1]:5s} {gm([o[s]/base[s] for s in shapes]):.3f}  {gm([lt[s]/o[s] for s in shapes]):.3f}  {sum(lt[s]>o[s] for s in shapes)}")
print('16 pick lt/ours', f"{gm([lt[s]/base[s] for s in shapes]):.3f}", sum(lt[s]>base[s] for s in shapes))
print('anchor a vs b lt', f"{gm([float(anc[s]['us_lt'])/float(anc2[s]['us_lt']) for s in shapes]):.3f}")
best={}
print('shape, cuBLASLt, 16, best (instance, variant), its us, cuBLASLt / it; best unsplit (s1)')
for s in shapes:
    o={c:med(t[(s,)+c]) for c in combos}
    b=min(o,key=o.get)
    ns={c:v for c,v in o.items() if c[1]=='s1'}; bn=min(ns,key=ns.get) if ns else None
    best[s]=o[b]
    print(s, f"{lt[s]:7.2f} {base[s]:7.2f}", b, f"{o[b]:7.2f} {lt[s]/o[b]:.3f}", '|', bn, f"{ns[bn]:7.2f}" if ns else '')
print('oracle lt/best', f"{gm([lt[s]/best[s] for s in shapes]):.3f}")
