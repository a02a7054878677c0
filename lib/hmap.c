/*
 * An intrusive hash map for writers (internal): see lib/hmap.h.
 */
#include <config.h>

#include "lib/hmap.h"

#include <errno.h>
#include <stdlib.h>

/* Buckets of a map's first array: small enough for a table with a few
 * flows, and a power of two. */
#define HMAP_MIN_BUCKETS 16

void
fdp__hmap_init(struct fdp__hmap *map)
{
    map->buckets = NULL;
    map->mask = 0;
    map->n = 0;
}

void
fdp__hmap_destroy(struct fdp__hmap *map)
{
    free(map->buckets);
    fdp__hmap_init(map);
}

/* Moves every node to a new array of 'n_buckets' (a power of two). */
static int
resize(struct fdp__hmap *map, size_t n_buckets)
{
    struct fdp__hmap_node **b = calloc(n_buckets, sizeof *b);

    if (!b) {
        return ENOMEM;
    }
    for (size_t i = 0; map->buckets && i <= map->mask; i++) {
        for (struct fdp__hmap_node *node = map->buckets[i], *next; node;
             node = next) {
            next = node->next;
            struct fdp__hmap_node **head = &b[node->hash & (n_buckets - 1)];
            node->next = *head;
            *head = node;
        }
    }
    free(map->buckets);
    map->buckets = b;
    map->mask = n_buckets - 1;
    return 0;
}

int
fdp__hmap_insert(struct fdp__hmap *map, struct fdp__hmap_node *node,
                 uint32_t hash)
{
    if (!map->buckets || map->n > map->mask) {
        int error = resize(map, map->buckets ? 2 * (map->mask + 1)
                                             : HMAP_MIN_BUCKETS);
        if (error) {
            return error;
        }
    }
    struct fdp__hmap_node **head = &map->buckets[hash & map->mask];
    node->hash = hash;
    node->next = *head;
    *head = node;
    map->n++;
    return 0;
}

void
fdp__hmap_remove(struct fdp__hmap *map, struct fdp__hmap_node *node)
{
    struct fdp__hmap_node **p = &map->buckets[node->hash & map->mask];

    while (*p != node) {
        p = &(*p)->next;
    }
    *p = node->next;
    map->n--;
}
