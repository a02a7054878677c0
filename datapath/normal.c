/*
 * NORMAL, FLOOD, ALL and LOCAL: the datapath as an Ethernet switch.
 *
 * Theory of operation
 * ===================
 *
 * What it is for.  Open vSwitch's NORMAL action (ofproto-dpif-xlate.c,
 * xlate_normal()) makes a bridge a MAC-learning switch with VLANs; FLOOD
 * and ALL send a packet out of every port but its input.  Controllers
 * (Antrea, OVN's localnet ports, hand-written bridges) use them, and
 * flowdp runs them the same way, datapath/mac-learning.c keeping the
 * learned addresses.
 *
 * The rules, Open vSwitch's (ports are its bundles, one port each):
 *   1. A frame whose destination is reserved multicast (01:80:c2:00:00:0X,
 *      802.1D's bridge group addresses) is dropped: no forward-bpdu.
 *   2. The input VLAN.  vid is the outer tag's VID (0 if untagged).  An
 *      access port accepts only vid 0 (untagged or priority tagged) and
 *      the frame is in the port's tag; a trunk port accepts the vids of
 *      its trunks (every vid if it has no list) and the frame is in vid;
 *      a native port accepts vid 0, which puts the frame in its tag, and
 *      its trunks' vids (the native VLAN always among them, VLAN 0
 *      never).  Anything else is dropped.
 *   3. Learning: a unicast source is learned (or refreshed, or moved) on
 *      the input port in the frame's VLAN.
 *   4. Forwarding: a broadcast or multicast destination, or one the table
 *      does not know in that VLAN, is flooded to every port but the input
 *      that carries the VLAN; a known one goes to its port, unless that is
 *      the input port (dropped: the frame is already on that segment).
 *   5. Output VLAN.  An access port sends untagged; a native-untagged port
 *      sends its native VLAN untagged and others tagged; a trunk or
 *      native-tagged port sends VID = VLAN with the input PCP, and a TCI
 *      of zero (VLAN 0, PCP 0) means untagged.
 *
 * When NORMAL decides: at execution, per packet.  The alternative, at
 * composition (an exact-match cache entry holding "output:2" for a
 * NORMAL flow), saves two table probes per packet but must be undone
 * whenever the table changes, and the table changes with every new
 * station: invalidating every cached composition of the datapath on each
 * learned address would make a network's warm-up a cache storm, and
 * tracking which compositions depend on which address (Open vSwitch's
 * xlate cache) costs memory per entry.  At execution the caches hold
 * "NORMAL" (a composition that never goes stale), and each packet pays
 * two lookups of fdp__fdb_lookup() (source and destination), each one
 * cache line of a table that is at most half full (mac-learning.c); for
 * the stations a pmd is forwarding for, those lines are in its cache.
 * flowdp-bench's normal suite measures it against an EMC hit of a plain
 * output (docs/PERFORMANCE.md).
 *
 * Reserved ports as outputs: FLOOD and ALL send the packet unchanged to
 * every port but the input (flowdp has no no-flood port setting, so
 * FLOOD is ALL, as in Open vSwitch for ports left at their defaults);
 * LOCAL, Open vSwitch's bridge-internal port, does not exist in flowdp,
 * which drops the packet and counts it (fdp_fdb_stats.n_local_dropped)
 * so that a program that sends there shows where its packets went.
 *
 * Worked example.  Ports 1 (access, tag 10), 2 (access, tag 10), 3
 * (trunk, every VLAN), and "actions=NORMAL".  An untagged ARP broadcast
 * from 50:54:00:00:00:01 on port 1: VLAN 10 (rule 2); its source is noted
 * for port 1, VLAN 10 (3); the broadcast is flooded (4) to port 2
 * untagged and to port 3 tagged with VID 10 (5).  The reply, from
 * 50:54:00:00:00:03 on port 3 tagged 10, to ...:01: VLAN 10, learned on
 * port 3, destination known on port 1: sent to port 1 untagged.
 *
 * Thread-safety: see normal.h.
 */
#include <config.h>

#include "datapath/normal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/bytes.h"
#include "datapath/dp-private.h"
#include "datapath/execute.h"
#include "datapath/mac-learning.h"
#include "lib/field.h"
#include "lib/rcu.h"
#include "lib/util.h"

struct fdp__normal {
    struct fdp__fdb *fdb;
    uint64_t n_local_dropped;   /* Atomic. */
};

