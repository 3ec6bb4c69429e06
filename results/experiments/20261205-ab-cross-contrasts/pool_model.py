"""What opcost ab's intervals would have been with other estimates of the
processes' spread, from a run's two files (<run>-ab.csv and its
.samples.csv, not committed: 50-70 MB each). For each new row: each side's
Helmert contrasts rebuilt from the samples (trimmed mean, block bootstrap
as bench/stats/paired.c), the rounds-only variance backed out of the row's
interval (its note says the spread that joined it), then the spread
re-derived, the interval, p, Benjamini-Hochberg and the verdict.
Modes (printed as the first column):
  all      a side's own contrasts, pooled over all B, chi-square gate (the
           engine until 2026-12-05: reproduces its intervals)
  xall     new's contrasts less base's of the same index, pooled over B, gate
  xband    the same pooled in and beyond half the LLC, gate
  xband3   pooled below half, half to twice, beyond twice the LLC, gate
  xallr    xall without the gate: a point above the path takes its own
  xband3r  xband3 without the gate
Usage: python pool_model.py results/<run>-ab.csv ... (numpy needed)."""
MODE_CROSS = False
import csv, math, statistics as st, sys, collections, re
LLC = 32 * 2**20
Z975 = 1.959963984540054
HNM = 0.6744897501960817
CHI99 = [6.635, 9.210, 11.345, 13.277, 15.086, 16.812, 18.475, 20.090,
         21.666, 23.209, 24.725, 26.217, 27.688, 29.141, 30.578, 32.000]

def excess(d, se):
    if len(d) < 2: return float('nan')
    def med(t): return st.median(abs(v) / math.sqrt(s*s + t*t) for v, s in zip(d, se))
    if med(0) <= HNM: return 0.0
    lo, hi = 0.0, 2 * max(abs(v) for v in d)
    for _ in range(60):
        mid = (lo + hi) / 2
        if med(mid) > HNM: lo = mid
        else: hi = mid
    return hi

def own(d, se, tau):
    t2 = 0 if math.isnan(tau) else tau*tau
    ex = sum(v*v - s*s for v, s in zip(d, se)); chi = sum(v*v/(s*s+t2) for v, s in zip(d, se))
    return math.sqrt(ex/len(d)) if chi > CHI99[len(d)-1] and ex > 0 else 0.0

OWNRAW=False
def ownraw(d, se, tau):
    ex = sum(v*v - s*s for v, s in zip(d, se))/len(d)
    return math.sqrt(ex) if ex > 0 else 0.0

def norm_p(z): return math.erfc(abs(z)/math.sqrt(2))

def bh(p):
    idx = sorted(range(len(p)), key=lambda i: p[i]); m = len(p); out = [0]*m; run = 1.0
    for rank in range(m-1, -1, -1):
        i = idx[rank]; run = min(run, p[i]*m/(rank+1)); out[i] = min(run, 1.0)
    return out

import numpy as np
RNG = np.random.default_rng(1)
def tmean(x, axis=-1):
    x = np.sort(x, axis=axis); n = x.shape[axis]; g = int(math.floor(0.2*n))
    return np.take(x, range(g, n-g), axis=axis).mean(axis=axis)
def lag1(d):
    n=len(d); g=int(math.floor(0.2*n)); s=np.sort(d); lo,hi=s[g],s[n-1-g]
    w=np.clip(d,lo,hi); a=w-w.mean(); den=(a*a).sum()
    return (a[:-1]*a[1:]).sum()/den if den>0 else 0.0
