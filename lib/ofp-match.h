/*
 * The OpenFlow codec's matches and fields (lib/ofp-match.c): NXM and OXM
 * entries, OpenFlow 1.1+'s ofp_match with OXM (OFPMT_OXM), and OpenFlow
 * 1.0's fixed 40-byte ofp_match with wildcards.
 *
 * Every field's wire identity (NXM/OXM class, field number, width) and
 * how its wire value maps to the key's value (a 16-bit OpenFlow 1.0 port
 * against OXM's 32-bit one, OXM_OF_VLAN_VID's OFPVID_PRESENT bit, the IP
 * DSCP in the low bits of OXM_OF_IP_DSCP against nw_tos's TOS byte,
 * NXM_NX_IP_FRAG's bits, ct_state's 32 bits over the key's 8...) come from
 * one table of rows keyed by enum fdp_field, next to lib/actions.c's NXM
 * names: encoding, decoding, set_field, reg_load, move and learn all read
 * it, and no code switches on a field.
 *
 * Decoders return 0 or an enum fdp_ofperr (lib/ofp-common.h) and fill a
 * struct fdp_match the caller initialised; they check prerequisites as
 * Open vSwitch does (OFPBMC_BAD_PREREQ), masks (OFPBMC_BAD_MASK), values
 * (OFPBMC_BAD_VALUE), duplicates (OFPBMC_DUP_FIELD) and unknown fields
 * (OFPBMC_BAD_FIELD).  Encoders append to a struct fdp__ofpbuf.
 */
#ifndef FDP_OFP_MATCH_H
#define FDP_OFP_MATCH_H 1

#include "lib/field.h"
#include "lib/ofp-common.h"

struct fdp_match;
struct fdp_tlv_map;

/* An NXM/OXM header: class (16 bits), field (7), hasmask (1), length (8),
 * as on the wire.  Experimenter OXM (class 0xffff) headers are followed by
 * a 32-bit experimenter id, which fdp__ofp_field_by_header() does not see
 * (the pull functions handle it). */
#define FDP_NXM_HEADER(CLASS, FIELD, HASMASK, LEN)                          \
    ((uint32_t) (CLASS) << 16 | (uint32_t) (FIELD) << 9                     \
     | (uint32_t) (HASMASK) << 8 | (uint32_t) (LEN))

struct fdp__ofp_field;          /* One row of the table (lib/ofp-match.c). */

/* The row for wire header 'header' (its hasmask bit and length are
 * ignored; 'experimenter' is the id after a class-0xffff header, else 0),
 * or NULL if flowdp has no such field. */
const struct fdp__ofp_field *fdp__ofp_field_by_header(uint32_t header,
                                                      uint32_t experimenter);

/* The row for 'f' as version 'v' writes it: OXM (OpenFlow 1.2+) if the
 * field has an OXM form, else NXM; NULL if the field has no wire form. */
const struct fdp__ofp_field *fdp__ofp_field_for(enum fdp_field f,
                                                enum fdp_ofp_version v);

/* The row named 'name' (Open vSwitch's header names: "NXM_OF_TCP_SRC",
 * "OXM_OF_PKT_REG0", "ERICOXM_OF_ICMPV6_ND_RESERVED"), or NULL. */
const struct fdp__ofp_field *fdp__ofp_field_by_name(const char *name);

/* fdp__ofp_field_for(), choosing among the wire fields that stand for
 * 'f' the first whose prerequisite 'm' meets (tp_src under nw_proto 17 is
 * NXM_OF_UDP_SRC / OXM_OF_UDP_SRC, icmp_type under IPv6 is ICMPv6's);
 * 'm' NULL, or a match that meets none, gives the first (TCP, ICMPv4). */
const struct fdp__ofp_field *fdp__ofp_field_for_match(
    enum fdp_field f, enum fdp_ofp_version v, const struct fdp_match *m);

/* Every row, for tests and tools: rows 0 to fdp__ofp_n_fields() - 1. */
size_t fdp__ofp_n_fields(void);
const struct fdp__ofp_field *fdp__ofp_field_at(size_t i);

/* What a row says.  fdp__ofp_field_id() is FDP_N_FIELDS for
 * tun_metadataN, whose N fdp__ofp_field_tun_md_index() gives (-1 for
 * every other row); their value is 1 to 32 bytes placed by a TLV map, so
 * n_bytes is 32, the most, and the value conversions below refuse them
 * (OFPBMC_BAD_FIELD): the match codec reads them through the map.
 * fdp__ofp_field_prereq() is what a decoder checks: Open vSwitch's
 * prerequisite, or flowdp's where its key needs more (ct_nw_src needs
 * IPv4, as its storage is shared with ct_ipv6_src's). */
const char *fdp__ofp_field_name(const struct fdp__ofp_field *);
int fdp__ofp_field_tun_md_index(const struct fdp__ofp_field *);
enum fdp__prereq fdp__ofp_field_prereq(const struct fdp__ofp_field *);
enum fdp_field fdp__ofp_field_id(const struct fdp__ofp_field *);
uint32_t fdp__ofp_field_header(const struct fdp__ofp_field *); /* No mask. */
uint32_t fdp__ofp_field_experimenter(const struct fdp__ofp_field *);
unsigned int fdp__ofp_field_n_bytes(const struct fdp__ofp_field *);
unsigned int fdp__ofp_field_n_bits(const struct fdp__ofp_field *);
bool fdp__ofp_field_maskable(const struct fdp__ofp_field *);
bool fdp__ofp_field_writable(const struct fdp__ofp_field *);