/* ---------------------------------------------------------------------- */
/* Configuration.                                                          */

void
fdp_port_vlan_init(struct fdp_port_vlan *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = FDP_VLAN_MODE_TRUNK;
    cfg->tag = -1;
}

enum fdp_vlan_mode
fdp_port_vlan_mode(const struct fdp_port_vlan *cfg)
{
    if (cfg->mode_set) {
        return cfg->mode;
    }
    return cfg->tag >= 0 ? FDP_VLAN_MODE_ACCESS : FDP_VLAN_MODE_TRUNK;
}

static const char *const mode_names[] = {
    [FDP_VLAN_MODE_TRUNK] = "trunk",
    [FDP_VLAN_MODE_ACCESS] = "access",
    [FDP_VLAN_MODE_NATIVE_TAGGED] = "native-tagged",
    [FDP_VLAN_MODE_NATIVE_UNTAGGED] = "native-untagged",
};

static int
vlan_error(char **errorp, const char *word, const char *what)
{
    if (errorp && asprintf(errorp, "\"%s\": %s", word, what) < 0) {
        *errorp = NULL;
    }
    return EINVAL;
}

/* Parses a VLAN number 0..4095 from [s, end); false if it is not one. */
static bool
parse_vid(const char *s, const char *end, unsigned int *vid)
{
    unsigned int v = 0;

    if (s == end || end - s > 4) {
        return false;
    }
    for (; s < end; s++) {
        if (*s < '0' || *s > '9') {
            return false;
        }
        v = v * 10 + (unsigned int) (*s - '0');
    }
    *vid = v;
    return v <= 4095;
}

/* "N[,N|N-M]...": a trunks list into 'bits'. */
static bool
parse_trunks(const char *s, uint64_t bits[64])
{
    memset(bits, 0, 64 * sizeof bits[0]);
    while (*s) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        const char *dash = memchr(s, '-', (size_t) (end - s));
        unsigned int lo, hi;
        if (dash) {
            if (!parse_vid(s, dash, &lo) || !parse_vid(dash + 1, end, &hi)
                || lo > hi) {
                return false;
            }
        } else if (!parse_vid(s, end, &lo)) {
            return false;
        } else {
            hi = lo;
        }
        for (unsigned int v = lo; v <= hi; v++) {
            bits[v / 64] |= UINT64_C(1) << (v % 64);
        }
        if (!comma) {
            break;
        }
        s = comma + 1;
        if (!*s) {
            return false;       /* A trailing comma. */
        }
    }
    return true;
}

int
fdp_port_vlan_parse(struct fdp_port_vlan *cfg, const char *word,
                    char **errorp)
{
    const char *eq = strchr(word, '=');
    const char *v = eq ? eq + 1 : NULL;

    if (errorp) {
        *errorp = NULL;
    }
    if (!eq) {
        return vlan_error(errorp, word, "expected vlan_mode=MODE, tag=VLAN "
                          "or trunks=VLAN[,VLAN...]");
    }
    size_t klen = (size_t) (eq - word);
    if (klen == 9 && !strncmp(word, "vlan_mode", klen)) {
        if (!*v) {
            cfg->mode_set = false;
            cfg->mode = FDP_VLAN_MODE_TRUNK;
            return 0;
        }
        for (size_t m = 0; m < FDP_ARRAY_SIZE(mode_names); m++) {
            if (!strcmp(v, mode_names[m])) {
                cfg->mode_set = true;
                cfg->mode = (enum fdp_vlan_mode) m;
                return 0;
            }
        }
        return vlan_error(errorp, word, "unknown vlan_mode (trunk, access, "
                          "native-tagged or native-untagged)");
    }
    if (klen == 3 && !strncmp(word, "tag", klen)) {
        unsigned int vid;
        if (!*v) {
            cfg->tag = -1;
            return 0;
        }
        if (!parse_vid(v, v + strlen(v), &vid)) {
            return vlan_error(errorp, word, "tag must be a VLAN, 0 to 4095");
        }
        cfg->tag = (int) vid;
        return 0;
    }
    if (klen == 6 && !strncmp(word, "trunks", klen)) {
        if (!*v) {
            cfg->has_trunks = false;
            memset(cfg->trunks, 0, sizeof cfg->trunks);
            return 0;
        }
        uint64_t bits[64];
        if (!parse_trunks(v, bits)) {
            return vlan_error(errorp, word, "trunks must be VLANs 0 to 4095, "
                              "as N, N-M, joined by commas");
        }
        cfg->has_trunks = true;
        memcpy(cfg->trunks, bits, sizeof bits);
        return 0;
    }
    return vlan_error(errorp, word, "unknown setting (vlan_mode, tag or "
                      "trunks)");
}