def est(d):
    d=np.asarray(d); n=len(d); c=tmean(d); rho=lag1(d)
    base=n**(1/3); l=math.ceil(base)
    if rho>0:
        r=min(rho,0.99); l=max(l, math.ceil((2*r/(1-r*r))**(2/3)*base))
    l=max(1,min(l,n//4)); starts=n-l+1
    nb=-(-n//l); idx=(RNG.integers(0,starts,(199,nb))[:,:,None]+np.arange(l)).reshape(199,-1)[:,:n]
    return c, tmean(d[idx]).std(ddof=1)
def contrasts(rounds, K):
    """Helmert contrasts of a side's K processes from per-round samples."""
    L = np.log(np.array([v for v in rounds if len(v) == K]))
    out = []
    for j in range(1, K):
        m, s = est(L[:, :j].mean(axis=1) - L[:, j])
        sc = math.sqrt(2*j/(j+1)); out.append((sc*m, sc*s))
    return out

def load(f):
    rows = list(csv.DictReader(open(f)))
    smp = collections.defaultdict(lambda: collections.defaultdict(list))
    for s in csv.DictReader(open(f.replace('-ab.csv', '-ab.samples.csv'))):
        smp[int(s['point'])][int(s['round'])].append(float(s['us']))
    return rows, smp

def kind(r): return (r['path'], r['variant'], r['op'], r['dtype'], r['layout'], r['N'])

def model(f, K, mode):
    rows, smp = load(f)
    base = {}
    for i, r in enumerate(rows):
        if r['side'] == 'base': base[kind(r) + (r['B'],)] = i
    recs = []
    for i, r in enumerate(rows):
        if r['side'] != 'new' or not r['ratio'] or not r['ratio_ci95_rel']: continue
        bi = base[kind(r) + (r['B'],)]
        cs = []
        sides = []
        for j in (bi, i):
            rr = smp[j]; sides.append(contrasts([rr[k] for k in sorted(rr)], K))
        if MODE_CROSS:
            cs = [((n[0]-b[0])/math.sqrt(2), math.sqrt((n[1]**2+b[1]**2)/2)) for b, n in zip(*sides)]
        else:
            cs = sides[0] + sides[1]
        m = re.search(r'\+-([0-9.]+)% a process', r['note'])
        t_used = math.log1p(float(m.group(1))/100)/Z975*math.sqrt(2) if m else 0
        se_tot = math.log1p(float(r['ratio_ci95_rel']))/Z975
        se_r2 = max(se_tot**2 - t_used**2/K, 1e-12)
        ws = int(r['working_set_bytes'])
        band = 'big' if ws*2 > LLC else 'small'
        band3 = 'small' if ws*2 <= LLC else 'mid' if ws <= 2*LLC else 'big'
        recs.append(dict(r=r, cs=cs, se_r2=se_r2, band=band, band3=band3, lr=math.log(float(r['ratio'])), se_tot=se_tot))
    groups = collections.defaultdict(list)
    for x in recs:
        g = kind(x['r']) + ((x['band'],) if mode == 'band' else (x['band3'],) if mode == 'band3' else ())
        groups[g].append(x)
    for g, xs in groups.items():
        d = [c[0] for x in xs for c in x['cs']]; s = [c[1] for x in xs for c in x['cs']]
        tau = excess(d, s)
        for x in xs:
            o = (ownraw if OWNRAW else own)([c[0] for c in x['cs']], [c[1] for c in x['cs']], tau)
            t = o if (math.isnan(tau) or o > tau) else tau
            x['se'] = math.sqrt(x['se_r2'] + t*t/K)
            x['p'] = norm_p(x['lr']/x['se'])
    padj = bh([x['p'] for x in recs])
    band = math.log1p(0.02)
    for x, p in zip(recs, padj):
        half = Z975*x['se']; lr = x['lr']
        if lr-half >= -band and lr+half <= band: v = 'same'
        elif p < 0.05 and lr >= band: v = 'slower'
        elif p < 0.05 and lr <= -band: v = 'faster'
        else: v = 'unsure'
        x['v'] = v; x['ci'] = math.expm1(half)
    return recs

def report(f, K, mode):
    global MODE_CROSS
    MODE_CROSS = mode.startswith('cross')
    global OWNRAW
    OWNRAW = mode.endswith('raw'); mode = mode.replace('raw','')
    mode = 'band3' if mode.endswith('band3') else 'band' if mode.endswith('band') else 'all'
    recs = model(f, K, mode)
    c = collections.Counter(x['v'] for x in recs)
    direct = [x for x in recs if x['r']['path'] in ('kernel', 'kernel-e2e', 'eager-cpp', 'eager-python')]
    zs = {b: [x['lr']/x['se'] for x in recs if x['band'] == b] for b in ('small', 'big')}
    print('%-32s %-5s slower %3d faster %2d same %3d unsure %3d | direct slower %3d/%d | med ci %.2f%% | z sd small %.2f big %.2f | ci small %.2f big %.2f' % (
        f[-32:], ('x' if MODE_CROSS else '')+mode+('r' if OWNRAW else ''), c['slower'], c['faster'], c['same'], c['unsure'], sum(x['v'] == 'slower' for x in direct), len(direct),
        100*st.median(x['ci'] for x in recs), st.pstdev(zs['small']), st.pstdev(zs['big']),
        100*st.median(x['ci'] for x in recs if x['band']=='small'), 100*st.median(x['ci'] for x in recs if x['band']=='big')))
    return recs

MODES=('all','cross','crossband','crossband3','crossraw','crossband3raw')
if __name__ == '__main__':
    K = 4
    for f in sys.argv[1:]:
        for mode in MODES:
            report(f, K, mode)