/* Converts between a wire value of fdp__ofp_field_n_bytes() bytes and the
 * key's value of the field.  The decoder returns OFPBMC_BAD_VALUE for a
 * value the key cannot hold. */
int fdp__ofp_field_from_wire(const struct fdp__ofp_field *,
                             const uint8_t *wire, fdp_u128 *value);
void fdp__ofp_field_to_wire(const struct fdp__ofp_field *, fdp_u128 value,
                            uint8_t *wire);
/* The same for masks (a mask's conversion differs from a value's for a
 * few fields, OXM_OF_VLAN_VID's present bit for one). */
int fdp__ofp_mask_from_wire(const struct fdp__ofp_field *,
                            const uint8_t *wire, fdp_u128 *mask);
void fdp__ofp_mask_to_wire(const struct fdp__ofp_field *, fdp_u128 mask,
                           uint8_t *wire);

/* NXM or OXM entries (either may appear, as Open vSwitch accepts), 'len'
 * bytes of 'r', into 'm'.  'tlv' maps tun_metadataN (may be NULL: then
 * those fields are OFPBMC_BAD_FIELD). */
int fdp__nx_match_pull(struct fdp__ofp_reader *r, size_t len,
                       const struct fdp_tlv_map *tlv, struct fdp_match *m);

/* fdp__nx_match_pull() for an NXT_FLOW_MOD or NXST_FLOW request, whose
 * nx_match may carry the flow's cookie and cookie mask (NXM_NX_COOKIE,
 * NXM_NX_COOKIE_W): stored in '*cookie' and '*cookie_mask' (both 0 if
 * absent; a second one is OFPBMC_DUP_FIELD).  Without these pointers the
 * cookie entry is OFPBMC_BAD_FIELD, as in Open vSwitch. */
int fdp__nx_match_pull_cookie(struct fdp__ofp_reader *r, size_t len,
                              const struct fdp_tlv_map *tlv,
                              struct fdp_match *m, uint64_t *cookie,
                              uint64_t *cookie_mask);

/* Appends 'm' as entries, OXM where a field has an OXM form and 'oxm' is
 * true, else NXM, in Open vSwitch's order (nx_put_raw()); returns the
 * bytes appended (not padded).  A range that is not a prefix has no wire
 * form: returns -1 (EINVAL) with nothing appended; so does any other bit
 * of the match that no entry expresses (tun_tos, tun_ttl, tun_metadata
 * without 'tlv', a partial mask on a field whose wire form takes none).
 * One exception, as in Open vSwitch: OXM's VLAN_VID and VLAN_PCP cannot
 * say every vlan_tci mask, and the PCP bits they cannot say are left out
 * ("vlan_tci=0", no tag, goes as OXM_OF_VLAN_VID(0), which decodes as
 * vlan_tci=0x0000/0x1fff: the same packets). */
int fdp__nx_match_put(struct fdp__ofpbuf *b, const struct fdp_match *m,
                      bool oxm, enum fdp_ofp_version v,
                      const struct fdp_tlv_map *tlv);

/* fdp__nx_match_put() in NXM with a cookie entry after the match's (Open
 * vSwitch's nx_put_match() for NXT_FLOW_MOD and NXST_FLOW requests):
 * none if 'cookie_mask' is 0, NXM_NX_COOKIE if it is all ones, else
 * NXM_NX_COOKIE_W. */
int fdp__nx_match_put_cookie(struct fdp__ofpbuf *b, const struct fdp_match *m,
                             const struct fdp_tlv_map *tlv, uint64_t cookie,
                             uint64_t cookie_mask);

/* OpenFlow 1.1+'s struct ofp_match header (type OFPMT_OXM, length) and
 * entries, padded to 8 bytes (1.2+; OpenFlow 1.1's OFPMT_STANDARD is
 * OFPBMC_BAD_TYPE). */
int fdp__ofp11_match_pull(struct fdp__ofp_reader *r,
                          const struct fdp_tlv_map *tlv, struct fdp_match *m);
int fdp__ofp11_match_put(struct fdp__ofpbuf *b, const struct fdp_match *m,
                         enum fdp_ofp_version v,
                         const struct fdp_tlv_map *tlv);

/* OpenFlow 1.0's 40-byte struct ofp_match.  Decoding drops the fields
 * whose prerequisites the match does not meet (Open vSwitch's
 * ofputil_normalize_match(), as ovs-vswitchd does with a flow mod) and
 * returns 0: every 40 bytes are a match.  Encoding follows
 * ofputil_match_to_ofp10_match(), an exact vlan_tci without the CFI bit
 * becoming dl_vlan 0xffff ("no tag"). */
#define FDP_OFP10_MATCH_LEN 40
int fdp__ofp10_match_decode(const uint8_t wire[FDP_OFP10_MATCH_LEN],
                            struct fdp_match *m);
/* -1 (EINVAL) if 'm' needs more than OpenFlow 1.0 can say (the caller
 * then uses NXM: NXT_FLOW_MOD, NXST_FLOW). */
int fdp__ofp10_match_encode(const struct fdp_match *m,
                            uint8_t wire[FDP_OFP10_MATCH_LEN]);

#endif /* FDP_OFP_MATCH_H */
