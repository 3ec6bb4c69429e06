/* The CUDA kernels' resources against every launch their launchers can
 * choose, without a GPU.
 *
 * Input: the directory scripts/nvcc-resources.sh fills while the kernels
 * are compiled (one folder per .cu: ptxas.txt, ptxas's -v report of the
 * objects that are linked, and the PTX, whose .maxntid is each kernel's
 * __launch_bounds__). For sm_80 and sm_90, every kernel must
 *   - declare __launch_bounds__ (else a launch may use 1024 threads),
 *   - fit one block: registers (allocated per warp, 256 at a time) x
 *     threads <= 65536, static shared memory <= 48 KiB, static + dynamic
 *     <= the architecture's opt-in limit,
 *   - have no stack frame and no spill bytes;
 * and every launch rowops_cuda_*_launch returns over the eligible (op,
 * dtype, weight dtype, N, vector width) range must name a kernel of the
 * report, with the block size of its __launch_bounds__ and at least one
 * resident block per SM. A kernel no launch names fails too.
 *   usage: test_cuda_resources DIR */
#include "c_samples.h"
#include "cuda/launch_config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KERNELS 1024

typedef struct kernel {
    char name[128];
    int arch; /* 80 or 90 */
    int regs, smem, stack, spill_stores, spill_loads;
    int maxntid; /* 0: no __launch_bounds__ */
    int claimed;
    unsigned max_threads, min_threads;
    size_t max_dyn;
    char example[96]; /* a launch that needs max_dyn */
} kernel;

static kernel K[MAX_KERNELS];
static int nk;

static kernel *find(const char *name, int arch, int add)
{
    for (int i = 0; i < nk; ++i)
        if (K[i].arch == arch && strcmp(K[i].name, name) == 0)
            return &K[i];
    if (!add || nk == MAX_KERNELS)
        return NULL;
    kernel *k = &K[nk++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->arch = arch;
    k->min_threads = ~0u;
    return k;
}

static int max_i(int a, int b)
{
    return a > b ? a : b;
}

static void parse_report(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    kernel *cur = NULL, *props = NULL;
    while (fgets(line, sizeof line, f)) {
        char name[128];
        int arch, a, b, c;
        const char *p;
        /* a space in the format matches any run of spaces */
        if (sscanf(line,
                   "ptxas info : Compiling entry function '%127[^']' for "
                   "'sm_%d'",
                   name, &arch) == 2) {
            cur = find(name, arch, 1);
            props = NULL;
        } else if ((p = strstr(line, "Function properties for ")) != NULL) {
            if (sscanf(p, "Function properties for %127s", name) == 1 && cur)
                props = find(name, cur->arch, 0);
        } else if (sscanf(line,
                          " %d bytes stack frame, %d bytes spill stores, %d "
                          "bytes spill loads",
                          &a, &b, &c) == 3) {
            if (props) {
                props->stack = max_i(props->stack, a);
                props->spill_stores = max_i(props->spill_stores, b);
                props->spill_loads = max_i(props->spill_loads, c);
            }
        } else if ((p = strstr(line, "Used ")) != NULL && cur &&
                   sscanf(p, "Used %d registers", &a) == 1) {
            cur->regs = max_i(cur->regs, a);
            const char *s = strstr(line, " bytes smem");
            if (s) {
                while (s > line && s[-1] >= '0' && s[-1] <= '9')
                    --s;
                cur->smem = max_i(cur->smem, atoi(s));
            }
        }
    }
    fclose(f);
}

/* .maxntid of every .entry in one PTX file (arch from its name). */
static void parse_ptx(const char *path)
{
    const char *c = strstr(path, "compute_");
    if (!c)
        return;
    const int arch = atoi(c + 8);
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        free(text);
        fclose(f);
        return;
    }
    text[len] = '\0';
    fclose(f);
    for (char *e = strstr(text, ".entry "); e; e = strstr(e + 1, ".entry ")) {
        char name[128];
        if (sscanf(e, ".entry %127[A-Za-z0-9_$](", name) != 1)
            continue;
        char *body = strchr(e, '{');
        if (!body)
            break;
        const char saved = *body;
        *body = '\0';
        const char *m = strstr(e, ".maxntid");
        int x = 1, y = 1, z = 1;
        kernel *k = find(name, arch, 1);
        if (m && sscanf(m, ".maxntid %d, %d, %d", &x, &y, &z) >= 1 && k)
            k->maxntid = x * y * z;
        *body = saved;
    }
    free(text);
}