static bool
bit_is_set(const uint64_t *bits, unsigned int v)
{
    return (bits[v / 64] >> (v % 64)) & 1;
}

void
fdp_port_vlan_format(const struct fdp_port_vlan *cfg, char *buf, size_t size)
{
    size_t n = 0;

#define PUT(...)                                                          \
    do {                                                                  \
        int k_ = snprintf(buf + n, size > n ? size - n : 0, __VA_ARGS__); \
        n += k_ > 0 ? (size_t) k_ : 0;                                    \
    } while (0)

    if (size) {
        buf[0] = '\0';
    }
    PUT("vlan_mode=%s", mode_names[fdp_port_vlan_mode(cfg)]);
    if (cfg->tag >= 0) {
        PUT(" tag=%d", cfg->tag);
    }
    if (cfg->has_trunks) {
        const char *sep = " trunks=";
        for (unsigned int v = 0; v < 4096; v++) {
            if (!bit_is_set(cfg->trunks, v)) {
                continue;
            }
            unsigned int hi = v;
            while (hi + 1 < 4096 && bit_is_set(cfg->trunks, hi + 1)) {
                hi++;
            }
            if (hi > v) {
                PUT("%s%u-%u", sep, v, hi);
            } else {
                PUT("%s%u", sep, v);
            }
            sep = ",";
            v = hi;
        }
    }
#undef PUT
}

struct fdp__vlan_conf *
fdp__vlan_conf_create(const struct fdp_port_vlan *cfg)
{
    struct fdp__vlan_conf *c = calloc(1, sizeof *c);

    if (!c) {
        return NULL;
    }
    c->cfg = *cfg;
    c->mode = fdp_port_vlan_mode(cfg);
    /* A mode with a VLAN of its own and no tag uses VLAN 0, as vswitchd
     * does. */
    c->tag = cfg->tag >= 0 ? (uint16_t) cfg->tag : 0;
    switch (c->mode) {
    case FDP_VLAN_MODE_ACCESS:
        c->vlans[c->tag / 64] |= UINT64_C(1) << (c->tag % 64);
        break;
    case FDP_VLAN_MODE_TRUNK:
        if (cfg->has_trunks) {
            memcpy(c->vlans, cfg->trunks, sizeof c->vlans);
        } else {
            memset(c->vlans, 0xff, sizeof c->vlans);
        }
        break;
    case FDP_VLAN_MODE_NATIVE_TAGGED:
    case FDP_VLAN_MODE_NATIVE_UNTAGGED:
        /* Open vSwitch's bundle_set(): the native VLAN is always trunked,
         * VLAN 0 never (an untagged frame is the native VLAN's). */
        if (cfg->has_trunks) {
            memcpy(c->vlans, cfg->trunks, sizeof c->vlans);
        } else {
            memset(c->vlans, 0xff, sizeof c->vlans);
        }
        if (c->tag) {
            c->vlans[0] &= ~UINT64_C(1);
        }
        c->vlans[c->tag / 64] |= UINT64_C(1) << (c->tag % 64);
        break;
    }
    return c;
}

/* ---------------------------------------------------------------------- */
/* The switch.                                                             */

int
fdp__normal_create(struct fdp__normal **np)
{
    struct fdp__normal *n = calloc(1, sizeof *n);
    int error;

    *np = NULL;
    if (!n) {
        return ENOMEM;
    }
    error = fdp__fdb_create(FDP__FDB_SIZE_DEFAULT, FDP__FDB_AGING_DEFAULT,
                            &n->fdb);
    if (!error) {
        error = fdp__fdb_start(n->fdb);
    }
    if (error) {
        fdp__fdb_destroy(n->fdb);
        free(n);
        return error;
    }
    *np = n;
    return 0;
}

void
fdp__normal_destroy(struct fdp__normal *n)
{
    if (n) {
        fdp__fdb_destroy(n->fdb);
        free(n);
    }
}

