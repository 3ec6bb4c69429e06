# The peers against rowops: per shape, a peer's paired ratio to rowops' op
# of the same form (peer-X / eager-python, peer-X-inplace /
# eager-python-inplace; above 1 rowops is faster), with its 95% interval,
# against the shape dimension that varies in each panel (log x); one panel
# per (dtype, layout). Drawn as variants.gp draws its ratios.
#
# Data: per panel, one block per peer: columns x ratio lo hi B N
# Parameters: as variants.gp (baseline, whiskers).
d = ARG0; i = strlen(d)
while (i > 0 && d[i:i] ne "/") { i = i - 1 }
load (i > 0 ? d[1:i] : "")."variants.gp"