static int read_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int reports = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.')
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", dir, ent->d_name);
        DIR *s = opendir(sub);
        if (!s)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/ptxas.txt", sub);
        FILE *probe = fopen(path, "r");
        if (probe) {
            fclose(probe);
            parse_report(path);
            ++reports;
        }
        struct dirent *f;
        while ((f = readdir(s)) != NULL) {
            const size_t n = strlen(f->d_name);
            if (n > 4 && strcmp(f->d_name + n - 4, ".ptx") == 0) {
                snprintf(path, sizeof path, "%s/%s", sub, f->d_name);
                parse_ptx(path);
            }
        }
        closedir(s);
    }
    closedir(d);
    return reports;
}

/* Registers a block of `threads` holds (allocated per warp, 256 at a time). */
static long block_regs(int regs, unsigned threads)
{
    const long per_warp = ((long)regs * 32 + 255) / 256 * 256;
    return per_warp * (long)((threads + 31) / 32);
}

static const rowops_cuda_device *device_of(int arch)
{
    static rowops_cuda_device a, h;
    a = rowops_cuda_device_sm80(108);
    h = rowops_cuda_device_sm90(132);
    return arch == 80 ? &a : &h;
}

static rowops_cuda_kernel_attr attr_of(const char *name, int arch)
{
    const kernel *k = find(name, arch, 0);
    rowops_cuda_kernel_attr at = {k ? k->regs : 0, k ? k->smem : 0};
    return at;
}

static int missing;

static void claim(const char *name, int arch, rowops_cuda_launch l,
                  const char *example)
{
    kernel *k = find(name, arch, 0);
    if (!k) {
        if (missing++ < 20)
            C_EXPECT(0,
                     "%s (sm_%d): launched for %s but not in the ptxas "
                     "report",
                     name, arch, example);
        return;
    }
    k->claimed = 1;
    if (l.threads > k->max_threads)
        k->max_threads = l.threads;
    if (l.threads < k->min_threads)
        k->min_threads = l.threads;
    if (l.smem > k->max_dyn || !k->example[0]) {
        if (l.smem >= k->max_dyn)
            snprintf(k->example, sizeof k->example, "%s", example);
        if (l.smem > k->max_dyn)
            k->max_dyn = l.smem;
    }
}

static void claim_all(int arch)
{
    static const rowops_dtype fdts[3] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16};
    const rowops_cuda_device *dev = device_of(arch);
    char name[128], example[96];
    for (int op = 0; op < ROWOPS_OP_COUNT; ++op) {
        const int fused = op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
        /* fast: every N of the one-pass range, every vector that divides
         * it (the gcd rule can pick any of them, by pointer alignment) */
        for (int d = 0; d < 3; ++d) {
            const rowops_dtype dt = fdts[d];
            const int64_t es = (int64_t)rowops_dtype_size(dt);
            const rowops_dtype wdts[2] = {dt, ROWOPS_F32};
            const int nw = fused && dt != ROWOPS_F32 ? 2 : 1;
            for (int w = 0; w < nw; ++w) {
                for (int vec = 1; vec * es <= 16; vec *= 2) {
                    rowops_cuda_kernel_name(ROWOPS_CUDA_FAST_KERNEL,
                                            (rowops_op)op, dt, wdts[w], vec,
                                            name, sizeof name);
                    const rowops_cuda_kernel_attr at = attr_of(name, arch);
                    const int64_t limit = rowops_one_pass_limit(dt);
                    for (int64_t n = vec; n <= limit; n += vec) {
                        const rowops_cuda_launch l = rowops_cuda_fast_launch(
                            dev, at, dt, n, vec, 1 << 20);
                        snprintf(example, sizeof example,
                                 "N = %lld, %d-element vectors", (long long)n,
                                 vec);
                        claim(name, arch, l, example);
                    }
                }
            }
        }
        /* tile kernels: every dtype; block and shared memory do not depend
         * on N, tried at a few */
        static const rowops_dtype tdts[4] = {ROWOPS_F32, ROWOPS_F16,
                                             ROWOPS_BF16, ROWOPS_F64};
        static const int64_t ns[4] = {0, 1, 4097, 1 << 20};
        for (int d = 0; d < 4; ++d) {
            const rowops_dtype dt = tdts[d];
            const rowops_dtype wdts[2] = {dt, ROWOPS_F32};
            const int nw = fused && dt != ROWOPS_F32 ? 2 : 1;
            for (int w = 0; w < nw; ++w) {
                for (int kind = ROWOPS_CUDA_STRIDED_KERNEL;
                     kind <= ROWOPS_CUDA_BACKWARD_KERNEL; ++kind) {
                    rowops_cuda_kernel_name((rowops_cuda_kernel_kind)kind,
                                            (rowops_op)op, dt, wdts[w], 1, name,
                                            sizeof name);
                    const rowops_cuda_kernel_attr at = attr_of(name, arch);
                    for (int i = 0; i < 4; ++i)
                        for (int rf = 0; rf < 2; ++rf) {
                            snprintf(example, sizeof example, "N = %lld",
                                     (long long)ns[i]);
                            claim(name, arch,
                                  rowops_cuda_tile_launch(
                                      dev, at, (rowops_cuda_kernel_kind)kind,
                                      ns[i], 1000, rf),
                                  example);
                        }
                }
                if (fused) {
                    rowops_cuda_kernel_name(ROWOPS_CUDA_DWEIGHT_KERNEL,
                                            (rowops_op)op, dt, wdts[w], 1, name,
                                            sizeof name);
                    claim(name, arch, rowops_cuda_dweight_launch(4096),
                          "N = 4096");
                }
            }
        }
    }
}

