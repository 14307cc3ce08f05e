#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's guest b (tools/demo/run); guest a serves through peer.py.
. "$(dirname "$0")/../testing/selftests/lib.sh"

dev=$STAG_TEST_DEV
gid=$(roce_v2_index "$dev" "$STAG_IP")
port=18500

say() { printf '\n=== %s\n' "$*"; }

# server READY CMD: CMD in guest a, once it listens.
server()
{
	port=$((port + 1))
	peer_start "$1 $port" "${2//@PORT@/$port}" 120 /tmp/srv || { cat /tmp/srv; return 1; }
}

peer_open || { echo "guest a does not answer"; exit 1; }
say "guest b, $STAG_IP, $dev; guest a at $STAG_PEER_IP ($STAG_PEER_DEV)"
rdma link show
ibv_devinfo -d "$dev" | grep -E 'hca_id|transport|state|active_mtu|link_layer'
echo "RoCE v2 GID index of $STAG_IP: $gid"

say "ibv_rc_pingpong: 1000 messages of 4096 bytes, b to a and back, over the link"
server tcp_listening "ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -s 4096 -n 1000 -c"
timeout 120 ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -s 4096 -n 1000 -c "$STAG_PEER_IP"
peer_wait /tmp/srv && echo "(guest a checked every byte it received: -c)"

say "ib_write_bw: RDMA WRITE of 64 KiB messages into guest a's memory"
server tcp_listening "ib_write_bw -d @DEV@ -x @GID@ -F -p @PORT@ -s 65536 -n 500"
timeout 120 ib_write_bw -d "$dev" -x "$gid" -F -p "$port" -s 65536 -n 500 "$STAG_PEER_IP" |
	grep -E '^ *#bytes|^ *65536'
peer_wait /tmp/srv

say "RDMA one byte past guest a's region: refused by a's gate before a byte moves"
echo "(wire_test: a's server checks its buffer and the guard bytes around it; b checks the status)"
server tcp_listening "$T_BIN/wire_test -d @DEV@ -g @GID@ --serve @PORT@"
"$T_BIN/wire_test" -d "$dev" -g "$gid" -c "$STAG_PEER_IP:$port" "byte past a region's end"
peer_wait /tmp/srv

say "counters of $dev (guest b)"
rdma statistic show link "$dev/1" | tr ' ' '\n' | paste - - | awk 'NF == 2 && $2 != 0 { printf "%-24s %s\n", $1, $2 }'
say "counters of guest a's device"
peer_run "rdma statistic show link @DEV@/1 | tr ' ' '\n' | paste - - | awk 'NF == 2 && \$2 != 0 { printf \"%-24s %s\\n\", \$1, \$2 }'" /tmp/cnt
cat /tmp/cnt
