/*
 * flowdp: definitions shared by every public header.
 */
#ifndef FLOWDP_COMMON_H
#define FLOWDP_COMMON_H 1

/* Marks a function or object as part of the installed library's ABI.  The
 * library is built with -fvisibility=hidden, so only symbols carrying this
 * macro are exported from the shared object. */
#if defined(__GNUC__) || defined(__clang__)
#define FDP_API __attribute__((visibility("default")))
#else
#define FDP_API
#endif

#endif /* FLOWDP_COMMON_H */
