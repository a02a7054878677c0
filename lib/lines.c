/*
 * Cache-line blocks: 64-byte aligned memory for rules and their counters.
 *
 * Every rule and every flow's counters are 64-byte aligned (lib/rule.h:
 * what a lookup reads shares one line, and a flow's counters are one
 * line).  glibc's aligned_alloc(64, n) finds room for n + 64 bytes and
 * gives the misaligned head back as a free chunk, which other allocations
 * rarely fill: with 200,000 five-tuple flows (a 256-byte rule and 64 bytes
 * of counters each), flowdpd's resident memory was 117 MB, and 76 MB with
 * the same blocks cut from large slabs (docs/PERFORMANCE.md).
 *
 * So a block of 1 to MAX_LINES lines comes from the free list of its size
 * or, when that is empty, from the current slab (SLAB_BYTES, itself one
 * aligned allocation, large enough that its own waste is noise); the tail
 * of a slab too short for a request goes to the free list of its size.
 * Larger blocks come from aligned_alloc().  A freed block goes back to the
 * free list of its size, not to the system: a table that shrinks keeps its
 * lines for the next flows, as glibc keeps most of a heap.  Each slab's
 * first line links it to the previous one, so that leak checkers see every
 * slab as reachable.
 *
 * Worked example: a rule of 4 lines (256 bytes) is cut at offset 64 of a
 * new slab (offset 0 is the slab's link), the next at 320, and so on;
 * freeing the first puts it at the head of free_lists[4], and the next
 * 4-line request takes it back from there.
 *
 * Thread-safety: any thread may allocate and free (rules are freed by the
 * RCU callback thread); one mutex, held for a few instructions.
 *
 * Under AddressSanitizer every block comes from aligned_alloc() and goes
 * back with free(), so that a use after free is still caught.
 */
#include <config.h>

#include "lib/lines.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define LINES_USE_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LINES_USE_MALLOC 1
#endif
#endif
#ifndef LINES_USE_MALLOC
#define LINES_USE_MALLOC 0
#endif

/* The largest block cut from slabs, in lines: 16 lines (1 KB) covers a
 * rule with the widest key (lib/rule.h) and counters (1 line). */
#define MAX_LINES 16

/* Slab size: 256 KB, 4096 lines, so that a slab's link line and the tail
 * it may leave are under 0.5 % of it. */
#define SLAB_BYTES (256u * 1024)

struct free_block {
    struct free_block *next;
};

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static struct free_block *free_lists[MAX_LINES + 1];  /* By lines. */
static char *slab_pos, *slab_end;   /* What is left of the current slab. */
static void *slabs;                 /* The newest slab; each links on. */

static size_t
n_lines(size_t size)
{
    size_t n = (size + FDP__LINE_BYTES - 1) / FDP__LINE_BYTES;

    return n ? n : 1;
}

/* Puts the 'n' lines at 'block' on their free list.  Caller holds
 * 'mutex'. */
static void
push_free(void *block, size_t n)
{
    struct free_block *b = block;

    b->next = free_lists[n];
    free_lists[n] = b;
}

/* Starts a new slab, the tail of the old one on its free list.  Returns
 * false if out of memory.  Caller holds 'mutex'. */
static bool
new_slab(void)
{
    char *slab = aligned_alloc(FDP__LINE_BYTES, SLAB_BYTES);

    if (!slab) {
        return false;
    }
    size_t tail = (size_t) (slab_end - slab_pos) / FDP__LINE_BYTES;
    if (tail) {
        push_free(slab_pos, tail);
    }
    *(void **) slab = slabs;
    slabs = slab;
    slab_pos = slab + FDP__LINE_BYTES;
    slab_end = slab + SLAB_BYTES;
    return true;
}

void *
fdp__lines_alloc(size_t size)
{
    size_t n = n_lines(size);
    void *block = NULL;

    if (LINES_USE_MALLOC || n > MAX_LINES) {
        return aligned_alloc(FDP__LINE_BYTES, n * FDP__LINE_BYTES);
    }
    pthread_mutex_lock(&mutex);
    if (free_lists[n]) {
        block = free_lists[n];
        free_lists[n] = free_lists[n]->next;
    } else if ((size_t) (slab_end - slab_pos) >= n * FDP__LINE_BYTES
               || new_slab()) {
        block = slab_pos;
        slab_pos += n * FDP__LINE_BYTES;
    }
    pthread_mutex_unlock(&mutex);
    return block;
}

void
fdp__lines_free(void *block, size_t size)
{
    size_t n = n_lines(size);

    if (!block) {
        return;
    }
    if (LINES_USE_MALLOC || n > MAX_LINES) {
        free(block);
        return;
    }
    pthread_mutex_lock(&mutex);
    push_free(block, n);
    pthread_mutex_unlock(&mutex);
}