struct fdp__fdb *
fdp__normal_fdb(const struct fdp__normal *n)
{
    return n->fdb;
}

/* The configuration of port 'p': its own, or trunk of every VLAN. */
static const struct fdp__vlan_conf *
port_conf(const struct fdp__port *p)
{
    static struct fdp__vlan_conf trunk_all;
    static bool ready;
    const struct fdp__vlan_conf *c = FDP_RCU_GET(p->vlan);

    if (c) {
        return c;
    }
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        /* Any thread may get here first; they all write the same. */
        struct fdp__vlan_conf t = { .mode = FDP_VLAN_MODE_TRUNK };
        fdp_port_vlan_init(&t.cfg);
        memset(t.vlans, 0xff, sizeof t.vlans);
        trunk_all = t;
        __atomic_store_n(&ready, true, __ATOMIC_RELEASE);
    }
    return &trunk_all;
}

static bool
carries(const struct fdp__vlan_conf *c, uint16_t vlan)
{
    return bit_is_set(c->vlans, vlan);
}

static inline uint64_t
mac_at(const uint8_t *p)
{
    return ((uint64_t) fdp__get16(p) << 32) | fdp__get32(p + 2);
}

void
fdp__normal_decide(struct fdp__normal *n, const uint8_t eth[12],
                   bool tagged, uint16_t tci, const struct fdp__port *in,
                   uint32_t in_no, uint32_t now, bool learn,
                   struct fdp__normal_verdict *v)
{
    uint64_t dst = mac_at(eth), src = mac_at(eth + 6);
    uint16_t vid = tagged ? tci & FDP_VLAN_VID_MASK : 0;

    *v = (struct fdp__normal_verdict) { .action = FDP__NORMAL_DROP };
    if (!in) {
        v->why = "no such input port";
        return;
    }
    /* Rule 1: 01:80:c2:00:00:00 to 01:80:c2:00:00:0f. */
    if ((dst & ~UINT64_C(0xf)) == UINT64_C(0x0180c2000000)) {
        v->why = "reserved multicast destination";
        return;
    }

    /* Rule 2: the input VLAN. */
    const struct fdp__vlan_conf *c = port_conf(in);
    switch (c->mode) {
    case FDP_VLAN_MODE_ACCESS:
        if (vid) {
            v->why = "tagged frame on an access port";
            return;
        }
        v->vlan = c->tag;
        break;
    case FDP_VLAN_MODE_NATIVE_TAGGED:
    case FDP_VLAN_MODE_NATIVE_UNTAGGED:
        if (!vid) {
            v->vlan = c->tag;
            break;
        }
        /* A tagged frame must be of a trunked VLAN, as on a trunk. */
        __attribute__((fallthrough));
    case FDP_VLAN_MODE_TRUNK:
        if (!carries(c, vid)) {
            v->why = "VLAN not trunked by the input port";
            return;
        }
        v->vlan = vid;
        break;
    }

    /* Rule 3: learn a unicast source. */
    if (!(src & UINT64_C(0x010000000000))) {
        uint32_t known;
        if (learn) {
            v->learn = fdp__fdb_learn(n->fdb, src, v->vlan, in_no, now)
                       ? FDP__NORMAL_KNOWN : FDP__NORMAL_LEARNED;
        } else {
            v->learn = fdp__fdb_lookup(n->fdb, src, v->vlan, &known)
                       && known == in_no
                       ? FDP__NORMAL_KNOWN : FDP__NORMAL_LEARNED;
        }
    }

    /* Rule 4: where to. */
    uint32_t out;
    if (dst & UINT64_C(0x010000000000)
        || !fdp__fdb_lookup(n->fdb, dst, v->vlan, &out)) {
        v->action = FDP__NORMAL_FLOOD;
    } else if (out == in_no) {
        v->why = "destination learned on the input port";
    } else {
        v->action = FDP__NORMAL_FORWARD;
        v->port = out;
    }
}

/* Rule 5: the TCI a frame of 'vlan' with input TCI 'tci' leaves port 'c'
 * with; 0 means untagged. */
