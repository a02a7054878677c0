"""An os-ken application for tests/openflow-controllers.at.

    OSKEN_APP_LOG=FILE osken-manager --ofp-tcp-listen-port PORT osken-app.py

Speaks OpenFlow 1.3 to the switch that connects to it, and writes one line
per event to OSKEN_APP_LOG (flushed at once, so that the test can wait for
a line):

  * on switch-features: "features dpid=... n_tables=N"; then installs two
    flows and says so ("installed table-miss" and "installed udp-9999"):
    priority 0, empty match, output to the controller with no buffering
    (the table-miss flow every os-ken/Ryu application starts with), and
    priority 100, udp,tp_dst=9999 output to port 2 (cookie 0x9999): a flow
    the switch forwards without the controller.
  * on packet-in: "packet-in reason=R in_port=P table=T cookie=C len=L
    eth_type=0xXXXX ip_proto=N udp_dst=N" (the fields the parsed data
    gives), then sends the packet back as a packet-out: out of the other
    port (1 <-> 2), with the packet's data (no buffer id), and writes
    "packet-out in_port=P out_port=Q len=L".
  * on an error message from the switch: "error type=T code=C".

Runs under osken-manager (Debian's python3-os-ken); the test reads the log.
"""

import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER
from os_ken.controller.handler import set_ev_cls
from os_ken.lib.packet import ethernet, ipv4, packet, udp
from os_ken.ofproto import ofproto_v1_3

LOG = os.environ.get("OSKEN_APP_LOG", "osken-app.log")


def say(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


REASONS = {0: "no_match", 1: "action", 2: "invalid_ttl"}


class FlowdpTestApp(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        say("features dpid=%016x n_tables=%d"
            % (ev.msg.datapath_id, ev.msg.n_tables))
        miss = parser.OFPFlowMod(
            datapath=dp, priority=0, match=parser.OFPMatch(),
            instructions=[parser.OFPInstructionActions(
                ofp.OFPIT_APPLY_ACTIONS,
                [parser.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                        ofp.OFPCML_NO_BUFFER)])])
        dp.send_msg(miss)
        say("installed table-miss")
        fwd = parser.OFPFlowMod(
            datapath=dp, priority=100, cookie=0x9999,
            match=parser.OFPMatch(eth_type=0x0800, ip_proto=17,
                                  udp_dst=9999),
            instructions=[parser.OFPInstructionActions(
                ofp.OFPIT_APPLY_ACTIONS, [parser.OFPActionOutput(2)])])
        dp.send_msg(fwd)
        say("installed udp-9999")

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        in_port = msg.match["in_port"]
        pkt = packet.Packet(msg.data)
        eth = pkt.get_protocol(ethernet.ethernet)
        ip = pkt.get_protocol(ipv4.ipv4)
        u = pkt.get_protocol(udp.udp)
        say("packet-in reason=%s in_port=%d table=%d cookie=0x%x len=%d "
            "eth_type=0x%04x ip_proto=%s udp_dst=%s"
            % (REASONS.get(msg.reason, msg.reason), in_port, msg.table_id,
               msg.cookie, len(msg.data), eth.ethertype if eth else 0,
               ip.proto if ip else "-", u.dst_port if u else "-"))
        out_port = 2 if in_port == 1 else 1
        dp.send_msg(parser.OFPPacketOut(
            datapath=dp, buffer_id=ofp.OFP_NO_BUFFER, in_port=in_port,
            actions=[parser.OFPActionOutput(out_port)], data=msg.data))
        say("packet-out in_port=%d out_port=%d len=%d"
            % (in_port, out_port, len(msg.data)))

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def error(self, ev):
        say("error type=%d code=%d" % (ev.msg.type, ev.msg.code))
