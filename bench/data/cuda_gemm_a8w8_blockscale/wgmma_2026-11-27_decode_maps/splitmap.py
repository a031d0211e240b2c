import csv, math, sys, collections, os
d=sys.argv[1]
anchor={(int(r['M']),int(r['N']),int(r['K'])):r for r in csv.DictReader(open(d+'/anchor.csv'))}
T=collections.defaultdict(list)  # (shape, kernel, s) -> [us]
for f in os.listdir(d):
    if not f.startswith('sweep_') or not f.endswith('.csv'): continue
    s=int(f.split('_s')[1][:-4])
    for r in csv.DictReader(open(d+'/'+f)):
        T[((int(r['M']),int(r['N']),int(r['K'])),r['kernel'],s)].append(float(r['us']))
med=lambda l: sorted(l)[len(l)//2] if len(l)%2 else sum(sorted(l)[len(l)//2-1:len(l)//2+1])/2
kern=sys.argv[2] if len(sys.argv)>2 else 'a8w8_bs_16x64_w1x4_s6'
shapes=sorted({k[0] for k in T})
S=range(0,9)
print('kernel',kern)
print('%-20s %6s '%('shape','lt')+' '.join('%6s'%('s%d'%s) for s in S)+'  best')
for sh in shapes:
    lt=float(anchor[sh]['us_lt'])
    row=[med(T[(sh,kern,s)]) if T[(sh,kern,s)] else float('nan') for s in S]
    b=min(range(1,9),key=lambda s: row[s])
    print('%-20s %6.2f '%(sh,lt)+' '.join('%6.2f'%x for x in row)+'  s%d %.3f of s0, lt/best %.3f'%(b,row[b]/row[0],lt/row[b]))
