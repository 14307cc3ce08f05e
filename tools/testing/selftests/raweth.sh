#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ethernet frames between Raw Packet QPs of two guests (bin/raweth_peer):
# a QP's flow names a group address and an ether type, and the frames
# another guest's raw QP sends to them arrive whole, in order, each of its
# own length; frames for another group or of another type, sent between
# them, do not. Both directions. A virtual link may lose a datagram: up to
# one in eight may be missing (raweth_peer.c), each guest's drop counters
# are printed when any is. The flow has the netdev join the group
# (dev_mc_add()), or the guest's virtio-net would not take its frames.
# Then IPv4/UDP frames to an RSS QP in the peer, spread over four receive
# WQs: each must land in the WQ the Toeplitz hash of its addresses and
# ports names.
#
# Two guests only (tools/testing/vm/pair, guest b), stag at both ends:
# rdma_rxe has no Raw Packet QPs.
#
#   STAG_TEST_DEV	this guest's device (default stag0)
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
n=64
tmp=$(mktemp -d /tmp/raweth.XXXXXX)
ready=/tmp/raweth.ready.$$

pair_setup "Ethernet frames between Raw Packet QPs of two guests" || exit 0
case "$dev:${STAG_PEER_DEV:-}" in
stag*:stag*) ;;
*)
	echo "ok - $T_SUITE: Ethernet frames between Raw Packet QPs # SKIP $dev and $peer: rdma_rxe has none"
	exit 0
	;;
esac

# drops OUT: each guest's drop counters, when the receiver's output OUT
# says a frame was lost (at most n/8 may be).
drops()
{
	grep -q "received $n of $n" "$1" 2>/dev/null && return
	echo "# drops here: $(rdma statistic show link "$dev/1" | grep -o 'drop_[a-z_]* [1-9][0-9]*' | tr '\n' ' ')"
	echo "# $netdev here: $(ip -s -o link show dev "$netdev" | grep -o 'RX:.*' | tr -s ' \\' ' ')"
	peer_run "rdma statistic show link @DEV@/1 | grep -o 'drop_[a-z_]* [1-9][0-9]*' | tr '\n' ' '" \
		"$tmp/pd" && echo "# drops in $peer: $(cat "$tmp/pd")"
	peer_run "ip -s -o link show | grep -v ' lo:' | grep -o 'RX:.*' | tr -s ' ' | tr -d '\\\\'" \
		"$tmp/pn" && echo "# netdevs in $peer: $(cat "$tmp/pn")"
}

# This guest sends, the peer receives.
if serve_start "test -e $ready" "$T_BIN/raweth_peer @DEV@ --recv $n $ready" 60 "$tmp/srv"; then
	"$T_BIN/raweth_peer" "$dev" --send "$n" >"$tmp/cli" 2>&1
	rc=$?
	cat "$tmp/cli"
	serve_end "$rc" "$tmp/srv"
	src=$?
	grep '^#' "$tmp/srv"
	t_eq "$n frames from a raw QP here to one in $peer: whole, in order, no other" \
		"0 0" "$rc $src"
	[ "$src" -eq 0 ] || tail -20 "$tmp/srv"
	drops "$tmp/srv"
else
	_t_report "not ok" "raweth_peer --recv ready in $peer" "$(tail -20 "$tmp/srv")"
fi

# The peer sends, this guest receives.
rm -f "$ready"
"$T_BIN/raweth_peer" "$dev" --recv "$n" "$ready" >"$tmp/rcv" 2>&1 &
rpid=$!
if wait_for 30 test -e "$ready"; then
	peer_run "$T_BIN/raweth_peer @DEV@ --send $n" "$tmp/snd"
	src=$?
else
	src=255
	echo "# raweth_peer --recv here was not ready in 30 s"
fi
wait "$rpid"
rc=$?
grep '^#' "$tmp/rcv" "$tmp/snd" 2>/dev/null | sed 's/^[^:]*://'
t_eq "$n frames from a raw QP in $peer to one here: whole, in order, no other" \
	"0 0" "$src $rc"
[ "$rc" -eq 0 ] || tail -20 "$tmp/rcv"
drops "$tmp/rcv"
rm -f "$ready"

# RSS: this guest sends IPv4/UDP frames, the peer's RSS QP spreads them
# over four receive WQs, each where the Toeplitz hash says.
if serve_start "test -e $ready" "$T_BIN/raweth_peer @DEV@ --recv-rss $n $ready" 60 "$tmp/rss"; then
	"$T_BIN/raweth_peer" "$dev" --send-ip "$n" >"$tmp/cli" 2>&1
	rc=$?
	cat "$tmp/cli"
	serve_end "$rc" "$tmp/rss"
	src=$?
	grep '^#' "$tmp/rss"
	t_eq "$n IPv4 frames from a raw QP here to an RSS QP in $peer: each in the WQ its hash names, whole, in order" \
		"0 0" "$rc $src"
	[ "$src" -eq 0 ] || tail -20 "$tmp/rss"
	drops "$tmp/rss"
else
	_t_report "not ok" "raweth_peer --recv-rss ready in $peer" "$(tail -20 "$tmp/rss")"
fi
rm -f "$ready"
rm -rf "$tmp"
