import csv,sys,collections
tabs={}
for f in sys.argv[1:]:
    d={}
    for r in csv.DictReader(open(f)):
        if r['variant']=='cpu_fast_avx512' and r['ratio']:
            d[(r['op'][:5],r['dtype'],int(r['B']))]=(float(r['ratio']),float(r['ratio_ci95_rel']),r['paired_with'])
    tabs[f.split('/')[-1][:-4]]=d
keys=sorted(next(iter(tabs.values())),key=lambda k:(k[0],k[1],k[2]))
print('avx512 / avx2 time (paired), op dtype B :', ' '.join(tabs))
for k in keys:
    print('%-5s %-8s %5d '%k + ' '.join('%.3f±%.1f%%'%(tabs[t][k][0],100*tabs[t][k][1]) if k in tabs[t] else '   -   ' for t in tabs))
print(next(iter(tabs.values()))[keys[0]][2])
