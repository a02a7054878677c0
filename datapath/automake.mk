# The fast path: packet parsing, exact-match cache, batch processing, action
# execution and ports.  Its sources join lib/libflowdp-core.la as they land
# (see DESIGN.md, "Layers and data flow"); datapath/ may include lib/ but
# lib/ never includes datapath/.
