/*
 * Cache-line blocks: 64-byte aligned memory for rules and their counters
 * (see lib/lines.c).
 */
#ifndef FDP_LINES_H
#define FDP_LINES_H 1

#include <stddef.h>

/* The line size the blocks are aligned to and a multiple of. */
#define FDP__LINE_BYTES 64

/* A block of at least 'size' bytes (rounded up to whole lines), 64-byte
 * aligned, not zeroed; NULL if out of memory.  Free it with
 * fdp__lines_free() and the same 'size'.
 * Thread-safety: any thread, concurrently. */
void *fdp__lines_alloc(size_t size);

/* Frees 'block' (NULL is fine), made by fdp__lines_alloc('size'). */
void fdp__lines_free(void *block, size_t size);

#endif /* FDP_LINES_H */
