/*
 * TCP connection tracking: pf's state machine and window tracking, as
 * Open vSwitch 3.1's lib/conntrack-tcp.c has them (itself from OpenBSD's
 * pf, after Guido van Rooij's "Real Stateful TCP Packet Filtering in IP
 * Filter").
 *
 * Each side of a connection (struct fdp__ct_peer) remembers the highest
 * sequence number it sent plus one (seqlo), the highest the other side's
 * window lets it send (seqhi), its largest unscaled window and its window
 * scale.  A segment is in window when its last byte is below seqhi, its
 * first no more than one maximum window behind seqlo, and its
 * acknowledgement neither more than MAX_ACK_WINDOW behind nor more than
 * MAX_ACK_WINDOW << scale ahead of what the other side sent; a reset must
 * carry seqlo exactly (or one off).  In-window segments move the states
 * (SYN_SENT, ESTABLISHED on the other side's ACK, CLOSING on FIN,
 * FIN_WAIT_2 on the ACK of a FIN, TIME_WAIT on RST) and the timeout class;
 * segments just outside, while one side is not yet or no longer
 * synchronised, are accepted without a timeout refresh (pf's "loose"
 * case: shotgunned SYNs, a connection picked up mid-stream, stray packets
 * after a close); the rest are invalid.  A SYN on a connection both of
 * whose sides are at FIN_WAIT_2 or later ends it so that a new one can
 * start with the same ports.
 *
 * Worked example (no window scaling, no payload): the client's SYN seq
 * 1000 win 500 creates the connection with peer[0] = { seqlo 1000, seqhi
 * 1002, max_win 500, SYN_SENT } and peer[1] = { seqhi 1, max_win 1,
 * CLOSED }.  The server's SYN-ACK seq 5000 ack 1001 win 800 is the
 * reply side's first packet: end = 5001, seqlo = 5000, seqhi = 5001 +
 * 500 = 5501, state SYN_SENT; it is in window (5501 >= 5001; ackskew =
 * 1000 - 1001 = -1), so peer[0].seqhi becomes 1001 + 800 = 1801 and, as
 * it ACKs a side in SYN_SENT, peer[0] becomes ESTABLISHED: timeout
 * OPENING, and the SYN-ACK is +est+rpl (the acknowledgement skew is not
 * checked on a side's first packet).  The client's ACK seq
 * 1001 ack 5001 makes peer[1] ESTABLISHED: both sides established,
 * timeout ESTABLISHED (24 h).
 *
 * Thread-safety: called under the connection's lock (conntrack.c).
 */
#include <config.h>

#include "datapath/conntrack-private.h"

#include "datapath/bytes.h"

enum {
    TCP_FIN = 0x01,
    TCP_SYN = 0x02,
    TCP_RST = 0x04,
    TCP_PSH = 0x08,
    TCP_ACK = 0x10,
    TCP_URG = 0x20,
};

/* TCP options (RFC 793, RFC 7323). */
enum { TCPOPT_EOL = 0, TCPOPT_NOP = 1, TCPOPT_WINDOW = 3 };

/* The largest window scale RFC 7323 allows. */
#define TCP_MAX_WSCALE 14

/* 'wscale' flags: the side announced a scale (the low bits hold it), or
 * the connection was picked up without its SYNs so the scale is
 * unknown (and assumed the largest). */
#define WSCALE_FLAG 0x80
#define WSCALE_UNKNOWN 0x40
#define WSCALE_MASK 0xf

/* How far an acknowledgement may lag: one maximum window plus 1500, pf's
 * fudge factor for one reassembled fragment. */
#define MAX_ACK_WINDOW (0xffff + 1500)

/* Sequence number comparisons modulo 2^32. */
static inline bool seq_gt(uint32_t a, uint32_t b) { return (int32_t) (a - b) > 0; }
static inline bool seq_geq(uint32_t a, uint32_t b) { return (int32_t) (a - b) >= 0; }

static uint16_t
tcp_flags(const uint8_t *tcp)
{
    return fdp__get16(tcp + 12) & 0x0fff;
}

static size_t
tcp_header_len(const uint8_t *tcp)
{
    return (size_t) (tcp[12] >> 4) * 4;
}