static uint16_t
output_tci(const struct fdp__vlan_conf *c, uint16_t vlan, uint16_t tci)
{
    switch (c->mode) {
    case FDP_VLAN_MODE_ACCESS:
        return 0;
    case FDP_VLAN_MODE_NATIVE_UNTAGGED:
        if (vlan == c->tag) {
            return 0;
        }
        break;
    case FDP_VLAN_MODE_TRUNK:
    case FDP_VLAN_MODE_NATIVE_TAGGED:
        break;
    }
    /* The TCI on the wire: VID and PCP, the DEI bit clear (Open vSwitch's
     * xvlan_put(); its CFI bit only says "present" inside the flow). */
    return (uint16_t) (vlan | (tci & FDP_VLAN_PCP_MASK));
}

/* Sends 'pkt' to 'port' with outer TCI 'tci' (0: untagged). */
static void
send_tagged(struct fdp__pkt *pkt, uint32_t port, uint16_t tci, bool steal,
            fdp__normal_output_fn *output, void *aux, bool *took)
{
    if (!fdp__pkt_set_vlan(pkt, tci)) {
        return;                 /* No headroom for the tag: not sent. */
    }
    output(aux, pkt, port, steal);
    *took |= steal;
}

/* The packet's outer tag: whether it has one and its TCI. */
static bool
pkt_tci(const struct fdp__pkt *pkt, uint16_t *tci)
{
    if (pkt->layout.l2_5 < 0) {
        *tci = 0;
        return false;
    }
    *tci = fdp__get16(pkt->data + pkt->layout.l2_5 + 2);
    return true;
}

void
fdp__normal_prefetch(struct fdp__normal *n, const struct fdp__port *in,
                     const struct fdp__pkt *pkt)
{
    if (pkt->layout.l2 < 0 || !in) {
        return;
    }
    const uint8_t *eth = pkt->data + pkt->layout.l2;
    const struct fdp__vlan_conf *c = port_conf(in);
    uint16_t tci;
    uint16_t vid = pkt_tci(pkt, &tci) ? tci & FDP_VLAN_VID_MASK : 0;
    uint16_t vlan = c->mode == FDP_VLAN_MODE_ACCESS || (!vid
                                                        && c->mode
                                                        != FDP_VLAN_MODE_TRUNK)
                    ? c->tag : vid;

    fdp__fdb_prefetch(n->fdb, mac_at(eth + 6), vlan);
    if (!(eth[0] & 1)) {
        fdp__fdb_prefetch(n->fdb, mac_at(eth), vlan);
    }
}

static bool
flood_all(struct fdp__port *const *ports, size_t n_ports,
          struct fdp__pkt *pkt, uint32_t in_no, bool steal,
          fdp__normal_output_fn *output, void *aux)
{
    size_t last = SIZE_MAX;

    for (size_t i = 0; i < n_ports; i++) {
        if (ports[i]->port_no != in_no) {
            last = i;
        }
    }
    for (size_t i = 0; i <= last && last != SIZE_MAX; i++) {
        if (ports[i]->port_no != in_no) {
            output(aux, pkt, ports[i]->port_no, steal && i == last);
        }
    }
    return steal && last != SIZE_MAX;
}

bool
fdp__normal_execute(struct fdp__normal *n, struct fdp__port *const *ports,
                    size_t n_ports, struct fdp__pkt *pkt, uint32_t reserved,
                    uint32_t in_no, bool steal,
                    fdp__normal_output_fn *output, void *aux)
{
    if (reserved == FDP_PORT_FLOOD || reserved == FDP_PORT_ALL) {
        return flood_all(ports, n_ports, pkt, in_no, steal, output, aux);
    }
    if (reserved != FDP_PORT_NORMAL || pkt->layout.l2 < 0
        || pkt->size < (uint32_t) pkt->layout.l2 + 14) {
        if (reserved == FDP_PORT_LOCAL) {
            __atomic_fetch_add(&n->n_local_dropped, 1, __ATOMIC_RELAXED);
        }
        return false;
    }

    uint16_t tci;
    bool tagged = pkt_tci(pkt, &tci);
    struct fdp__port *in = NULL;
    for (size_t i = 0; i < n_ports; i++) {
        if (ports[i]->port_no == in_no) {
            in = ports[i];
            break;
        }
    }
    struct fdp__normal_verdict v;
    fdp__normal_decide(n, pkt->data + pkt->layout.l2, tagged, tci, in, in_no,
                       fdp__fdb_now(n->fdb), true, &v);

    bool took = false;
    if (v.action == FDP__NORMAL_FORWARD) {
        const struct fdp__port *out = NULL;
        for (size_t i = 0; i < n_ports; i++) {
            if (ports[i]->port_no == v.port) {
                out = ports[i];
                break;
            }
        }
        if (out) {
            send_tagged(pkt, v.port, output_tci(port_conf(out), v.vlan, tci),
                        steal, output, aux, &took);
        }
    } else if (v.action == FDP__NORMAL_FLOOD) {
        size_t last = SIZE_MAX;
        for (size_t i = 0; i < n_ports; i++) {
            if (ports[i]->port_no != in_no
                && carries(port_conf(ports[i]), v.vlan)) {
                last = i;
            }
        }
        for (size_t i = 0; i <= last && last != SIZE_MAX; i++) {
            const struct fdp__vlan_conf *c = port_conf(ports[i]);
            if (ports[i]->port_no != in_no && carries(c, v.vlan)) {
                send_tagged(pkt, ports[i]->port_no,
                            output_tci(c, v.vlan, tci), steal && i == last,
                            output, aux, &took);
            }
        }
    }
    if (!took) {
        /* Open vSwitch restores the flow's VLANs after NORMAL. */
        fdp__pkt_set_vlan(pkt, tagged ? tci : 0);
    }
    return took;
}

