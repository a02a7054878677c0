/*
 * The flow journal behind flowdpd --db.
 *
 * Format: one record per line,
 *   CRC LEN JSON\n
 * where JSON is a flow operation in compact JSON (no newline inside), LEN
 * its length in bytes (decimal) and CRC the CRC32C of those bytes (8 hex
 * digits).  A record counts only if the whole line is there and both
 * checks pass, so a write torn by a crash (a short last line), a
 * truncated file or a flipped bit is detected; everything from the first
 * bad record on is set aside, never replayed half-way.
 *
 * Not a journal.  A file whose first bytes cannot begin a record (8 hex
 * digits, a space, a decimal length, a space, '{') is not a journal with
 * a bad tail but some other file given by mistake (a flows file, say):
 * it is refused and left exactly as it was.  A file whose first record
 * has the form but is torn or fails its checksum is a journal, and is
 * recovered like any other.
 *
 * Set-aside tails go to PATH.corrupt, or if that exists to PATH.corrupt.1,
 * .2 and so on, the first name free (created with O_EXCL, so never over
 * an earlier one): each recovery keeps its own evidence, and the numbers
 * sort in the order the recoveries happened, which a timestamp would
 * only do to the second.
 *
 * Durability: flowdpd applies a change to a transaction, appends its
 * record and fdatasync()s, and only then commits the transaction and
 * acknowledges the client.  A crash before the sync loses a change nobody
 * was told about; after it, replay restores the change.
 *
 * Compaction writes the whole table as one record to PATH.tmp, fsyncs,
 * renames it over PATH and fsyncs the directory: a crash leaves either the
 * old journal or the new one.
 */
#include <config.h>

#include "utilities/journal.h"
#include "utilities/tool.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flowdp/hash.h>

struct journal {
    char *path;
    int fd;
    size_t size;                /* Bytes in the file. */
    size_t base_size;           /* Bytes after the last compaction. */
};

/* The record for 'op', or NULL if out of memory. */
static char *
make_record(const json_t *op, size_t *lenp)
{
    char *json = json_dumps(op, JSON_COMPACT);
    char *rec;

    if (!json) {
        return NULL;
    }
    size_t n = strlen(json);
    int len = asprintf(&rec, "%08" PRIx32 " %zu %s\n",
                       fdp_crc32c(0, json, n), n, json);
    free(json);
    if (len < 0) {
        return NULL;
    }
    *lenp = (size_t) len;
    return rec;
}

static int
write_all(int fd, const char *data, size_t n)
{
    while (n) {
        ssize_t w = write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        data += w;
        n -= (size_t) w;
    }
    return 0;
}

/* Parses the record at 'p' (of 'left' bytes).  Returns its length, or 0
 * with the reason in '*why'. */
static size_t
parse_record(const char *p, size_t left, json_t **opp, const char **why)
{
    const char *nl = memchr(p, '\n', left);
    char *end;

    *opp = NULL;
    if (!nl) {
        *why = "incomplete last record (torn write)";
        return 0;
    }
    errno = 0;
    unsigned long crc = strtoul(p, &end, 16);
    if (end != p + 8 || *end != ' ') {
        *why = "bad record header";
        return 0;
    }
    const char *lp = end + 1;
    unsigned long long len = strtoull(lp, &end, 10);
    if (end == lp || *end != ' ' || errno) {
        *why = "bad record length";
        return 0;
    }
    const char *json = end + 1;
    if ((size_t) (nl - json) != len) {
        *why = "record length does not match";
        return 0;
    }
    if (fdp_crc32c(0, json, len) != crc) {
        *why = "record checksum does not match";
        return 0;
    }
    json_error_t jerr;
    *opp = json_loadb(json, len, 0, &jerr);
    if (!*opp) {
        *why = "record is not JSON";
        return 0;
    }
    return (size_t) (nl - p) + 1;
}

/* True if the 'n' bytes at 'p' can begin a record: "%08x %zu {", or a
 * prefix of that form if the file ends first (a journal whose first write
 * was torn). */
