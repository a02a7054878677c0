/*
 * A growable string for formatting (internal).
 */
#include <config.h>

#include "lib/ds.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
ds_reserve(struct fdp__ds *ds, size_t extra)
{
    if (ds->failed) {
        return false;
    }
    if (ds->len + extra + 1 > ds->alloc) {
        size_t alloc = ds->alloc ? ds->alloc : 64;
        while (alloc < ds->len + extra + 1) {
            alloc *= 2;
        }
        char *s = realloc(ds->s, alloc);
        if (!s) {
            ds->failed = true;
            return false;
        }
        ds->s = s;
        ds->alloc = alloc;
    }
    return true;
}

void
fdp__ds_put(struct fdp__ds *ds, const char *s)
{
    fdp__ds_put_buffer(ds, s, strlen(s));
}

/* Appends the 'n' bytes at 's', which need not be NUL-terminated. */
void
fdp__ds_put_buffer(struct fdp__ds *ds, const char *s, size_t n)
{
    if (ds_reserve(ds, n)) {
        memcpy(ds->s + ds->len, s, n);
        ds->len += n;
        ds->s[ds->len] = '\0';
    }
}

void
fdp__ds_putc(struct fdp__ds *ds, char c)
{
    if (ds_reserve(ds, 1)) {
        ds->s[ds->len++] = c;
        ds->s[ds->len] = '\0';
    }
}

void
fdp__ds_printf(struct fdp__ds *ds, const char *format, ...)
{
    va_list args;
    char buf[128];

    va_start(args, format);
    int n = vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    if (n < 0) {
        ds->failed = true;
    } else if ((size_t) n < sizeof buf) {
        fdp__ds_put(ds, buf);
    } else if (ds_reserve(ds, (size_t) n)) {
        va_start(args, format);
        vsnprintf(ds->s + ds->len, (size_t) n + 1, format, args);
        va_end(args);
        ds->len += (size_t) n;
    }
}

void
fdp__ds_put_uint(struct fdp__ds *ds, uint64_t v)
{
    char buf[20];               /* UINT64_MAX has 20 digits. */
    size_t i = sizeof buf;

    do {
        buf[--i] = (char) ('0' + v % 10);
        v /= 10;
    } while (v);
    fdp__ds_put_buffer(ds, buf + i, sizeof buf - i);
}

void
fdp__ds_put_hex(struct fdp__ds *ds, uint64_t v)
{
    char buf[16];               /* 64 bits, 4 per digit. */
    size_t i = sizeof buf;

    do {
        buf[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    fdp__ds_put_buffer(ds, buf + i, sizeof buf - i);
}

void
fdp__ds_chomp(struct fdp__ds *ds, char c)
{
    if (ds->len && ds->s[ds->len - 1] == c) {
        ds->s[--ds->len] = '\0';
    }
}

void
fdp__ds_put_json_string(struct fdp__ds *ds, const char *s)
{
    fdp__ds_putc(ds, '"');
    fdp__ds_put_json_chars(ds, s);
    fdp__ds_putc(ds, '"');
}

void
fdp__ds_put_json_chars(struct fdp__ds *ds, const char *s)
{
    /* The bytes a JSON string escapes: '"', '\\' and the controls, and
     * the NUL that ends 's'.  A table lookup per byte keeps the scan of
     * the bytes copied as they are (nearly all) to a few instructions. */
    static const bool special[256] = {
        [0 ... 0x1f] = true, ['"'] = true, ['\\'] = true,
    };
    const char *run = s;        /* Start of the bytes not yet copied. */

    for (;; s++) {
        while (!special[(unsigned char) *s]) {
            s++;
        }
        if (!*s) {
            break;
        }
        unsigned char c = (unsigned char) *s;
        fdp__ds_put_buffer(ds, run, (size_t) (s - run));
        if (c == '"' || c == '\\') {
            fdp__ds_putc(ds, '\\');
            fdp__ds_putc(ds, (char) c);
        } else {
            fdp__ds_printf(ds, "\\u%04x", c);
        }
        run = s + 1;
    }
    fdp__ds_put_buffer(ds, run, (size_t) (s - run));
}

void
fdp__ds_clear(struct fdp__ds *ds)
{
    ds->len = 0;
    if (ds->s) {
        ds->s[0] = '\0';
    }
}

const char *
fdp__ds_cstr(const struct fdp__ds *ds)
{
    return ds->s ? ds->s : "";
}

char *
fdp__ds_steal(struct fdp__ds *ds)
{
    char *s = NULL;

    if (!ds->failed) {
        s = ds->s ? ds->s : strdup("");
        ds->s = NULL;
    }
    fdp__ds_destroy(ds);
    return s;
}

void
fdp__ds_destroy(struct fdp__ds *ds)
{
    free(ds->s);
    *ds = (struct fdp__ds) FDP__DS_INIT;
}

char *
fdp__xasprintf(const char *format, ...)
{
    va_list args;
    char *s;

    va_start(args, format);
    int n = vasprintf(&s, format, args);
    va_end(args);
    return n < 0 ? NULL : s;
}