/* pf_normalize_tcp()'s flag checks, which Open vSwitch applies always. */
static bool
tcp_invalid_flags(uint16_t flags)
{
    if (flags & TCP_SYN) {
        if (flags & (TCP_RST | TCP_FIN)) {
            return true;
        }
    } else if (!(flags & (TCP_ACK | TCP_RST))) {
        return true;
    }
    /* FIN, PSH and URG only with ACK. */
    return !(flags & TCP_ACK) && (flags & (TCP_FIN | TCP_PSH | TCP_URG));
}

/* The window scale option of a SYN, with WSCALE_FLAG, or 0. */
static uint8_t
tcp_get_wscale(const uint8_t *tcp)
{
    int len = (int) tcp_header_len(tcp) - 20;
    const uint8_t *opt = tcp + 20;
    uint8_t wscale = 0;

    while (len >= 3) {
        if (opt[0] == TCPOPT_EOL) {
            break;
        } else if (opt[0] == TCPOPT_NOP) {
            opt++;
            len--;
            continue;
        }
        if (opt[0] == TCPOPT_WINDOW) {
            wscale = (opt[2] < TCP_MAX_WSCALE ? opt[2] : TCP_MAX_WSCALE)
                     | WSCALE_FLAG;
        }
        int optlen = opt[1] < 2 ? 2 : opt[1];
        len -= optlen;
        opt += optlen;
    }
    return wscale;
}

bool
fdp__ct_tcp_valid_new(const uint8_t *tcp, size_t size)
{
    (void) size;
    uint16_t flags = tcp_flags(tcp);

    /* A SYN-ACK may not open a connection: a new one starts with a SYN,
     * or is an established one picked up mid-stream. */
    return !tcp_invalid_flags(flags)
           && (flags & (TCP_SYN | TCP_ACK)) != (TCP_SYN | TCP_ACK);
}

void
fdp__ct_tcp_new_conn(struct fdp__ct_conn *conn, const uint8_t *tcp,
                     size_t size, enum fdp__ct_tm *tm)
{
    struct fdp__ct_peer *src = &conn->peer[0];
    struct fdp__ct_peer *dst = &conn->peer[1];
    uint16_t flags = tcp_flags(tcp);
    uint32_t p_len = (uint32_t) (size - tcp_header_len(tcp));

    src->seqlo = fdp__get32(tcp + 4);
    src->seqhi = src->seqlo + p_len + 1;
    if (flags & TCP_SYN) {
        src->seqhi++;
        src->wscale = tcp_get_wscale(tcp);
    } else {
        src->wscale = WSCALE_UNKNOWN;
        dst->wscale = WSCALE_UNKNOWN;
    }
    uint16_t win = fdp__get16(tcp + 14);
    src->max_win = win > 1 ? win : 1;
    if (src->wscale & WSCALE_MASK) {
        /* Remove the scale factor from the initial window. */
        uint32_t unit = UINT32_C(1) << (src->wscale & WSCALE_MASK);
        src->max_win = (uint16_t) (((uint32_t) src->max_win + unit - 1)
                                   / unit);
    }
    if (flags & TCP_FIN) {
        src->seqhi++;
    }
    dst->seqhi = 1;
    dst->max_win = 1;
    src->state = FDP__CT_TCPS_SYN_SENT;
    dst->state = FDP__CT_TCPS_CLOSED;
    *tm = FDP__CT_TM_TCP_FIRST_PACKET;
}

/* The timeout class for the sides' states after an in-window segment. */
static enum fdp__ct_tm
tcp_timeout(const struct fdp__ct_peer *src, const struct fdp__ct_peer *dst)
{
    if (src->state >= FDP__CT_TCPS_FIN_WAIT_2
        && dst->state >= FDP__CT_TCPS_FIN_WAIT_2) {
        return FDP__CT_TM_TCP_CLOSED;
    } else if (src->state >= FDP__CT_TCPS_CLOSING
               && dst->state >= FDP__CT_TCPS_CLOSING) {
        return FDP__CT_TM_TCP_FIN_WAIT;
    } else if (src->state < FDP__CT_TCPS_ESTABLISHED
               || dst->state < FDP__CT_TCPS_ESTABLISHED) {
        return FDP__CT_TM_TCP_OPENING;
    } else if (src->state >= FDP__CT_TCPS_CLOSING
               || dst->state >= FDP__CT_TCPS_CLOSING) {
        return FDP__CT_TM_TCP_CLOSING;
    }
    return FDP__CT_TM_TCP_ESTABLISHED;
}