static bool
looks_like_record(const char *p, size_t n)
{
    size_t i = 0, digits = 0;

    for (; i < 8; i++) {
        if (i == n) {
            return true;
        }
        if (!isxdigit((unsigned char) p[i])) {
            return false;
        }
    }
    if (i == n) {
        return true;
    }
    if (p[i++] != ' ') {
        return false;
    }
    for (; i < n && isdigit((unsigned char) p[i]); i++) {
        digits++;
    }
    if (i == n) {
        return true;
    }
    if (!digits || p[i++] != ' ') {
        return false;
    }
    return i == n || p[i] == '{';
}

/* Up to how many PATH.corrupt.N names set_aside() tries: a journal that
 * needed recovering that often needs a person, not another file. */
#define MAX_CORRUPT_FILES 1000

static int fsync_dir(const char *path);

/* Creates the first of PATH.corrupt, PATH.corrupt.1, ... that does not
 * exist.  Returns its descriptor and, in '*namep', its name (freed by the
 * caller), or -1 with errno set. */
static int
create_corrupt_file(const char *path, char **namep)
{
    for (int i = 0; i < MAX_CORRUPT_FILES; i++) {
        char *name = i ? xasprintf("%s.corrupt.%d", path, i)
                       : xasprintf("%s.corrupt", path);
        if (!name) {
            errno = ENOMEM;
            return -1;
        }
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            *namep = name;
            return fd;
        }
        free(name);
        if (errno != EEXIST) {
            return -1;
        }
    }
    errno = EEXIST;
    return -1;
}

/* Moves the bytes from 'offset' on to a new PATH.corrupt[.N] (its name in
 * '*namep') and cuts the file. */
static int
set_aside(struct journal *j, const char *data, size_t offset, size_t total,
          char **namep)
{
    int error = 0;

    *namep = NULL;
    int fd = create_corrupt_file(j->path, namep);
    if (fd < 0 || write_all(fd, data + offset, total - offset)
        || fsync(fd)) {
        error = errno;
    }
    if (fd >= 0) {
        close(fd);
    }
    if (!error) {
        error = fsync_dir(j->path);
    }
    if (!error && (ftruncate(j->fd, (off_t) offset) || fsync(j->fd))) {
        error = errno;
    }
    return error;
}

int
journal_open(const char *path, int (*replay)(json_t *, void *), void *aux,
             struct journal **jp, char **errorp, char **warningp)
{
    struct journal *j = calloc(1, sizeof *j);
    struct stat st;
    char *data = NULL;
    int error = 0;

    *jp = NULL;
    *errorp = *warningp = NULL;
    if (!j || !(j->path = strdup(path))) {
        free(j);
        return ENOMEM;
    }
    j->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (j->fd < 0 || fstat(j->fd, &st)) {
        error = errno;
        *errorp = xasprintf("%s: %s", path, strerror(error));
        goto fail;
    }
    /* A new file's directory entry must be durable before the first
     * acknowledged record is. */
    if (!st.st_size && (error = fsync_dir(path)) != 0) {
        *errorp = xasprintf("%s: syncing its directory: %s", path,
                            strerror(error));
        goto fail;
    }
    size_t total = (size_t) st.st_size;
    data = malloc(total + 1);
    if (!data) {
        error = ENOMEM;
        goto fail;
    }
    for (size_t got = 0; got < total; ) {
        ssize_t n = pread(j->fd, data + got, total - got, (off_t) got);
        if (n <= 0) {
            error = n < 0 ? errno : EIO;
            *errorp = xasprintf("%s: read: %s", path, strerror(error));
            goto fail;
        }
        got += (size_t) n;
    }

    if (total && !looks_like_record(data, total)) {
        error = EINVAL;
        *errorp = xasprintf("%s: not a flowdpd journal (it does not begin "
                            "with a record; a flows file belongs in "
                            "\"flowdp-ctl add-flows\"): refusing it, and "
                            "leaving it as it is", path);
        goto fail;
    }

