#!/usr/bin/env python3
"""Generates tests/ofp-actions.data, the wire vectors of
tests/unit/test-ofp-actions.c, with Debian's ovs-ofctl (Open vSwitch 3.1) as
the oracle.

How the bytes are obtained.  ovs-ofctl has no command that prints the
wire form of an action list written as text (parse-flow prints text only),
so this script plays the switch: it listens on a unix socket, answers
ovs-ofctl's hello, echo, barrier and statistics requests, and records the
flow mods that "ovs-ofctl --no-names -O VERSION add-flows unix:SOCK
FILE" sends.  (--no-names keeps ovs-ofctl from asking for the table features it
would use to name tables.)  The actions are cut out of the flow mod:
OpenFlow 1.0's OFPT_FLOW_MOD after its 72 fixed bytes, NXT_FLOW_MOD after
its 48 bytes and its padded NXM match, and OpenFlow 1.1+'s instructions
after the 48 bytes and the padded ofp_match.  Then "ovs-ofctl ofp-print" reads each flow mod
back and prints what ovs-ofctl shows for its actions (with the flow's
match, which set_field's prerequisites need): the text flowdp's
decoder and formatter must reproduce.  Each case is first checked with
"ovs-ofctl -O VERSION parse-flow", and one add-flows connection per
version carries all the accepted ones.

Output, one vector a line, tab-separated:
    VERSION  MATCH  ACTIONS  HEX  PRINTED
VERSION is OpenFlow10, OpenFlow13 or OpenFlow15; MATCH the flow's match
(flowdp's formatter names some fields by it); ACTIONS the text given to
ovs-ofctl; HEX the action list (OpenFlow 1.0) or the instructions (1.3,
1.5); PRINTED what ovs-ofctl printed for HEX, without "actions=".
A case ovs-ofctl refuses in a version (goto_table in OpenFlow 1.0) is left
out of that version.

Usage: tests/ofp-actions-gen.py > tests/ofp-actions.data
"""

import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading

VERSIONS = ['OpenFlow10', 'OpenFlow13', 'OpenFlow15']

