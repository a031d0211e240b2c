"""Per shape: cuBLASLt's kernel time (its GEMM kernel, plus splitKreduce when it runs one) and 17's
(the heuristic's instance), medians of ncu's gpu__time_duration over the launches of one run."""
import csv,glob,os,math,sys,statistics
D=sys.argv[1]
def rows(f):
    lines=open(f).read().splitlines()
    try: i=next(k for k,l in enumerate(lines) if l.startswith('"ID"'))
    except StopIteration: return []
    by={}
    for r in csv.DictReader(lines[i:]):
        d=by.setdefault(r['ID'],{'name':r['Kernel Name']}); d[r['Metric Name']]=float(r['Metric Value'].replace(',',''))
    return list(by.values())
gm=lambda v: math.exp(sum(map(math.log,v))/len(v))
out=[]
for f in sorted(glob.glob(D+'/lt/*.csv'), key=lambda p: tuple(map(int,os.path.basename(p)[:-4].split('_')))):
    m,n,k=map(int,os.path.basename(f)[:-4].split('_'))
    lt=rows(f); ours=rows(D+'/k/'+os.path.basename(f))
    g=[x['gpu__time_duration.sum']/1000 for x in lt if 'nvjet' in x['name'] or 'gemm' in x['name'].lower() and 'splitKreduce' not in x['name']]
    red=[x['gpu__time_duration.sum']/1000 for x in lt if 'splitKreduce' in x['name']]
    stages='4' if n>=24576 else '6'
    o=[x['gpu__time_duration.sum']/1000 for x in ours if f'<16, 64, {stages},' in x['name'] or ('<16, 64, 12,' in x['name'])]
    t_lt=statistics.median(g)+(statistics.median(red) if red else 0); t_o=statistics.median(o)
    names=sorted({x['name'].split('(')[0][:60] for x in lt if 'nvjet' in x['name']})
    out.append(((m,n,k),t_lt,t_o,len(red)>0))
    print((m,n,k), f"cuBLASLt {t_lt:7.2f}{' (+reduce)' if red else ''}  17 {t_o:7.2f}  lt/17 {t_lt/t_o:.3f}")
r=[a/b for _,a,b,_ in out]
print(f"geomean cuBLASLt/17 {gm(r):.3f}; 17 faster on {sum(x>1 for x in r)} of {len(r)}; min {min(r):.3f}")
nr=[a/b for _,a,b,red in out if not red]
print(f"without the shapes where cuBLASLt splits K in two kernels: {gm(nr):.3f} over {len(nr)}, min {min(nr):.3f}")