static void
format_mac(char *buf, size_t size, const uint8_t *p)
{
    snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x",
             p[0], p[1], p[2], p[3], p[4], p[5]);
}

void
fdp__normal_verdict_format(const struct fdp__normal_verdict *v,
                           const uint8_t eth[12], uint32_t in_no,
                           char *buf, size_t size)
{
    char src[18], dst[18];
    char learned[96] = "";

    format_mac(dst, sizeof dst, eth);
    format_mac(src, sizeof src, eth + 6);
    if (v->learn == FDP__NORMAL_LEARNED) {
        snprintf(learned, sizeof learned, "learned %s on port %" PRIu32
                 " VLAN %u; ", src, in_no, v->vlan);
    } else if (v->learn == FDP__NORMAL_KNOWN) {
        snprintf(learned, sizeof learned, "%s already on port %" PRIu32
                 " VLAN %u; ", src, in_no, v->vlan);
    }
    switch (v->action) {
    case FDP__NORMAL_DROP:
        snprintf(buf, size, "%sdropped: %s", learned, v->why);
        break;
    case FDP__NORMAL_FORWARD:
        snprintf(buf, size, "%s%s learned on port %" PRIu32 ": forwarded",
                 learned, dst, v->port);
        break;
    case FDP__NORMAL_FLOOD:
        snprintf(buf, size, "%s%s %s: flooded to VLAN %u", learned, dst,
                 eth[0] & 1 ? "is multicast" : "is not learned", v->vlan);
        break;
    }
}

/* ---------------------------------------------------------------------- */
/* The datapath's control functions (flowdp/normal.h).                     */

int
fdp_dp_port_set_vlan(struct fdp_dp *dp, uint32_t port_no,
                     const struct fdp_port_vlan *cfg)
{
    struct fdp__vlan_conf *c = fdp__vlan_conf_create(cfg);

    if (!c) {
        return ENOMEM;
    }
    fdp__dp_lock(dp);
    struct fdp__port *p = fdp__dp_port_locked(dp, port_no);
    if (!p) {
        fdp__dp_unlock(dp);
        free(c);
        return ENOENT;
    }
    struct fdp__vlan_conf *old = p->vlan;
    FDP_RCU_SET(p->vlan, c);
    /* No pmd reads the old configuration after a grace period; the port
     * forgets what it learned under it, as vswitchd's reconfiguration
     * does (its addresses may now be in other VLANs). */
    fdp__rcu_synchronize();
    free(old);
    fdp__fdb_flush(fdp__normal_fdb(fdp__dp_normal(dp)), port_no);
    fdp__dp_unlock(dp);
    return 0;
}

int
fdp_dp_port_get_vlan(struct fdp_dp *dp, uint32_t port_no,
                     struct fdp_port_vlan *cfg)
{
    fdp__dp_lock(dp);
    struct fdp__port *p = fdp__dp_port_locked(dp, port_no);
    if (!p) {
        fdp__dp_unlock(dp);
        return ENOENT;
    }
    if (p->vlan) {
        *cfg = p->vlan->cfg;
    } else {
        fdp_port_vlan_init(cfg);
    }
    fdp__dp_unlock(dp);
    return 0;
}

