/*
 * A growable string for formatting (internal).
 *
 * Allocation failure is sticky: the string stops growing, fdp__ds_failed()
 * turns true and fdp__ds_steal() returns NULL, so formatters need not
 * check every append and still return ENOMEM.
 */
#ifndef FDP_DS_H
#define FDP_DS_H 1

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct fdp__ds {
    char *s;            /* NUL-terminated, or NULL while empty. */
    size_t len;         /* Bytes before the NUL. */
    size_t alloc;       /* Bytes allocated. */
    bool failed;        /* An allocation failed. */
};

#define FDP__DS_INIT { NULL, 0, 0, false }

void fdp__ds_put(struct fdp__ds *, const char *);
void fdp__ds_put_buffer(struct fdp__ds *, const char *, size_t n);
void fdp__ds_putc(struct fdp__ds *, char);
void fdp__ds_printf(struct fdp__ds *, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void fdp__ds_chomp(struct fdp__ds *, char);

/* Append 'v' as "%" PRIu64 and "%" PRIx64 would, without printf's cost
 * (a few hundred instructions a call: dump-flows formats a dozen numbers
 * per flow, and printf was most of its time). */
void fdp__ds_put_uint(struct fdp__ds *, uint64_t v);
void fdp__ds_put_hex(struct fdp__ds *, uint64_t v);

/* Appends 's' as a JSON string: quoted, with '"', '\\' and control
 * characters escaped (RFC 8259, section 7); other bytes, UTF-8 included,
 * are copied as they are. */
void fdp__ds_put_json_string(struct fdp__ds *, const char *s);

/* As fdp__ds_put_json_string() without the quotes: for a JSON string
 * written in pieces. */
void fdp__ds_put_json_chars(struct fdp__ds *, const char *s);

/* Empties the string and keeps its memory for reuse (a failed string
 * stays failed). */
void fdp__ds_clear(struct fdp__ds *);
const char *fdp__ds_cstr(const struct fdp__ds *);
char *fdp__ds_steal(struct fdp__ds *);
void fdp__ds_destroy(struct fdp__ds *);

/* A new formatted string (the caller frees it), or NULL if out of
 * memory. */
char *fdp__xasprintf(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

static inline bool
fdp__ds_failed(const struct fdp__ds *ds)
{
    return ds->failed;
}

#endif /* FDP_DS_H */
