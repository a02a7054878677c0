/*
 * Tunnel tags (internal): a per-pmd table that gives each distinct set of
 * tunnel words (key.h, words 31-40) a small number, so that the
 * datapath's exact caches hold tunnelled keys without room for the ten
 * words.  See datapath/tun-intern.c.
 */
#ifndef FDP_TUN_INTERN_H
#define FDP_TUN_INTERN_H 1

#include <stdint.h>

#include <flowdp/key.h>

struct fdp__tun_intern;

/* The tag of a key without tunnel words, and the tag that says "no tag":
 * the caches then leave the key to the classifier. */
#define FDP__TUN_TAG_NONE_NEEDED 0
#define FDP__TUN_TAG_UNCACHED UINT32_MAX

/* The tag of 'key', whose tunnel words are not all zero: the same number
 * for the same words for as long as the table keeps them, never a number
 * given to other words before (tags only grow).  Creates the table in
 * '*tp' on first use.  Returns FDP__TUN_TAG_UNCACHED when it cannot give
 * one (no memory; 2^32 - 2 tags given).  Called by the pmd that owns the
 * table only. */
uint32_t fdp__tun_intern_tag(struct fdp__tun_intern **tp,
                             const struct fdp_key *key);

/* Frees a table (NULL is fine). */
void fdp__tun_intern_destroy(struct fdp__tun_intern *);

#endif /* FDP_TUN_INTERN_H */
