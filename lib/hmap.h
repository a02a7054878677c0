/*
 * An intrusive hash map for writers (internal): no locking, no RCU, for
 * the indexes a table's writer keeps under its mutex (lib/table.c).
 *
 * The caller embeds a struct fdp__hmap_node in each element, computes the
 * element's hash and compares elements itself: the map only chains nodes
 * by hash in a power-of-two array of buckets that doubles when the map
 * holds more nodes than buckets (so chains stay around one node long for
 * a good hash) and never shrinks below its largest size but for
 * fdp__hmap_destroy().
 */
#ifndef FDP_HMAP_H
#define FDP_HMAP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fdp__hmap_node {
    struct fdp__hmap_node *next;
    uint32_t hash;
};

struct fdp__hmap {
    struct fdp__hmap_node **buckets;
    size_t mask;                /* Buckets - 1; 0 with no array yet. */
    size_t n;
};

void fdp__hmap_init(struct fdp__hmap *);
void fdp__hmap_destroy(struct fdp__hmap *);

/* Adds 'node' with 'hash'.  Returns 0, or ENOMEM if the map had to grow
 * and could not (the node is not added then). */
int fdp__hmap_insert(struct fdp__hmap *, struct fdp__hmap_node *,
                     uint32_t hash);

/* Removes 'node', which must be in the map. */
void fdp__hmap_remove(struct fdp__hmap *, struct fdp__hmap_node *);

/* The first node with 'hash', or NULL; then the next one after 'node'
 * with the same hash. */
static inline struct fdp__hmap_node *
fdp__hmap_next_with_hash(const struct fdp__hmap_node *node, uint32_t hash)
{
    for (; node && node->hash != hash; node = node->next) {
        continue;
    }
    return (struct fdp__hmap_node *) node;
}

static inline struct fdp__hmap_node *
fdp__hmap_first_with_hash(const struct fdp__hmap *map, uint32_t hash)
{
    return map->buckets
           ? fdp__hmap_next_with_hash(map->buckets[hash & map->mask], hash)
           : NULL;
}

#endif /* FDP_HMAP_H */
