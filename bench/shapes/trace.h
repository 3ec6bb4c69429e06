/* Reader of the Azure LLM inference trace CSV (Azure/AzurePublicDataset,
 * AzureLLMInferenceTrace_{conv,code}.csv; see shapes/traces/README.md).
 *
 * Header `TIMESTAMP,ContextTokens,GeneratedTokens`, then one request per
 * line: a timestamp `YYYY-MM-DD HH:MM:SS[.f]` with 1 to 7 fractional digits
 * (read exactly, in units of 100 ns, as UTC), the prompt length and the
 * output length, each an integer in 1..INT32_MAX. Timestamps must not
 * decrease. "\r\n" endings, a last line without a newline and blank lines
 * are accepted; anything else is an error naming file:line and the column. */
#ifndef OPCOST_TRACE_H
#define OPCOST_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define OPCOST_TRACE_HEADER "TIMESTAMP,ContextTokens,GeneratedTokens"

typedef struct opcost_request {
    double arrival_s;         /* seconds after the first request's arrival */
    int64_t context_tokens;   /* prompt tokens, >= 1 */
    int64_t generated_tokens; /* output tokens, >= 1 */
} opcost_request;

typedef struct opcost_trace {
    opcost_request *requests; /* in file (= arrival) order */
    size_t count;             /* >= 1 */
} opcost_trace;

/* Reads the trace at path. Returns 0, or -1 with a message like
 * "t.csv:5: column 'GeneratedTokens': must be an integer in 1..2147483647,
 * got '0'" in err (*out is then empty and needs no free). */
int opcost_trace_load(const char *path, opcost_trace *out, char *err,
                      size_t errlen);

void opcost_trace_free(opcost_trace *trace);

#endif
