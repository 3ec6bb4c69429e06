/* Reader of the Azure LLM inference trace CSV; the format is in trace.h. */
#include "trace.h"
#include "errorf.h"

#include "shape_file.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICKS_PER_S 10000000 /* 100 ns: the traces' 7 fractional digits */
#define QUOTE_MAX 80

/* Exactly n decimal digits at s. */
static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; ++i) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30,
                                 31, 31, 30, 31, 30, 31};
    const int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (H. Hinnant's
 * days_from_civil). C11 has no UTC timegm, and mktime would apply the
 * local time zone and its daylight-saving jumps. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The timestamp in 100 ns ticks since 1970; NULL, or the rule broken. */
static const char *parse_timestamp(const char *s, int64_t *ticks)
{
    int y, mo, d, h, mi, sec;
    if (digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
        s[7] != '-' || digits(s + 8, 2, &d) || s[10] != ' ' ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) ||
        s[16] != ':' || digits(s + 17, 2, &sec))
        return "must look like 'YYYY-MM-DD HH:MM:SS[.fffffff]'";
    const char *p = s + 19;
    int64_t frac = 0;
    if (*p == '.') {
        int n = 0;
        for (++p; isdigit((unsigned char)*p) && n <= 7; ++p, ++n)
            frac = frac * 10 + (*p - '0');
        if (n < 1 || n > 7)
            return "must have 1 to 7 fractional digits of a second";
        for (; n < 7; ++n)
            frac *= 10;
    }
    if (*p)
        return "must look like 'YYYY-MM-DD HH:MM:SS[.fffffff]' and end there";
    if (mo < 1 || mo > 12)
        return "month must be 01..12";
    if (d < 1 || d > days_in_month(y, mo))
        return "day must exist in its month";
    if (h > 23 || mi > 59 || sec > 59)
        return "time of day must be 00:00:00..23:59:59";
    const int64_t s_of_day = (int64_t)h * 3600 + mi * 60 + sec;
    *ticks =
        (days_from_civil(y, mo, d) * 86400 + s_of_day) * TICKS_PER_S + frac;
    return NULL;
}

static int parse_tokens(const char *path, int lineno, const char *col,
                        const char *s, int64_t *v, char *err, size_t errlen)
{
    if (opcost_parse_count(s, v) == 0 && *v <= INT32_MAX)
        return 0;
    return opcost_errorf(
        err, errlen,
        "%s:%d: column '%s': must be an integer in 1..%ld, got "
        "'%.*s%s'",
        path, lineno, col, (long)INT32_MAX, QUOTE_MAX, s,
        strlen(s) > QUOTE_MAX ? "..." : "");
}

static int parse_lines(opcost_text *text, const char *path, opcost_trace *out,
                       char *err, size_t errlen)
{
    size_t cap = 0;
    int header = 0, prev_line = 0;
    int64_t first = 0, prev = 0;
    char *line;
    while ((line = opcost_text_line(text))) {
        const int ln = text->line;
        if (line[0] == '\0')
            continue;
        if (!header) {
            if (strcmp(line, OPCOST_TRACE_HEADER) != 0)
                return opcost_errorf(err, errlen,
                                     "%s:%d: header must be exactly "
                                     "'" OPCOST_TRACE_HEADER "', got '%.*s'",
                                     path, ln, QUOTE_MAX, line);
            header = ln;
            continue;
        }
        char *f[3];
        int n = 0;
        for (char *p = line;; ++p) {
            if (n < 3)
                f[n] = p;
            n++;
            p = strchr(p, ',');
            if (!p)
                break;
            *p = '\0';
        }
        if (n != 3)
            return opcost_errorf(
                err, errlen,
                "%s:%d: expected 3 columns (" OPCOST_TRACE_HEADER "), got %d",
                path, ln, n);
        int64_t ticks;
        const char *why = parse_timestamp(f[0], &ticks);
        if (why)
            return opcost_errorf(err, errlen,
                                 "%s:%d: column 'TIMESTAMP': %s, got '%.*s'",
                                 path, ln, why, QUOTE_MAX, f[0]);
        if (out->count && ticks < prev)
            return opcost_errorf(
                err, errlen,
                "%s:%d: column 'TIMESTAMP': must not be earlier than "
                "the previous request's (line %d), got '%s'",
                path, ln, prev_line, f[0]);
        opcost_request r;
        if (parse_tokens(path, ln, "ContextTokens", f[1], &r.context_tokens,
                         err, errlen) ||
            parse_tokens(path, ln, "GeneratedTokens", f[2], &r.generated_tokens,
                         err, errlen))
            return -1;
        if (!out->count)
            first = ticks;
        prev = ticks;
        prev_line = ln;
        /* Exact in ticks; one correctly rounded division to seconds. */
        r.arrival_s = (double)(ticks - first) / TICKS_PER_S;
        if (out->count == cap) {
            cap = cap ? cap * 2 : 1024;
            opcost_request *grown = realloc(out->requests, cap * sizeof *grown);
            if (!grown)
                return opcost_errorf(err, errlen, "%s: out of memory", path);
            out->requests = grown;
        }
        out->requests[out->count++] = r;
    }
    if (!header)
        return opcost_errorf(err, errlen,
                             "%s:%d: end of file before the header "
                             "'" OPCOST_TRACE_HEADER "'",
                             path, text->line + 1);
    if (!out->count)
        return opcost_errorf(err, errlen,
                             "%s:%d: the header is followed by no requests",
                             path, header);
    return 0;
}

int opcost_trace_load(const char *path, opcost_trace *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    opcost_text text;
    if (opcost_text_open(&text, path, err, errlen) != 0)
        return -1;
    const int r = parse_lines(&text, path, out, err, errlen);
    opcost_text_close(&text);
    if (r != 0)
        opcost_trace_free(out);
    return r;
}

void opcost_trace_free(opcost_trace *trace)
{
    free(trace->requests);
    memset(trace, 0, sizeof *trace);
}
