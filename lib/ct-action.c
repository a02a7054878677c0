/*
 * Resolving a flow's ct action into the record the datapath runs.
 *
 * Theory of operation
 * ===================
 *
 * A flow keeps its ct action in the flow form (lib/actions-internal.h,
 * FDP_ACT_CT): a zone that may be a subfield of the key, a nat spec, and
 * nested exec() writes to ct_mark and ct_label, some of them moves whose
 * sources are registers or other fields.  The datapath cannot read the
 * pipeline's registers (they live only in the pipeline's key while a
 * packet is classified), so the pipeline resolves the action, against its
 * key at the moment the action runs, into a struct fdp__dp_ct whose every
 * part is a constant (lib/ct-action.h).  This file is that resolution,
 * shared by the pipeline (which composes the record) and by anything that
 * wants to show what a ct action will do to a packet (flowdp-ctl trace).
 *
 * The order of evaluation is Open vSwitch 3.1's (ofproto-dpif-xlate.c,
 * compose_conntrack_action()): the zone is read first, from the key as it
 * is when the action runs; then the exec() actions run in order on a copy
 * of the key's ct_mark and ct_label, a move reading the copy (so that
 * "exec(set_field:1->ct_mark,move:NXM_NX_CT_MARK[]->NXM_NX_CT_LABEL[0..31])"
 * moves the 1); what the datapath gets is the copy's bits under the union
 * of the bits written, as put_ct_mark() and put_ct_label() send the
 * flow's value under the wildcard mask the exec() actions built.
 *
 * Worked example.  The key has reg0 = 0x00050007 and ct_mark = 0xf0, and
 * the action is
 *   ct(commit,zone=NXM_NX_REG0[16..31],table=3,
 *      exec(set_field:0x1/0x1->ct_mark,move:NXM_NX_REG0[0..7]->NXM_NX_CT_LABEL[8..15]))
 * The zone is reg0's bits 16-31, 5.  The mark write gives the copy
 * ct_mark 0xf1 with mask 0x1, so mark = 0x1, mark_mask = 0x1 (the
 * connection's other mark bits are left as they are).  The move copies
 * reg0's low byte 0x07 to label bits 8-15: label = 0x700, label_mask =
 * 0xff00.  flags = COMMIT | RECIRC, table 3, and in_port and the nine
 * frozen words (metadata and the registers, reg0 among them) are the
 * key's, for the continuation in table 3.
 *
 * Thread-safety: fdp__ct_resolve() is pure; call it from any thread.
 */
#include <config.h>

#include "lib/ct-action.h"

#include <errno.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/field.h"

/* The 128-bit value and mask of a nested exec() SET_MASKED record. */
static fdp_u128
exec_word_pair(const struct fdp__action *e, unsigned int i)
{
    const uint64_t *w = (const uint64_t *) e + 1 + 2 * i;

    return (fdp_u128) w[0] << 64 | w[1];
}

/* Writes 'value' under 'mask' (field units) into ct field 'f' of 'copy',
 * and records the bits in 'written'. */
static void
exec_write(struct fdp_key *copy, enum fdp_field f, fdp_u128 value,
           fdp_u128 mask, fdp_u128 *written)
{
    fdp_u128 old = fdp__key_get(copy, f);

    fdp__key_set(copy, f, (old & ~mask) | (value & mask));
    *written |= mask;
}

int
fdp__ct_resolve(const struct fdp__action *ct, const struct fdp_key *key,
                struct fdp__dp_ct *out)
{
    if (ct->type != FDP_ACT_CT || ct->flags & FDP__ACT_CT_RESOLVED) {
        return EINVAL;
    }

    unsigned int flags = fdp__action_ct_flags(ct);
    memset(out, 0, sizeof *out);
    out->flags = (uint8_t) flags;

    /* The zone, read before exec() runs, as Open vSwitch reads it. */
    if (ct->flags & FDP__ACT_CT_ZONE_FIELD) {
        if (ct->field >= FDP_N_FIELDS) {
            return EINVAL;
        }
        out->zone = (uint16_t) (fdp__key_get(key, ct->field)
                                >> fdp__action_ct_zone(ct));
    } else {
        out->zone = (uint16_t) fdp__action_ct_zone(ct);
    }

    if (flags & FDP__DPCT_NAT) {
        memcpy(&out->nat, (const uint64_t *) ct + 1, sizeof out->nat);
        out->nat.exec_pos = 0;  /* Spelling only. */
    }

    /* exec(): on a copy of the key, so that moves read what earlier
     * writes of the same exec() left. */
    struct fdp_key copy = *key;
    fdp_u128 mark_mask = 0, label_mask = 0;
    const uint64_t *end = fdp__action_ct_end(ct);
    for (const uint64_t *w = fdp__action_ct_exec(ct); w < end;) {
        const struct fdp__action *e = (const struct fdp__action *) w;
        if (!e->n_words || w + e->n_words > end) {
            return EINVAL;
        }
        enum fdp_field dst = (enum fdp_field) e->field;
        fdp_u128 value, mask;
        if (e->type == FDP_ACT_SET_MASKED && e->n_words == 5) {
            value = exec_word_pair(e, 0);
            mask = exec_word_pair(e, 1);
        } else if (e->type == FDP_ACT_MOVE) {
            struct fdp__move mv = fdp__action_move(e);
            if (mv.src >= FDP_N_FIELDS) {
                return EINVAL;
            }
            mask = fdp__ones(mv.n_bits) << mv.dst_ofs;
            value = ((fdp__key_get(&copy, mv.src) >> mv.src_ofs)
                     & fdp__ones(mv.n_bits)) << mv.dst_ofs;
        } else {
            return EINVAL;
        }
        if (dst == FDP_F_CT_MARK) {
            exec_write(&copy, dst, value, mask, &mark_mask);
        } else if (dst == FDP_F_CT_LABEL) {
            exec_write(&copy, dst, value, mask, &label_mask);
        } else {
            return EINVAL;
        }
        w += e->n_words;
    }
    mark_mask &= UINT32_MAX;
    out->mark_mask = (uint32_t) mark_mask;
    out->mark = (uint32_t) fdp__key_get(&copy, FDP_F_CT_MARK)
                & out->mark_mask;
    out->label_mask = fdp__to_value(label_mask);
    out->label = fdp__to_value(fdp__key_get(&copy, FDP_F_CT_LABEL)
                               & label_mask);

    if (flags & FDP__DPCT_RECIRC) {
        out->table = (uint8_t) fdp__action_ct_table(ct);
        out->in_port = (uint32_t) fdp__key_get(key, FDP_F_IN_PORT);
        memcpy(out->frozen, &key->w[FDP_KEY_PACKET_WORDS],
               sizeof out->frozen);
    }
    return 0;
}
