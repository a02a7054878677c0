# The normalisations applied to `ovs-ofctl parse-pcap` output before it is
# compared with `flowdp-ctl parse-pcap` (tests/parse-pcap.at), one per
# field that flowdp's key does not have (see datapath/extract.c and
# utilities/flowdp-ctl.8).  Nothing else is changed.
#
# The inner VLAN tag: flowdp keeps the outer tag only.
s/,vlan_tci1=0x[0-9a-f]*//
s/,dl_vlan1=[0-9]*//
s/,dl_vlan_pcp1=[0-9]*//
# MPLS label stack entries (flowdp keeps dl_type 0x8847/0x8848 only).
s/,mpls_label=[0-9]*//
s/,mpls_tc=[0-9]*//
s/,mpls_ttl=[0-9]*//
s/,mpls_bos=[0-9]*//
s/,mpls_lse[0-9]=[0-9a-fx]*//g
