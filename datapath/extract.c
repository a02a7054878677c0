/*
 * Packet parsing: Ethernet frames to flow keys.
 *
 * What it is for
 * ==============
 * Every received packet is parsed once, into the flow key the exact-match
 * cache and the table look up; the datapath wants its hash too.  The key
 * must be the one Open vSwitch's flow_extract() (lib/flow.c, 3.1) gives for
 * the same bytes, so that flows written for OVS match the same packets:
 * `flowdp-ctl parse-pcap` and `ovs-ofctl parse-pcap` print the same lines
 * (tests/parse-pcap.at compares them on odd packets and on kernel traffic).
 *
 * Design
 * ======
 * The body (datapath/extract-impl.h, inline) builds the twelve key words in
 * locals at positions fixed at compile time by the field list (FDP__FIELDS,
 * lib/field.h) and the caller stores each word once.  Every read is checked
 * against the bytes left first: the header's own length, then the IP total
 * length or payload length (never the Ethernet padding), so a truncated or
 * lying header ends parsing at the last layer OVS would accept.
 * The common packet (Ethernet, at most one 802.1Q tag, IPv4 without
 * options, not a fragment, whole UDP or TCP) goes through a straight-line
 * path, fdp__extract_fast(), whose checks imply the general parser's, so
 * that it fills only the first five words and the rest are zero; anything
 * else goes through the general parser, fdp__extract_words(), phase by
 * phase (Ethernet and tags, network header, transport header).
 *
 * fdp__packet_extract_hash() is the datapath's entry: with SSE4.2 and
 * CRC32C as the fast hash, datapath/extract-sse42.c runs the same body and
 * feeds the words to crc32q as they are stored (for the common packet,
 * three short chains over its five words joined with carry-less
 * multiplies that also skip the seven zero words); otherwise it parses
 * and calls fdp_hash_fast().  Building the words in locals at fixed
 * positions, not through the field table, is what makes the parse cheap
 * (flowdp-bench extract; figures in docs/PERFORMANCE.md, "Figures behind
 * design choices").
 *
 * What is extracted, as flow_extract()
 * ====================================
 *   - Frames shorter than 14 bytes: only in_port.
 *   - VLAN: at most two tags (0x8100 or 0x88a8), each only if its TCI and
 *     the next type follow; the outer one goes to vlan_tci with the CFI bit
 *     set ("tagged").  A tag with nothing after it leaves dl_type 0x8100
 *     (the TPID) and no vlan_tci; after two tags, a third TPID is dl_type.
 *   - 802.3 (type < 0x600): LLC/SNAP with OUI 0 gives its type if that is
 *     >= 0x600; anything else is dl_type 0x05ff.
 *   - IPv4: refused (only dl_type kept) if shorter than 20 bytes, IHL < 5,
 *     IHL past the frame, total length past the frame or below the IHL;
 *     the version nibble is not checked.  Options are skipped; nw_tos is
 *     the whole TOS byte (DSCP and ECN); ip_frag has FDP_FRAG_ANY for every
 *     fragment and FDP_FRAG_LATER for offsets > 0, which have no transport
 *     fields.
 *   - IPv6: refused if shorter than 40 bytes or the payload length runs
 *     past the frame.  Hop-by-hop, routing, destination options, AH and
 *     fragment headers are walked inside the payload length; one cut short
 *     keeps only ipv6_src and ipv6_dst (as OVS, which stores the label,
 *     tos, ttl, proto and frag after the walk).  A fragment header with
 *     offset and flags all zero is no fragment; a later fragment has
 *     nw_proto 44 (the fragment header's number).  59 ("no next header")
 *     and unknown protocols end the walk with nw_proto set.
 *   - TCP (20 bytes and its data offset, >= 5 words), UDP (8), SCTP (12),
 *     ICMP, ICMPv6 and IGMP (8: type, code, checksum and 4 more), within
 *     the IP length, else no transport fields; ICMP and IGMP type and code
 *     go to tp_src and tp_dst.  tcp_flags is the low 12 bits of the flags
 *     word.
 *   - IPv6 neighbour solicitations and advertisements (ICMPv6 type 135 or
 *     136, code 0), as OVS's parse_icmpv6(): nd_reserved (the 32 bits
 *     after the checksum), nd_target if the 16 bytes are there, then the
 *     options: the first source or target link-layer option of 8 bytes
 *     gives nd_sll or nd_tll and nd_options_type; a second one of a kind
 *     already set zeroes the target and both addresses; a zero or overlong
 *     length ends the walk (fdp__extract_nd()).
 *   - ARP and RARP: Ethernet/IPv4 only (hrd 1, pro 0x0800, hln 6, pln 4,
 *     28 bytes); the opcode goes to nw_proto only if it fits 8 bits.
 *
 * Deliberate differences from flow_extract()
 * ==========================================
 * flowdp's key has no room for these (key.h), so they are not extracted
 * and parse-pcap does not print them:
 *   - the second VLAN tag (OVS's vlan_tci1, dl_vlan1, dl_vlan_pcp1): flowdp
 *     keeps the outer tag only; the inner one is parsed over;
 *   - neighbour discovery behind IPv4 (protocol 58 in an IPv4 header),
 *     which OVS parses but nothing can match or print, as every ND field
 *     needs dl_type 0x86dd (key.h keeps nd_reserved in nw_src's bits);
 *   - MPLS labels (dl_type 0x8847/0x8848 is kept, nothing after it), the
 *     IGMP group address, NSH;
 *   - metadata OVS carries beside the headers (tunnel, conntrack, skb
 *     priority, packet type: flowdp is Ethernet only).
 *
 * Thread-safety: pure; any thread.
 */
