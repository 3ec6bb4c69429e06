/* NVTX ranges of a run (nvtx_ranges.h). */
#include "nvtx_ranges.h"

#ifdef OPCOST_HAVE_NVTX

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32
#define MAX_REGISTERED 128

static const char *const level_names[] = {"?",     "run",  "distribution",
                                          "shape", "path", "phase"};
/* Nsight colours by level: the outer ranges dark, the phases bright */
static const uint32_t level_colors[] = {0xff808080, 0xff303030, 0xff1f4e79,
                                        0xff2e75b6, 0xff548235, 0xffc55a11};
static const char *const fixed_names[] = {"run",        "calibrate", "warm-up",
                                          "repetition", "verify",    "convert",
                                          "attribute"};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static nvtxDomainHandle_t domain;
static struct {
    char *text;
    nvtxStringHandle_t handle;
} registered[MAX_REGISTERED];
static int nregistered;

static _Thread_local int stack[MAX_DEPTH];
static _Thread_local int depth;
static atomic_long mismatches;

/* A registered string for text, registered on first use; NULL when the
 * table is full (the text then goes as ASCII). Under lock. */
static nvtxStringHandle_t string_for(const char *text)
{
    for (int i = 0; i < nregistered; ++i)
        if (strcmp(registered[i].text, text) == 0)
            return registered[i].handle;
    if (nregistered == MAX_REGISTERED)
        return NULL;
    char *copy = malloc(strlen(text) + 1);
    if (!copy)
        return NULL;
    strcpy(copy, text);
    registered[nregistered].text = copy;
    registered[nregistered].handle = nvtxDomainRegisterStringA(domain, copy);
    return registered[nregistered++].handle;
}

static void init(void)
{
    domain = nvtxDomainCreateA("opcost");
    for (int l = OPCOST_NVTX_RUN; l <= OPCOST_NVTX_PHASE; ++l)
        nvtxDomainNameCategoryA(domain, (uint32_t)l, level_names[l]);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < sizeof fixed_names / sizeof fixed_names[0]; ++i)
        string_for(fixed_names[i]);
    pthread_mutex_unlock(&lock);
}

static const char *name_of(int level)
{
    return level >= OPCOST_NVTX_RUN && level <= OPCOST_NVTX_PHASE
               ? level_names[level]
               : level_names[0];
}

static void mismatch(const char *what, int level)
{
    if (atomic_fetch_add(&mismatches, 1) == 0)
        fprintf(stderr, "opcost: nvtx: %s of a %s range while %s\n", what,
                name_of(level),
                depth ? name_of(stack[depth - 1]) : "none is open");
}

static void push_text(opcost_nvtx_level level, const char *text)
{
    pthread_once(&once, init);
    if (depth > 0) {
        const int top = stack[depth - 1];
        if (!((int)level > top ||
              (level == OPCOST_NVTX_PHASE && top == OPCOST_NVTX_PHASE)))
            mismatch("push", level);
    }
    if (depth == MAX_DEPTH) {
        mismatch("push (too deep)", level);
        return; /* not pushed: its pop is counted too */
    }
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = (uint32_t)level;
    a.colorType = NVTX_COLOR_ARGB;
    a.color =
        level_colors[level >= OPCOST_NVTX_RUN && level <= OPCOST_NVTX_PHASE
                         ? level
                         : 0];
    /* the fixed levels' names are few: registered, the rest dynamic */
    nvtxStringHandle_t h = NULL;
    if (level == OPCOST_NVTX_RUN || level == OPCOST_NVTX_PATH ||
        level == OPCOST_NVTX_PHASE) {
        pthread_mutex_lock(&lock);
        h = string_for(text);
        pthread_mutex_unlock(&lock);
    }
    if (h) {
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = h;
    } else {
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = text;
    }
    stack[depth++] = (int)level;
    nvtxDomainRangePushEx(domain, &a);
}

void opcost_nvtx_push(opcost_nvtx_level level, const char *name)
{
    push_text(level, name ? name : "?");
}

void opcost_nvtx_pushf(opcost_nvtx_level level, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    push_text(level, text);
}

void opcost_nvtx_push_path(const char *path, const char *variant)
{
    if (!variant || strcmp(variant, "auto") == 0)
        push_text(OPCOST_NVTX_PATH, path ? path : "?");
    else
        opcost_nvtx_pushf(OPCOST_NVTX_PATH, "%s/%s", path ? path : "?",
                          variant);
}

void opcost_nvtx_pop(opcost_nvtx_level level)
{
    if (depth == 0) {
        mismatch("pop", level);
        return; /* nothing of ours to pop */
    }
    if (stack[depth - 1] != (int)level)
        mismatch("pop", level);
    --depth;
    nvtxDomainRangePop(domain);
}

int opcost_nvtx_depth(void)
{
    return depth;
}

long opcost_nvtx_mismatches(void)
{
    return atomic_load(&mismatches);
}

#else /* no NVTX headers: no ranges */

void opcost_nvtx_push(opcost_nvtx_level level, const char *name)
{
    (void)level;
    (void)name;
}

void opcost_nvtx_pushf(opcost_nvtx_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

void opcost_nvtx_push_path(const char *path, const char *variant)
{
    (void)path;
    (void)variant;
}

void opcost_nvtx_pop(opcost_nvtx_level level)
{
    (void)level;
}

int opcost_nvtx_depth(void)
{
    return 0;
}

long opcost_nvtx_mismatches(void)
{
    return 0;
}

#endif