/* What an acceptable segment from 'src' teaches about both ends: the
 * largest window 'src' offered, the highest sequence it sent ('end'), and
 * how far 'dst' may now send (its ack plus its scaled window, at least
 * one).  pf's in-window and loose cases share it. */
static void
advance_window(struct fdp__ct_peer *src, struct fdp__ct_peer *dst,
               uint16_t win, uint32_t end, uint32_t ack, uint32_t scaled_win)
{
    if (src->max_win < win) {
        src->max_win = win;
    }
    if (seq_gt(end, src->seqlo)) {
        src->seqlo = end;
    }
    if (seq_geq(ack + scaled_win, dst->seqhi)) {
        dst->seqhi = ack + (scaled_win > 1 ? scaled_win : 1);
    }
}

enum fdp__ct_update
fdp__ct_tcp_update(struct fdp__ct_conn *conn, const uint8_t *tcp,
                   size_t size, bool reply, bool seq_chk, enum fdp__ct_tm *tm)
{
    struct fdp__ct_peer *src = &conn->peer[reply];      /* The sender. */
    struct fdp__ct_peer *dst = &conn->peer[!reply];     /* The receiver. */
    uint16_t flags = tcp_flags(tcp);
    uint16_t win = fdp__get16(tcp + 14);
    uint32_t p_len = (uint32_t) (size - tcp_header_len(tcp));
    uint8_t sws = 0, dws = 0;

    *tm = FDP__CT_N_TM;
    if (tcp_invalid_flags(flags)) {
        return FDP__CT_UPDATE_INVALID;
    }

    /* Phase 1: a SYN reopens a closed connection or restarts an opening
     * one. */
    if ((flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
        if (dst->state >= FDP__CT_TCPS_FIN_WAIT_2
            && src->state >= FDP__CT_TCPS_FIN_WAIT_2) {
            src->state = dst->state = FDP__CT_TCPS_CLOSED;
            return FDP__CT_UPDATE_NEW;
        } else if (src->state <= FDP__CT_TCPS_SYN_SENT) {
            src->state = FDP__CT_TCPS_SYN_SENT;
            *tm = FDP__CT_TM_TCP_FIRST_PACKET;
            return FDP__CT_UPDATE_VALID_NEW;
        }
    }

    /* Phase 2: window scales, once both sides' SYNs agreed on them. */
    if (src->wscale & WSCALE_FLAG && dst->wscale & WSCALE_FLAG
        && !(flags & TCP_SYN)) {
        sws = src->wscale & WSCALE_MASK;
        dws = dst->wscale & WSCALE_MASK;
    } else if (src->wscale & WSCALE_UNKNOWN && dst->wscale & WSCALE_UNKNOWN
               && !(flags & TCP_SYN)) {
        sws = TCP_MAX_WSCALE;
        dws = TCP_MAX_WSCALE;
    }

    /* Phase 3: the segment's extent; the sender's first packet sets up
     * its side. */
    uint32_t seq = fdp__get32(tcp + 4);
    uint32_t orig_seq = seq;
    uint32_t ack = fdp__get32(tcp + 8);
    uint32_t end = seq + p_len;
    bool check_ackskew = true;
    if (flags & TCP_SYN) {
        end++;
    }
    if (flags & TCP_FIN) {
        end++;
    }
    if (src->state < FDP__CT_TCPS_SYN_SENT) {
        if (flags & TCP_SYN && dst->wscale & WSCALE_FLAG) {
            src->wscale = tcp_get_wscale(tcp);
            if (src->wscale & WSCALE_FLAG) {
                /* Remove the scale factor from the initial window. */
                sws = src->wscale & WSCALE_MASK;
                uint32_t unit = UINT32_C(1) << sws;
                win = (uint16_t) (((uint32_t) win + unit - 1) / unit);
                dws = dst->wscale & WSCALE_MASK;
            } else {
                /* The other side's window was scaled for nothing; a
                 * retransmitted SYN-ACK must not scale it twice. */
                dst->max_win = (uint16_t) (dst->max_win
                                           << (dst->wscale & WSCALE_MASK));
                dst->wscale = 0;
            }
        }
        src->seqlo = seq;
        src->state = FDP__CT_TCPS_SYN_SENT;
        /* Slide the window if a picked-up connection set seqhi, and be
         * lenient about the acknowledgement then. */
        uint32_t room = (uint32_t) dst->max_win << dws;
        room = room > 1 ? room : 1;
        if (src->seqhi == 1 || seq_geq(end + room, src->seqhi)) {
            src->seqhi = end + room;
            check_ackskew = false;
        }
        if (win > src->max_win) {
            src->max_win = win;
        }
    }

    if (!(flags & TCP_ACK)) {
        ack = dst->seqlo;       /* Nothing to check. */
    } else if (ack == 0 && (flags & (TCP_ACK | TCP_RST))
                           == (TCP_ACK | TCP_RST)) {
        ack = dst->seqlo;       /* Stacks that send RST|ACK with ack 0. */
    }
    if (seq == end) {
        /* No data: ease the sequence checks. */
        seq = src->seqlo;
        end = seq;
    }
    int ackskew = check_ackskew ? (int) (dst->seqlo - ack) : 0;
    uint32_t scaled_win = (uint32_t) win << sws;

    /* Phase 4: in window, loosely acceptable, or invalid. */
    bool in_window
        = seq_geq(src->seqhi, end)
          && seq_geq(seq, src->seqlo - ((uint32_t) dst->max_win << dws))
          && ackskew >= -MAX_ACK_WINDOW
          && ackskew <= (MAX_ACK_WINDOW << sws)
          && (!(flags & TCP_RST) || orig_seq == src->seqlo
              || orig_seq == src->seqlo + 1 || orig_seq + 1 == src->seqlo);
    if (in_window || !seq_chk) {
        advance_window(src, dst, win, end, ack, scaled_win);
        if (flags & TCP_SYN && src->state < FDP__CT_TCPS_SYN_SENT) {
            src->state = FDP__CT_TCPS_SYN_SENT;
        }
        if (flags & TCP_FIN && src->state < FDP__CT_TCPS_CLOSING) {
            src->state = FDP__CT_TCPS_CLOSING;
        }
        if (flags & TCP_ACK) {
            if (dst->state == FDP__CT_TCPS_SYN_SENT) {
                dst->state = FDP__CT_TCPS_ESTABLISHED;
            } else if (dst->state == FDP__CT_TCPS_CLOSING) {
                dst->state = FDP__CT_TCPS_FIN_WAIT_2;
            }
        }
        if (flags & TCP_RST) {
            src->state = dst->state = FDP__CT_TCPS_TIME_WAIT;
        }
        *tm = tcp_timeout(src, dst);
        return FDP__CT_UPDATE_VALID;
    }

    if ((dst->state < FDP__CT_TCPS_SYN_SENT
         || dst->state >= FDP__CT_TCPS_FIN_WAIT_2
         || src->state >= FDP__CT_TCPS_FIN_WAIT_2)
        && seq_geq(src->seqhi + MAX_ACK_WINDOW, end)
        && seq_geq(seq, src->seqlo - MAX_ACK_WINDOW)) {
        /* pf's loose case (see the essay): no timeout refresh, so that a
         * flood of such packets cannot keep a connection alive. */
        advance_window(src, dst, win, end, ack, scaled_win);
        if (flags & TCP_FIN && src->state < FDP__CT_TCPS_CLOSING) {
            src->state = FDP__CT_TCPS_CLOSING;
        }
        if (flags & TCP_RST) {
            src->state = dst->state = FDP__CT_TCPS_TIME_WAIT;
        }
        return FDP__CT_UPDATE_VALID;
    }
    return FDP__CT_UPDATE_INVALID;
}