#include <config.h>

#include <flowdp/datapath.h>

#include <string.h>

#include "datapath/extract-impl.h"
#include "datapath/extract-internal.h"
#include <flowdp/hash.h>
#include "lib/hash-private.h"

void
fdp_packet_extract(const void *data, size_t size, uint32_t in_port,
                   struct fdp_key *key, struct fdp_packet_layout *layout)
{
    struct fdp_packet_layout l;
    uint64_t w[FDP_KEY_PACKET_WORDS];

    if (fdp__extract_fast(data, size, in_port, w, &l)) {
#define ZERO_REST(i) if (i >= FDP__FAST_WORDS) { w[i] = 0; }
        FDP__FOR_EACH_WORD(ZERO_REST)
#undef ZERO_REST
    } else {
        fdp__extract_words(data, size, in_port, w, &l);
    }
#define STORE(i) key->w[i] = w[i];
    FDP__FOR_EACH_WORD(STORE)
#undef STORE
    fdp__zero_pipeline_words(key);
    if (layout) {
        *layout = l;
    }
}

/* fdp__packet_extract_hash() where the fast hash is not the hardware
 * CRC32C: two passes.  Out of line, so that the dispatch above it is a
 * compare and a jump. */
static __attribute__((noinline)) uint32_t
extract_then_hash(const void *data, size_t size, uint32_t in_port,
                  uint32_t basis, struct fdp_key *key,
                  struct fdp_packet_layout *layout)
{
    fdp_packet_extract(data, size, in_port, key, layout);
    return fdp_hash_fast(key->w, FDP_KEY_PACKET_WORDS, basis);
}

/* fdp__packet_extract_hash()'s implementations, best first, generic last
 * (lib/cpu-internal.h).  Each row but the last fuses one fast hash into
 * the parse ('fused').  The parser selects no row by itself: its hash must
 * be fdp_hash_fast(), which lib/hash.c selected through fdp__cpu_select()
 * and flowdp-bench may switch between runs (fdp__hash_set_fast()), so each
 * call takes the row that fuses the current fast hash.  The table is a
 * constant: the compiler turns the loop into one compare and direct
 * calls. */
struct extract_impl {
    struct fdp__cpu_impl cpu;
    uint32_t (*fused)(const uint64_t *words, size_t n_words, uint32_t basis);
    uint32_t (*extract_hash)(const void *data, size_t size, uint32_t in_port,
                             uint32_t basis, struct fdp_key *key,
                             struct fdp_packet_layout *layout);
};
static const struct extract_impl extract_impls[] = {
#ifdef FDP_HAVE_SSE42
    { { "sse42", FDP_CPU_SSE42, NULL }, fdp__hash_crc32c_sse42,
      fdp__packet_extract_hash_sse42 },
#endif
    { { "generic", FDP_CPU_GENERIC, NULL }, NULL, extract_then_hash },
};

uint32_t
fdp__packet_extract_hash(const void *data, size_t size, uint32_t in_port,
                         uint32_t basis, struct fdp_key *key,
                         struct fdp_packet_layout *layout)
{
    /* The pointer is a row's fused hash only once lib/hash.c's selection
     * has run and the CPU and FLOWDP_CPU allow that row, so no row's code
     * runs where it cannot. */
    uint32_t (*fast)(const uint64_t *, size_t, uint32_t)
        = __atomic_load_n(&fdp__hash_fast_fn, __ATOMIC_RELAXED);

    for (size_t i = 0; i + 1 < FDP_ARRAY_SIZE(extract_impls); i++) {
        if (fast == extract_impls[i].fused) {
            return extract_impls[i].extract_hash(data, size, in_port, basis,
                                                 key, layout);
        }
    }
    return extract_then_hash(data, size, in_port, basis, key, layout);
}
