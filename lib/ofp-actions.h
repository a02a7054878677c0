/*
 * The OpenFlow codec's actions and instructions (lib/ofp-actions.c).
 *
 * One wire form per action kind and version family, chosen by a column of
 * the action table (lib/actions-internal.h's FDP__ACTION_KINDS): OpenFlow
 * 1.0's actions, OpenFlow 1.1+'s actions and instructions, and the Nicira
 * (NXAST_*) and ONF experimenter actions Open vSwitch 3.1 encodes
 * (lib/ofp-actions.c there): what it sends for an action is what flowdp
 * sends, byte for byte, so that ovs-ofctl prints flowdp's dumps as it
 * prints ovs-vswitchd's.
 *
 * Decoders return 0 or an enum fdp_ofperr (lib/ofp-common.h) and build a
 * struct fdp_actions; they check lengths, padding that must be zero,
 * ports, tables and fields, as Open vSwitch does.  Whether an action's
 * prerequisites hold for a flow's match is the pipeline's check when the
 * flow is inserted (OFPBAC_MATCH_INCONSISTENT is the message layer's
 * mapping of that failure).
 */
#ifndef FDP_OFP_ACTIONS_H
#define FDP_OFP_ACTIONS_H 1

#include "lib/ofp-common.h"

struct fdp_actions;
struct fdp_tlv_map;

/* An action list ('len' bytes of 'r'), as OpenFlow 1.0 (v == FDP_OFP10)
 * or 1.1+ writes it: packet-out, group buckets, write_actions.  On success
 * '*actsp' is a new list the caller frees with fdp_actions_destroy(). */
int fdp__ofp_actions_pull(struct fdp__ofp_reader *r, size_t len,
                          enum fdp_ofp_version v,
                          const struct fdp_tlv_map *tlv,
                          struct fdp_actions **actsp);

/* OpenFlow 1.1+'s instructions ('len' bytes of 'r'): apply_actions,
 * clear_actions, write_actions, write_metadata, goto_table, meter (1.3,
 * 1.4; 1.5 has the meter action), as one flowdp action list, in the order
 * Open vSwitch runs them.  What flowdp cannot run is refused with the
 * error Open vSwitch gives (OFPBIC_UNSUP_INST for what it lacks). */
int fdp__ofp_instructions_pull(struct fdp__ofp_reader *r, size_t len,
                               enum fdp_ofp_version v,
                               const struct fdp_tlv_map *tlv,
                               struct fdp_actions **actsp);

/* Appends 'acts' as an action list of version 'v' (OpenFlow 1.0's form
 * for FDP_OFP10, NX actions where OpenFlow has none); returns the bytes
 * appended, or -1 (EINVAL) if an action has no wire form (nothing is then
 * appended). */
int fdp__ofp_actions_put(struct fdp__ofpbuf *b,
                         const struct fdp_actions *acts,
                         enum fdp_ofp_version v,
                         const struct fdp_tlv_map *tlv);

/* Appends 'acts' as OpenFlow 1.1+ instructions (goto_table,
 * write_metadata and meter as instructions, the rest in apply_actions),
 * as Open vSwitch's ofpacts_put_openflow_instructions(); returns the
 * bytes appended or -1 (EINVAL). */
int fdp__ofp_instructions_put(struct fdp__ofpbuf *b,
                              const struct fdp_actions *acts,
                              enum fdp_ofp_version v,
                              const struct fdp_tlv_map *tlv);

/* The same, for the actions of a flow with match 'match' (may be NULL):
 * the match chooses among a field's wire names (tp_src is
 * OXM_OF_UDP_SRC under udp) and says whether the packet is tagged, so
 * that mod_vlan_vid in 1.1+ pushes a tag first only when it may not be
 * (Open vSwitch's flow_has_vlan), as Open vSwitch encodes a flow's
 * actions.  The functions above are these with a NULL match. */
struct fdp_match;
int fdp__ofp_actions_put_match(struct fdp__ofpbuf *b,
                               const struct fdp_actions *acts,
                               enum fdp_ofp_version v,
                               const struct fdp_tlv_map *tlv,
                               const struct fdp_match *match);
int fdp__ofp_instructions_put_match(struct fdp__ofpbuf *b,
                                    const struct fdp_actions *acts,
                                    enum fdp_ofp_version v,
                                    const struct fdp_tlv_map *tlv,
                                    const struct fdp_match *match);

#endif /* FDP_OFP_ACTIONS_H */
