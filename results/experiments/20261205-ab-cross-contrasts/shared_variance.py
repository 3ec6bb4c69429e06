import sys, math, statistics as st, collections
sys.argv=[sys.argv[0]]
exec(open(__file__.rsplit('/', 1)[0] + '/pool_model.py' if '/' in __file__ else 'pool_model.py').read().split("if __name__")[0])
K=4
for f in ["20261205T012118Z-aa-k4h","20261205T014436Z-aa2-k4h","20261205T020657Z-aa3-k4h"]:
    recs = model('results/%s-ab.csv'%f, K, 'all')
    for band in ('small','big'):
        for p in ('kernel','kernel-e2e','eager-cpp','eager-python','compiled-python'):
            xs=[x for x in recs if x['band']==band and x['r']['path']==p]
            lr2=st.fmean(x['lr']**2 for x in xs); ser2=st.fmean(x['se_r2'] for x in xs)
            dd=[c for x in xs for c in x['cs']]
            cv=st.fmean(d*d-s*s for d,s in dd)  # contrast excess var = 2 sigma^2
            print('%s %-5s %-15s n=%3d  A/A lr^2 %.2e  rounds se^2 %.2e  contrast-excess/K*... %.2e  (lr^2-se_r^2)=%.2e  model 2s^2/K=%.2e' % (f[9:15],band,p,len(xs),lr2,ser2,cv,lr2-ser2,cv/K))
