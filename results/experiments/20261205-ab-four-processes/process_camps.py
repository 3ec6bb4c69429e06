"""Each worker process's mean log time against its side's mean, over the
rows of one opcost ab run with four processes a side (rebuilt from
RUN-ab.samples.csv, a row's samples merged by round, process 0 first), by
one set's size against half the LLC: which process of a side is off, and
how much.

    python3 process_camps.py RUN-ab.csv
"""
import csv,math,statistics,sys,collections
LLC=32*2**20
f=sys.argv[1]
rows=list(csv.DictReader(open(f)))
smp=collections.defaultdict(lambda: collections.defaultdict(list))
for s in csv.DictReader(open(f.replace('-ab.csv','-ab.samples.csv'))):
    smp[int(s['point'])][int(s['round'])].append(float(s['us']))
res=collections.defaultdict(list)
for i,r in enumerate(rows):
    A=smp[i]
    if not A: continue
    K=max(len(v) for v in A.values()); ks=[k for k in A if len(A[k])==K]
    if len(ks)<10 or K<4: continue
    m=[statistics.fmean(math.log(A[k][p]) for k in ks) for p in range(K)]
    m=[x-statistics.fmean(m) for x in m]
    band='big' if int(r['working_set_bytes'])*2>LLC else 'small'
    res[(band,r['side'])].append(m)
for k,v in sorted(res.items()):
    print(k,len(v),'mean dev per process %',[round(100*statistics.fmean(x[p] for x in v),3) for p in range(4)],'sd %',[round(100*statistics.pstdev([x[p] for x in v]),3) for p in range(4)])