    size_t offset = 0;
    unsigned long n_records = 0;
    while (offset < total) {
        const char *why = NULL;
        json_t *op;
        size_t len = parse_record(data + offset, total - offset, &op, &why);
        if (len && replay(op, aux)) {
            why = "record does not apply to the table";
            len = 0;
        }
        json_decref(op);
        if (!len) {
            char *saved;
            error = set_aside(j, data, offset, total, &saved);
            if (error) {
                *errorp = xasprintf("%s: setting a corrupt tail aside%s%s: "
                                    "%s", path, saved ? " in " : "",
                                    saved ? saved : "", strerror(error));
                free(saved);
                goto fail;
            }
            *warningp = xasprintf("%s: record %lu at byte %zu: %s; ignoring "
                                  "it and the %zu bytes after it (saved in "
                                  "%s)", path, n_records + 1, offset, why,
                                  total - offset, saved);
            free(saved);
            total = offset;
            break;
        }
        offset += len;
        n_records++;
    }
    free(data);
    if (lseek(j->fd, (off_t) total, SEEK_SET) < 0) {
        error = errno;
        goto fail;
    }
    j->size = j->base_size = total;
    *jp = j;
    return 0;

fail:
    free(data);
    if (j->fd >= 0) {
        close(j->fd);
    }
    free(j->path);
    free(j);
    return error ? error : EIO;
}

int
journal_append(struct journal *j, const json_t *op, char **errorp)
{
    size_t len;
    char *rec = make_record(op, &len);
    int error;

    *errorp = NULL;
    if (!rec) {
        return ENOMEM;
    }
    error = write_all(j->fd, rec, len);
    if (!error && fdatasync(j->fd)) {
        error = errno;
    }
    free(rec);
    if (error) {
        /* Leave no partial record behind for the next append. */
        if (ftruncate(j->fd, (off_t) j->size) == 0) {
            lseek(j->fd, (off_t) j->size, SEEK_SET);
        }
        *errorp = xasprintf("%s: %s", j->path, strerror(error));
        return error;
    }
    j->size += len;
    return 0;
}

static int
fsync_dir(const char *path)
{
    char *copy = strdup(path);
    int error = 0;

    if (!copy) {
        return ENOMEM;
    }
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd)) {
        error = errno;
    }
    if (fd >= 0) {
        close(fd);
    }
    free(copy);
    return error;
}

int
journal_compact(struct journal *j, const json_t *snapshot, char **errorp)
{
    char *tmp = xasprintf("%s.tmp", j->path);
    size_t len;
    char *rec = make_record(snapshot, &len);
    int error = 0, fd = -1;

    *errorp = NULL;
    if (!tmp || !rec) {
        error = ENOMEM;
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        error = errno;
    } else if (!(error = write_all(fd, rec, len)) && fsync(fd)) {
        error = errno;
    }
    if (!error && rename(tmp, j->path)) {
        error = errno;
    }
    if (!error) {
        error = fsync_dir(j->path);
    }
    if (error) {
        if (fd >= 0) {
            unlink(tmp);
        }
        *errorp = xasprintf("%s: compacting: %s", j->path, strerror(error));
        goto out;
    }
    /* The new file is the journal now. */
    close(j->fd);
    close(fd);
    fd = -1;
    j->fd = open(j->path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (j->fd < 0) {
        error = errno;
        *errorp = xasprintf("%s: reopening: %s", j->path, strerror(error));
        goto out;
    }
    j->size = j->base_size = len;

out:
    if (fd >= 0) {
        close(fd);
    }
    free(tmp);
    free(rec);
    return error;
}

size_t
journal_size(const struct journal *j)
{
    return j->size;
}

size_t
journal_base_size(const struct journal *j)
{
    return j->base_size;
}

void
journal_close(struct journal *j)
{
    if (j) {
        if (j->fd >= 0) {
            close(j->fd);
        }
        free(j->path);
        free(j);
    }
}
