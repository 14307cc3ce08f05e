#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# QPs and memory windows against a device in another guest, over RoCE v2
# on a virtual link (bin/wire_test, see wire_test.c): every RC operation at
# sizes around the path MTU, atomics, atomic writes, remote access errors,
# RNR, retry exhaustion, UC, UD with its GRH, an SRQ, a type 2 window, a
# stranger; the exact completion at both ends, data byte for byte, guard
# bytes on both sides.
#
# In a two-guest run (tools/testing/vm/pair -- wire.sh) the server half,
# wire_test --serve, runs in the peer guest (peer.py) on its device, stag0
# or rxe0, and the client here. In one guest (make check) both halves run
# here on one device.
#
#   STAG_TEST_DEV	this guest's device (default stag0)
#   STAG_WIRE_TIMEOUT	seconds one case may take (default 60)
#   STAG_WIRE_PATTERN	only the cases whose names contain one of these words
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
port=18790
limit=1200	# the whole run, for the server's hard timeout
tmp=$(mktemp -d /tmp/wire.XXXXXX)

ip=$(dev_ip "$dev")
gid=$(wait_for 10 roce_v2_index "$dev" "$ip" && roce_v2_index "$dev" "$ip")
if [ -z "$ip" ] || [ -z "$gid" ]; then
	_t_report "not ok" "a RoCE v2 GID of an IPv4 address on $dev" "address '$ip', GID index '$gid'"
	exit 0
fi

sip=$ip
peer=$dev
serve_here "$dev" "$gid" "$ip"
if [ -n "${STAG_PEER_IP:-}" ] && [ "${STAG_ROLE:-}" = b ]; then
	serve_in_peer || { _t_report "not ok" "reach peer.py in the peer guest" ""; exit 0; }
	sip=$STAG_PEER_IP
	peer=${STAG_PEER_DEV:-the peer guest}
fi

# A second address of this guest, on the same netdev: the stranger's. A QP
# on the wire knows its peer by address, so a stranger that would be told
# apart by more than its PSNs must come from another one.
# (tools/testing/selftests/run adds the same one when stag.loopback=0.)
netdev=$(dev_netdev "$dev")
extra=${ip%.*}.$(( (${ip##*.} + 100) % 250 + 1 ))
[ "$extra" = "${STAG_PEER_IP:-}" ] && extra=${ip%.*}.$(( (${ip##*.} + 101) % 250 + 1 ))
added='' xgid=''
if ip -4 -o addr show dev "$netdev" 2>/dev/null | grep -q " $extra/" ||
   { [ "$netdev" != lo ] && ip addr add "$extra/32" dev "$netdev" 2>/dev/null && added=$extra; }; then
	xgid=$(wait_for 10 roce_v2_index "$dev" "$extra" && roce_v2_index "$dev" "$extra")
fi
stranger=${xgid:+$extra (GID index $xgid)}
echo "# $dev: $ip is GID index $gid; the stranger's: ${stranger:-none}; server: $peer at $sip"

serve_start "tcp_listening $port" "$T_BIN/wire_test -d @DEV@ -g @GID@ --serve $port" "$limit" \
	"$tmp/srv"
src=$?
if [ "$src" -ne 0 ]; then
	_t_report "not ok" "wire_test --serve listens on $peer" "status $src: $(tail -20 "$tmp/srv")"
	[ -n "$added" ] && ip addr del "$added/32" dev "$netdev"
	exit 0
fi

# shellcheck disable=SC2086 # the patterns are words
"$T_BIN/wire_test" -d "$dev" -g "$gid" ${xgid:+-x "$xgid"} -c "$sip:$port" \
	${STAG_WIRE_PATTERN:-} | tee "$tmp/cli"
crc=${PIPESTATUS[0]}
[ "$crc" -eq 0 ] || _t_report "not ok" "wire_test -d $dev ran to the end" "exit status $crc"

# The client said BYE when it finished; a server whose client died is stopped.
serve_report "$crc" "$tmp/srv" \
	"the server on $peer served every case and destroyed what each made"

# What stag counted, for whoever reads a failure.
counters()
{
	grep -H . /sys/class/infiniband/"$1"/ports/1/hw_counters/* 2>/dev/null |
		sed -n 's|.*/hw_counters/\(.*\):\([1-9][0-9]*\)$|\1=\2|p' | tr '\n' ' '
}
if grep -q '^not ok' "$tmp/cli"; then
	echo "# $dev counters: $(counters "$dev")"
	if [ "$SERVE_PEER" = 1 ] && peer_run "$(declare -f counters); counters @DEV@" "$tmp/cnt"; then
		echo "# $peer counters: $(cat "$tmp/cnt")"
	fi
fi

[ -n "$added" ] && ip addr del "$added/32" dev "$netdev"
rm -rf "$tmp"
