"""Offline re-evaluation of one change to opcost ab's interval: the
spread between processes pooled per (path, dtype, layout) over all B, as
ab_verdicts.c does ("current"), against pooled separately for points whose
one input set is above / below half the 32 MiB LLC ("split"). Contrasts
rebuilt from the samples (process_contrasts.py; their se from 10 batch
means, rougher than the engine's), each row's rounds-only variance backed
out of its interval and note. A model, not the engine: it read current's
median interval 1.07-1.17 % where the engine wrote 1.00-1.02 %.

    python3 pool_by_size.py RUN-ab.csv [...]
"""
import collections
import csv
import math
import re
import statistics
import sys
HALF=0.6744897501960817
CHI=[6.635,9.210,11.345,13.277]
def excess(d,se):
    if len(d)<4: return float('nan')
    def med(t): return statistics.median(abs(x)/math.sqrt(s*s+t*t) for x,s in zip(d,se))
    if med(0)<=HALF: return 0.0
    lo,hi=0,2*max(abs(x) for x in d)
    for _ in range(60):
        mid=(lo+hi)/2
        if med(mid)>HALF: lo=mid
        else: hi=mid
    return hi
def own(d,se,tau):
    t2=0 if math.isnan(tau) else tau*tau
    ex=sum(x*x-s*s for x,s in zip(d,se)); chi=sum(x*x/(s*s+t2) for x,s in zip(d,se))
    return math.sqrt(ex/len(d)) if chi>CHI[len(d)-1] and ex>0 else 0
LLC=32*2**20
def run(f, split):
    rows=list(csv.DictReader(open(f)))
    smp=collections.defaultdict(lambda: collections.defaultdict(list))
    for s in csv.DictReader(open(f.replace('-ab.csv','-ab.samples.csv'))):
        smp[int(s['point'])][int(s['round'])].append(float(s['us']))
    con={}
    for i,r in enumerate(rows):
        v=[math.log(a[0]/a[1]) for a in smp[i].values() if len(a)==2]
        if len(v)<10: continue
        nb=10;L=len(v)//nb
        bm=[statistics.fmean(v[j*L:(j+1)*L]) for j in range(nb)]
        con[i]=(statistics.fmean(v),statistics.stdev(bm)/math.sqrt(nb))
    key=lambda r:(r['path'],r['variant'],r['op'],r['dtype'],r['layout'],r['N'])+((int(r['working_set_bytes'])*2>LLC,) if split else ())
    # twin index: new row i and base row with same point (rows alternate base,new per member?)
    base={}
    for i,r in enumerate(rows):
        if r['side']=='base': base[(r['path'],r['variant'],r['dtype'],r['layout'],r['B'])]=i
    groups=collections.defaultdict(list)
    for i,r in enumerate(rows):
        if i in con: groups[key(r)].append(con[i])
    tau={k:excess([c[0] for c in v],[c[1] for c in v]) for k,v in groups.items()}
    res=[]
    for i,r in enumerate(rows):
        if r['side']!='new' or not r['ratio']: continue
        j=base.get((r['path'],r['variant'],r['dtype'],r['layout'],r['B']))
        cs=[con[x] for x in (i,j) if x in con]
        t=tau[key(r)]
        o=own([c[0] for c in cs],[c[1] for c in cs],t) if cs else 0
        tt=o if (math.isnan(t) or o>t) else t
        # back out rounds se using the engine's own t from the note
        m=re.search(r'\+-([0-9.]+)% a process',r['note'])
        te=math.log1p(float(m.group(1))/100)/1.96*math.sqrt(2) if m else 0
        se=math.log1p(float(r['ratio_ci95_rel']))/1.96
        ser2=max(se*se-te*te/2,1e-12)
        s2=math.sqrt(ser2+tt*tt/2)
        res.append((r,math.log(float(r['ratio'])),s2))
    return res
for split in (0,1):
    print('split' if split else 'current')
    for f in sys.argv[1:]:
        res=run(f,split)
        z=[lr/s for r,lr,s in res]
        big=[lr/s for r,lr,s in res if int(r['working_set_bytes'])*2>LLC]
        sm=[lr/s for r,lr,s in res if int(r['working_set_bytes'])*2<=LLC]
        ci=[math.expm1(1.96*s) for r,lr,s in res]
        # verdict approx: slower if lower bound > 1 and lr > log(1.02)?? use: significant & beyond threshold
        slow=sum(1 for r,lr,s in res if lr-1.96*s>0 and lr>math.log(1.02))
        fast=sum(1 for r,lr,s in res if lr+1.96*s<0 and lr<-math.log(1.02))
        det=sum(1 for r,lr,s in res if r['path']!='compiled-python' and lr-1.96*s>math.log(1.0) and lr>math.log(1.0)+0 and lr-1.96*s>0)
        print('  %-45s median ci %.4f  z sd big %.2f small %.2f  |z|>1.96 %d  slower~%d faster~%d  sig>1(direct) %d'%(f[-45:],statistics.median(ci),statistics.pstdev(big),statistics.pstdev([x for x in sm if abs(x)<20]),sum(abs(x)>1.96 for x in z),slow,fast,det))