size_t
fdp_dp_fdb_dump(struct fdp_dp *dp, struct fdp_fdb_entry *entries, size_t max)
{
    struct fdp__fdb *fdb = fdp__normal_fdb(fdp__dp_normal(dp));
    struct fdp__fdb_entry *e = NULL;
    size_t n = fdp__fdb_dump(fdb, NULL, 0);

    /* The table may grow between the two calls: copy what fits. */
    if (max) {
        e = malloc(max * sizeof *e);
        if (!e) {
            return n;
        }
        n = fdp__fdb_dump(fdb, e, max);
    }
    for (size_t k = 0; k < n && k < max; k++) {
        entries[k] = (struct fdp_fdb_entry) {
            .port = e[k].port, .vlan = e[k].vlan, .age = e[k].age,
        };
        for (int b = 0; b < 6; b++) {
            entries[k].mac[b] = (uint8_t) (e[k].mac >> (40 - 8 * b));
        }
    }
    free(e);
    return n;
}

void
fdp_dp_fdb_sync(struct fdp_dp *dp)
{
    fdp__fdb_sync(fdp__normal_fdb(fdp__dp_normal(dp)));
}

void
fdp_dp_fdb_flush(struct fdp_dp *dp)
{
    fdp__fdb_flush(fdp__normal_fdb(fdp__dp_normal(dp)), 0);
}

int
fdp_dp_fdb_set_size(struct fdp_dp *dp, uint32_t max_entries)
{
    return fdp__fdb_set_max(fdp__normal_fdb(fdp__dp_normal(dp)), max_entries);
}

int
fdp_dp_fdb_set_aging(struct fdp_dp *dp, uint32_t seconds)
{
    return fdp__fdb_set_aging(fdp__normal_fdb(fdp__dp_normal(dp)), seconds);
}

void
fdp_dp_fdb_warp(struct fdp_dp *dp, uint32_t seconds)
{
    fdp__fdb_warp(fdp__normal_fdb(fdp__dp_normal(dp)), seconds);
}

void
fdp_dp_fdb_get_stats(struct fdp_dp *dp, struct fdp_fdb_stats *st)
{
    struct fdp__normal *n = fdp__dp_normal(dp);
    struct fdp__fdb_stats f;

    fdp__fdb_get_stats(n->fdb, &f);
    *st = (struct fdp_fdb_stats) {
        .n_entries = f.n_entries, .max_entries = f.max_entries,
        .aging = f.aging, .n_learned = f.n_learned, .n_moved = f.n_moved,
        .n_expired = f.n_expired, .n_evicted = f.n_evicted,
        .n_notes_dropped = f.n_notes_dropped,
        .n_local_dropped = __atomic_load_n(&n->n_local_dropped,
                                           __ATOMIC_RELAXED),
    };
}

void
fdp_dp_normal_explain(struct fdp_dp *dp, const struct fdp_key *key,
                      char *buf, size_t size)
{
    struct fdp__normal *n = fdp__dp_normal(dp);
    uint64_t dst = (uint64_t) fdp__key_get(key, FDP_F_DL_DST);
    uint64_t src = (uint64_t) fdp__key_get(key, FDP_F_DL_SRC);
    uint16_t tci = (uint16_t) fdp__key_get(key, FDP_F_VLAN_TCI);
    uint32_t in_no = (uint32_t) fdp__key_get(key, FDP_F_IN_PORT);
    uint8_t eth[12];
    struct fdp__normal_verdict v;

    for (int b = 0; b < 6; b++) {
        eth[b] = (uint8_t) (dst >> (40 - 8 * b));
        eth[6 + b] = (uint8_t) (src >> (40 - 8 * b));
    }
    /* The key's vlan_tci has the CFI bit set when the frame is tagged
     * (Open vSwitch's convention). */
    fdp__rcu_read_lock();
    fdp__dp_lock(dp);
    const struct fdp__port *in = fdp__dp_port_locked(dp, in_no);
    fdp__normal_decide(n, eth, tci & FDP_VLAN_CFI, tci & ~FDP_VLAN_CFI, in,
                       in_no, fdp__fdb_now(n->fdb), false, &v);
    fdp__dp_unlock(dp);
    fdp__rcu_read_unlock();
    fdp__normal_verdict_format(&v, eth, in_no, buf, size);
}
