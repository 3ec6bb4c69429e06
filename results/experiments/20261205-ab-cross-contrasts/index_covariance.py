import sys, math, statistics as st, collections, numpy as np
sys.argv=[sys.argv[0]]
exec(open(__file__.rsplit('/', 1)[0] + '/pool_model.py' if '/' in __file__ else 'pool_model.py').read().split("if __name__")[0])
K=4
for f in ["20261205T012118Z-aa-k4h","20261205T014436Z-aa2-k4h","20261205T020657Z-aa3-k4h"]:
    rows, smp = load('results/%s-ab.csv'%f)
    base={}
    for i,r in enumerate(rows):
        if r['side']=='base': base[kind(r)+(r['B'],)]=i
    acc={'small':[], 'big':[]}
    for i,r in enumerate(rows):
        if r['side']!='new' or not r['ratio']: continue
        bi=base[kind(r)+(r['B'],)]
        eff=[]
        for j in (bi,i):
            rr=smp[j]; L=np.log(np.array([rr[k] for k in sorted(rr) if len(rr[k])==K]))
            m=L.mean(axis=0); eff.append(m-m.mean())
        band='big' if int(r['working_set_bytes'])*2>LLC else 'small'
        acc[band].append(np.concatenate(eff))
    for band,v in acc.items():
        E=np.array(v); C=(E.T@E)/len(E)
        var_b=np.trace(C[:4,:4])/4; var_n=np.trace(C[4:,4:])/4
        cross=C[:4,4:]
        print(f[9:15],band,'n',len(E),'var base %.2e new %.2e'%(var_b,var_n),'cross-cov diag/var: ',np.round(np.diag(cross)/((var_b+var_n)/2),2), 'off-diag mean %.2f'%((cross.sum()-np.trace(cross))/12/((var_b+var_n)/2)))
        # side-internal covariance structure
        print('   base within corr', np.round(C[:4,:4]/np.sqrt(np.outer(np.diag(C[:4,:4]),np.diag(C[:4,:4]))),2).tolist())
