/* An NVTX tool for the tests: NVTX_INJECTION64_PATH names this library,
 * NVTX calls InitializeInjectionNvtx2 on the first NVTX call of each
 * client, and the core and domain push/pop (with the domain, category
 * and string registrations that give them names) are replaced by
 * functions that log every event, one line each, tab-separated, to the
 * file $OPCOST_NVTX_LOG:
 *   <tid> domain <domain> <name>
 *   <tid> category <domain> <id> <name>
 *   <tid> push <domain> <category> <text>
 *   <tid> pop <domain>
 * where <domain> is "-" for the core (domain-less) calls. */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct nvtxDomainRegistration_st {
    char name[64];
};
struct nvtxStringRegistration_st {
    char text[256];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    pthread_mutex_lock(&lock);
    if (!out) {
        const char *path = getenv("OPCOST_NVTX_LOG");
        out = fopen(path && *path ? path : "/dev/null", "a");
    }
    if (out) {
        fprintf(out, "%ld\t", (long)syscall(SYS_gettid));
        va_list ap;
        va_start(ap, fmt);
        vfprintf(out, fmt, ap);
        va_end(ap);
        fputc('\n', out);
        fflush(out); /* the run may end in exit() or a crash */
    }
    pthread_mutex_unlock(&lock);
}

static const char *domain_name(nvtxDomainHandle_t d)
{
    return d ? d->name : "-";
}

static const char *text_of(const nvtxEventAttributes_t *a)
{
    if (!a)
        return "?";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return a->message.registered ? a->message.registered->text : "?";
    default: return "?";
    }
}

static nvtxDomainHandle_t NVTX_API domain_create(const char *name)
{
    nvtxDomainHandle_t d = calloc(1, sizeof *d);
    if (d)
        snprintf(d->name, sizeof d->name, "%s", name);
    logf_("domain\t%s\t%s", domain_name(d), name);
    return d;
}

static void NVTX_API name_category(nvtxDomainHandle_t d, uint32_t id,
                                   const char *name)
{
    logf_("category\t%s\t%u\t%s", domain_name(d), id, name);
}

static nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t d,
                                                   const char *s)
{
    (void)d;
    nvtxStringHandle_t h = calloc(1, sizeof *h);
    if (h)
        snprintf(h->text, sizeof h->text, "%s", s);
    return h;
}

static int NVTX_API domain_push(nvtxDomainHandle_t d,
                                const nvtxEventAttributes_t *a)
{
    logf_("push\t%s\t%u\t%s", domain_name(d), a ? a->category : 0, text_of(a));
    return 0;
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d)
{
    logf_("pop\t%s", domain_name(d));
    return 0;
}

static int NVTX_API core_push_ex(const nvtxEventAttributes_t *a)
{
    return domain_push(NULL, a);
}

static int NVTX_API core_push(const char *message)
{
    logf_("push\t-\t0\t%s", message);
    return 0;
}

static int NVTX_API core_pop(void)
{
    return domain_pop(NULL);
}

/* Replaces entry id of module m's table with f (if the table has it). */
static int patch(const NvtxExportTableCallbacks *cb, NvtxCallbackModule m,
                 unsigned id, NvtxFunctionPointer f)
{
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb->GetModuleFunctionTable(m, &table, &size) || !table || id >= size)
        return 0;
    *table[id] = f;
    return 1;
}

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    if (!cb)
        return 0;
    int ok = 1;
    ok &= patch(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA,
                FN(core_push));
    ok &= patch(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx,
                FN(core_push_ex));
    ok &= patch(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, FN(core_pop));
    ok &= patch(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA,
                FN(domain_create));
    ok &= patch(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainNameCategoryA,
                FN(name_category));
    ok &= patch(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA,
                FN(register_string));
    ok &= patch(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx,
                FN(domain_push));
    ok &= patch(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop,
                FN(domain_pop));
    return ok; /* 0 would make NVTX fall back to its no-ops */
}