static void check_kernel(kernel *k, int *bad)
{
    const rowops_cuda_device *dev = device_of(k->arch);
    const int before = c_failures;
    if (!k->maxntid)
        C_EXPECT(0,
                 "%s (sm_%d): no __launch_bounds__, so a launch may ask for "
                 "1024 threads: %d registers x 1024 = %ld %s 65536",
                 k->name, k->arch, k->regs, block_regs(k->regs, 1024),
                 block_regs(k->regs, 1024) > 65536 ? ">" : "<=");
    if (!k->claimed) {
        C_EXPECT(0,
                 "%s (sm_%d): no launch configuration names this kernel, so "
                 "its block sizes are unchecked",
                 k->name, k->arch);
    } else {
        C_EXPECT(k->max_threads == (unsigned)k->maxntid &&
                     k->min_threads == (unsigned)k->maxntid,
                 "%s (sm_%d): __launch_bounds__(%d) but launched with %u to "
                 "%u threads",
                 k->name, k->arch, k->maxntid, k->min_threads, k->max_threads);
        const long regs = block_regs(k->regs, k->max_threads);
        C_EXPECT(regs <= 65536,
                 "%s (sm_%d): %d registers x %u threads = %ld > 65536", k->name,
                 k->arch, k->regs, k->max_threads, regs);
        C_EXPECT((long)k->smem + (long)k->max_dyn <=
                     (long)dev->smem_per_block_optin,
                 "%s (sm_%d): %d + %zu bytes of shared memory (%s) > %d",
                 k->name, k->arch, k->smem, k->max_dyn, k->example,
                 dev->smem_per_block_optin);
        const rowops_cuda_kernel_attr at = {k->regs, k->smem};
        C_EXPECT(
            rowops_cuda_blocks_per_sm(dev, at, k->max_threads, k->max_dyn) >= 1,
            "%s (sm_%d): no block fits a multiprocessor (%s)", k->name, k->arch,
            k->example);
    }
    C_EXPECT(k->smem <= 48 * 1024,
             "%s (sm_%d): %d bytes of static shared memory > 48 KiB", k->name,
             k->arch, k->smem);
    C_EXPECT(k->stack == 0 && k->spill_stores == 0 && k->spill_loads == 0,
             "%s (sm_%d): %d bytes stack, %d bytes spill stores, %d bytes "
             "spill loads",
             k->name, k->arch, k->stack, k->spill_stores, k->spill_loads);
    if (c_failures != before)
        ++*bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cuda_resources DIR\n");
        return 2;
    }
    const int reports = read_dir(argv[1]);
    C_EXPECT(reports > 0,
             "%s: no ptxas reports (build the CUDA kernels through "
             "scripts/nvcc-resources.sh)",
             argv[1]);
    claim_all(80);
    claim_all(90);
    int bad = 0;
    printf("%-36s %5s %4s %7s %7s %6s %6s %7s %4s %s\n", "kernel", "arch",
           "regs", "threads", "regs*thr", "static", "dyn", "blk/SM", "stk",
           "spill st/ld");
    for (int i = 0; i < nk; ++i) {
        kernel *k = &K[i];
        check_kernel(k, &bad);
        const rowops_cuda_kernel_attr at = {k->regs, k->smem};
        const unsigned thr = k->claimed ? k->max_threads : 1024;
        printf(
            "%-36s sm_%d %4d %7u %7ld %6d %6zu %7d %4d %d/%d\n", k->name,
            k->arch, k->regs, thr, block_regs(k->regs, thr), k->smem,
            k->max_dyn,
            rowops_cuda_blocks_per_sm(device_of(k->arch), at, thr, k->max_dyn),
            k->stack, k->spill_stores, k->spill_loads);
    }
    printf("%d kernel builds checked, %d with a problem\n", nk, bad);
    return c_report("test_cuda_resources");
}