# (match, actions).  Between them every action kind flowdp has, in the
# forms ovs-ofctl chooses per version, and the edge cases of each.
CASES = [
    ('', 'output:1'),
    ('', 'output:65279'),
    ('', 'output:1,output:2,output:3'),
    ('', 'in_port'),
    ('', 'NORMAL'),
    ('', 'FLOOD'),
    ('', 'ALL'),
    ('', 'LOCAL'),
    ('', 'drop'),
    ('', 'controller'),
    ('', 'controller:100'),
    ('', 'controller:0'),
    ('', 'controller(reason=no_match)'),
    ('', 'controller(id=7)'),
    ('', 'controller(max_len=64,id=3,reason=invalid_ttl)'),
    ('', 'controller(userdata=01.02.03)'),
    ('', 'controller(pause)'),
    ('', 'controller(meter_id=5)'),
    ('', 'controller(max_len=100,id=2,reason=group,userdata=aa.bb,pause,'
         'meter_id=9)'),
    ('', 'mod_vlan_vid:100'),
    ('', 'mod_vlan_pcp:5'),
    ('', 'strip_vlan'),
    ('', 'push_vlan:0x8100'),
    ('', 'push_vlan:0x88a8'),
    ('', 'mod_dl_src:00:11:22:33:44:55'),
    ('', 'mod_dl_dst:10:20:30:40:50:60'),
    ('ip', 'mod_nw_src:1.2.3.4'),
    ('ip', 'mod_nw_dst:192.168.0.1'),
    ('ip', 'mod_nw_tos:48'),
    ('ip', 'mod_nw_ecn:2'),
    ('ip', 'mod_nw_ttl:7'),
    ('tcp', 'mod_tp_src:80'),
    ('tcp', 'mod_tp_dst:443'),
    ('udp', 'mod_tp_dst:53'),
    ('', 'set_field:00:11:22:33:44:55->eth_src'),
    ('ip', 'set_field:10.0.0.1->ip_dst'),
    ('tcp', 'set_field:8080->tcp_dst'),
    ('udp', 'set_field:53->udp_src'),
    ('ipv6', 'set_field:2001:db8::1->ipv6_src'),
    ('ipv6', 'set_field:0x12345->ipv6_label'),
    ('arp', 'set_field:2->arp_op'),
    ('arp', 'set_field:10.1.1.1->arp_spa'),
    ('', 'set_field:5->reg0'),
    ('', 'set_field:0x1234/0xffff->reg3'),
    ('', 'set_field:0xa->metadata'),
    ('', 'set_field:100->tun_id'),
    ('', 'load:1->NXM_NX_REG0[]'),
    ('', 'load:0x5->NXM_NX_REG1[4..7]'),
    ('', 'load:0xffff->NXM_NX_XXREG0[0..15]'),
    ('', 'load:0x1->OXM_OF_METADATA[]'),
    ('', 'move:NXM_NX_REG0[]->NXM_NX_REG1[]'),
    ('', 'move:NXM_NX_REG0[0..7]->NXM_NX_REG1[8..15]'),
    ('', 'move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[]'),
    ('', 'write_metadata:0x1'),
    ('', 'write_metadata:0x1/0xff'),
    ('ip', 'dec_ttl'),
    ('ip', 'dec_ttl(1,2)'),
    ('', 'goto_table:1'),
    ('', 'output:1,goto_table:5'),
    ('', 'resubmit:3'),
    ('', 'resubmit(,2)'),
    ('', 'resubmit(1,2)'),
    ('', 'resubmit(in_port,4)'),
    ('', 'conjunction(1,1/2)'),
    ('', 'conjunction(0x10,2/3)'),
    ('ip', 'ct'),
    ('ip', 'ct(commit)'),
    ('ip', 'ct(commit,zone=5)'),
    ('ip', 'ct(table=1)'),
    ('ip', 'ct(commit,force,zone=1,table=2)'),
    ('ip', 'ct(zone=NXM_NX_REG0[0..15])'),
    ('ip', 'ct(commit,exec(set_field:1->ct_mark))'),
    ('ip', 'ct(commit,exec(load:0x1->NXM_NX_CT_LABEL[0..3]))'),
    ('ip', 'ct(commit,nat(src=10.0.0.1))'),
    ('ip', 'ct(nat)'),
    ('ip', 'ct(commit,nat(dst=10.0.0.1-10.0.0.9:80-90,random))'),
    ('ip', 'ct_clear'),
    ('', 'push:NXM_NX_REG0[]'),
    ('', 'pop:NXM_NX_REG1[0..7]'),
    ('', 'output:NXM_NX_REG0[]'),
    ('', 'output:NXM_NX_REG1[0..15]'),
    ('', 'note:01.02.03'),
    ('', 'note:'),
    ('', 'note:00.11.22.33.44.55.66.77.88'),
    ('', 'set_queue:3'),
    ('', 'pop_queue'),
    ('', 'enqueue:1:2'),
    ('', 'clone(output:1)'),
    ('', 'clone(mod_vlan_vid:10,output:2)'),
    ('', 'group:1'),
    ('', 'meter:1'),
    ('', 'meter:2,output:1'),
    ('tcp', 'fin_timeout(idle_timeout=10,hard_timeout=20)'),
    ('tcp', 'fin_timeout(idle_timeout=5)'),
    ('', 'learn(table=1,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],'
         'output:NXM_OF_IN_PORT[])'),
    ('', 'learn(table=2,idle_timeout=10,hard_timeout=20,priority=5,'
         'cookie=0x9,NXM_NX_REG0[],load:0x1->NXM_NX_REG1[])'),
    ('', 'check_pkt_larger(1500)->NXM_NX_REG0[0]'),
    ('', 'check_pkt_larger(64)->NXM_NX_REG3[7]'),
    ('', 'learn(table=1,limit=10,NXM_NX_REG0[])'),
    ('', 'learn(table=1,result_dst=NXM_NX_REG1[3],NXM_NX_REG0[])'),
    ('', 'learn(table=3,fin_idle_timeout=5,fin_hard_timeout=6,'
         'send_flow_rem,delete_learned,NXM_OF_VLAN_TCI[0..11]=0x123,'
         'load:NXM_NX_REG0[]->NXM_NX_REG2[])'),
    ('', 'learn(table=1,eth_type=0x800,NXM_OF_IP_SRC[]=NXM_OF_IP_DST[],'
         'load:0x5->NXM_NX_REG4[0..7])'),
    ('ip', 'ct(commit,exec(move:NXM_NX_REG0[]->NXM_NX_CT_MARK[]))'),
    ('ip', 'ct(commit,exec(set_field:0x1/0xff->ct_label))'),
    ('ip', 'ct(commit,exec(set_field:1->ct_mark,set_field:2->ct_label))'),
    ('ipv6', 'ct(commit,nat(src=2001:db8::1-2001:db8::2))'),
    ('ipv6', 'ct(commit,nat(dst=[2001:db8::1]:80,persistent,hash))'),
    ('ip', 'ct(commit,exec(set_field:1->ct_mark),nat(src=10.0.0.1))'),
    ('', 'meter:1,output:1,write_metadata:0x1,goto_table:2'),
    ('', 'write_metadata:0xff00/0xff00,goto_table:3'),
    ('', 'set_field:0x1->tun_src'),
    ('', 'move:NXM_NX_REG0[0..15]->NXM_OF_IN_PORT[]'),
    ('', 'move:NXM_NX_XXREG0[]->NXM_NX_XXREG1[]'),
    ('', 'move:OXM_OF_METADATA[0..31]->NXM_NX_REG5[]'),
    ('udp', 'move:NXM_OF_UDP_SRC[]->NXM_OF_UDP_DST[]'),
    ('', 'output:NXM_NX_REG2[8..23]'),
    ('', 'push:NXM_NX_XXREG0[]'),
    ('', 'pop:OXM_OF_METADATA[]'),
    ('', 'note:' + '.'.join('%02x' % i for i in range(40))),
    ('', 'controller(reason=packet_out,max_len=0)'),
    ('', 'controller(reason=action_set)'),
    ('', 'group:4294967040'),
    ('', 'resubmit(LOCAL,0)'),
    ('', 'resubmit:65279'),
    ('', 'fin_timeout(hard_timeout=7)'),
    ('', 'strip_vlan,push_vlan:0x8100,mod_vlan_vid:5,mod_vlan_pcp:3'),
    ('vlan_tci=0x1000/0x1000', 'mod_vlan_vid:7'),
    ('', 'clone(clone(output:1),ct_clear)'),
    ('', 'conjunction(4294967295,64/64)'),
    ('', 'set_field:0x123456789abcdef->xreg3'),
    ('', 'set_field:0xfedcba9876543210->xxreg2'),
    ('', 'load:0x3->NXM_NX_PKT_MARK[4..5]'),
    ('tcp', 'set_field:0x10->tcp_flags'),
]


def flow_mod_actions(msg):
    """The action or instruction bytes of a recorded flow mod, or None."""
    ver, typ = msg[0], msg[1]
    if ver == 1 and typ == 14:
        return msg[72:]
    if ver == 1 and typ == 4 and struct.unpack('!II', msg[8:16]) == (
            0x2320, 13):
        match_len = struct.unpack('!H', msg[40:42])[0]
        return msg[48 + (match_len + 7) // 8 * 8:]
    if ver > 1 and typ == 14:
        match_len = struct.unpack('!H', msg[50:52])[0]
        return msg[48 + (match_len + 7) // 8 * 8:]
    return None


def serve(listener, flow_mods):
    """Plays the switch for one ovs-ofctl connection."""
    conn, _ = listener.accept()
    buf = b''
    while True:
        while len(buf) < 8 or len(buf) < struct.unpack('!H', buf[2:4])[0]:
            data = conn.recv(65536)
            if not data:
                conn.close()
                return
            buf += data
        n = struct.unpack('!H', buf[2:4])[0]
        msg, buf = buf[:n], buf[n:]
        ver, typ, xid = msg[0], msg[1], msg[4:8]
        reply = None
        if typ == 0:                            # hello
            reply = bytes([ver, 0]) + struct.pack('!H', 8) + xid
        elif typ == 2:                          # echo request
            reply = bytes([ver, 3]) + msg[2:]
        elif (ver == 1 and typ == 18) or (ver > 1 and typ == 20):
            reply = bytes([ver, typ + 1]) + struct.pack('!H', 8) + xid
        elif (ver == 1 and typ == 16) or (ver > 1 and typ == 18):
            body = msg[8:10] + b'\0\0' + (b'' if ver == 1 else b'\0' * 4)
            reply = (bytes([ver, typ + 1]) + struct.pack('!H', 8 + len(body))
                     + xid + body)
        elif flow_mod_actions(msg) is not None:
            flow_mods.append(msg)
        if reply:
            conn.sendall(reply)


def accepted(version, flow):
    """True if ovs-ofctl takes 'flow' in 'version'."""
    r = subprocess.run(['ovs-ofctl', '-O', version, 'parse-flow', flow],
                       capture_output=True, text=True, timeout=20)
    return r.returncode == 0


def wire(version, flows, tmp):
    """The flow mods ovs-ofctl sends for 'flows', in order: one
    "add-flows" connection for all of them (a connection per flow costs
    ovs-ofctl's reconnection back-off)."""
    sock_path = os.path.join(tmp, 'switch.sock')
    flows_path = os.path.join(tmp, 'flows')
    with open(flows_path, 'w') as f:
        f.write(''.join(flow + '\n' for flow in flows))
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(sock_path)
    listener.listen(1)
    flow_mods = []
    t = threading.Thread(target=serve, args=(listener, flow_mods))
    t.daemon = True
    t.start()
    r = subprocess.run(['ovs-ofctl', '--no-names', '-O', version, 'add-flows',
                        'unix:' + sock_path, flows_path],
                       capture_output=True, text=True, timeout=60)
    t.join(60)
    listener.close()
    os.unlink(sock_path)
    os.unlink(flows_path)
    if r.returncode or len(flow_mods) != len(flows):
        sys.exit('ovs-ofctl add-flows %s failed (%d flow mods for %d flows): '
                 '%s' % (version, len(flow_mods), len(flows), r.stderr))
    return flow_mods


def printed(flow_mod):
    """What "ovs-ofctl ofp-print" shows as the actions of 'flow_mod' (the
    whole message, so that its match gives set_field's prerequisites)."""
    r = subprocess.run(['ovs-ofctl', 'ofp-print', flow_mod.hex()],
                       capture_output=True, text=True, timeout=20)
    text = r.stdout.split(' actions=', 1)
    if r.returncode or len(text) != 2 or 'decode error' in r.stdout:
        # ovs-ofctl writes some lists it does not read back (OpenFlow
        # 1.0's write_metadata before a goto_table's resubmit): the
        # caller leaves the case out, saying so in a comment.
        return None
    return text[1].splitlines()[0]


def main():
    tmp = tempfile.mkdtemp(prefix='ofp-actions-gen.')
    os.chmod(tmp, 0o700)
    cases = list(CASES)
    # Every flow of tests/every-action.flows, as a whole.
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, 'every-action.flows')) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            match, acts = line.split('actions=', 1)
            fields = [x for x in match.rstrip(',').split(',')
                      if not x.startswith('cookie=')
                      and not x.startswith('priority=')]
            cases.append((','.join(fields), acts))
    print('# Generated by tests/ofp-actions-gen.py from ovs-ofctl %s; do '
          'not edit.' % subprocess.run(['ovs-ofctl', '--version'],
                                       capture_output=True, text=True)
          .stdout.split()[3])
    print('# VERSION\tMATCH\tACTIONS\tHEX\tPRINTED')
    for version in VERSIONS:
        todo = []
        for match, acts in cases:
            flow = (match + ',' if match else '') + 'actions=' + acts
            if accepted(version, flow):
                todo.append((match, acts, flow))
        datas = wire(version, [flow for _, _, flow in todo], tmp)
        for (match, acts, _), msg in zip(todo, datas):
            text = printed(msg)
            if text is None:
                print('# %s %s: ovs-ofctl does not read back its own %s'
                      % (version, acts, flow_mod_actions(msg).hex()))
                continue
            print('\t'.join([version, match or '-', acts,
                             flow_mod_actions(msg).hex() or '-', text]))
    os.rmdir(tmp)


if __name__ == '__main__':
    main()
