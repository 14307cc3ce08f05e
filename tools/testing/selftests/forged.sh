#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Forged packets at this guest's device while a victim moves verified
# traffic through it (two-guest runs only). The peer guest runs the
# victim's server half and bin/inject (inject.c), which sends
# STAG_FORGED_PACKETS (default 1000000) forged RoCE v2 packets at this
# guest's address, learning the live QPNs and PSNs from what its own
# device sends here. Meanwhile the victim, wire_test --lossy on a clean
# link, moves STAG_FORGED_MB MiB (default 16) per RC case and checks every
# byte and every guard byte at both ends, round after round until the
# injector is done.
#
# Then:
#  - the victim's cases pass: nothing of theirs changed, no QP broke;
#  - every datagram that reached this guest's UDP port 4791 was either
#    taken (rcvd_pkts) or dropped under a reason stag counts: the UDP
#    layer's count of datagrams delivered grew by exactly their sum;
#  - the guest's kernel reported nothing (the harness scans the log).
#
#   tools/testing/vm/pair -- forged.sh
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
port=18792
limit=1500
npkts=${STAG_FORGED_PACKETS:-1000000}
seed=${STAG_FORGED_SEED:-$(( $(date +%s) % 100000 ))}
tmp=$(mktemp -d /tmp/forged.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

pair_setup "forged packets from the peer guest" || exit 0

# Where a packet for the device ends: taken, or dropped under a reason.
# (Reasons the responder counts later, such as drop_psn, come after
# rcvd_pkts and are not in this sum.)
reasons="rcvd_pkts icrc_errors drop_malformed drop_no_qp drop_qp_state drop_not_peer drop_qkey
	 drop_pkey drop_backlog"
counters()
{
	local c v

	for c in $reasons; do
		v=$(cat "/sys/class/infiniband/$dev/ports/1/hw_counters/$c" 2>/dev/null) || return 1
		echo "$c $v"
	done
}
# The UDP layer's datagrams delivered to a socket: the tunnel's included.
udp_in()
{
	awk '/^Udp:/ && !f { for (i = 1; i <= NF; i++) if ($i == "InDatagrams") f = i; next }
	     /^Udp:/ { print $f }' /proc/net/snmp
}

if ! counters >"$tmp/before"; then
	echo "ok - forged: forged packets are counted # SKIP $dev has no such counters (not stag)"
	exit 0
fi
in_before=$(udp_in)

echo "# $dev at $ip; the peer $STAG_PEER_IP forges $npkts packets, seed $seed"
if ! serve_start "tcp_listening $port" "$T_BIN/wire_test -d @DEV@ -g @GID@ --serve $port" \
	"$limit" "$tmp/srv"; then
	_t_report "not ok" "wire_test --serve listens in the peer" "$(tail -20 "$tmp/srv")"
	exit 0
fi
# The victim's cases over and over, until the injector is done.
STAG_LOSSY_PROFILE=forged STAG_LOSSY_MB=${STAG_FORGED_MB:-16} STAG_WIRE_TIMEOUT=600 \
	STAG_LOSSY_UNTIL=$tmp/done \
	"$T_BIN/wire_test" --lossy -d "$dev" -g "$gid" -c "$STAG_PEER_IP:$port" >"$tmp/cli" 2>&1 &
victim=$!

# shellcheck disable=SC2016 # expanded in the peer
peer_run "$T_BIN/inject -t $ip -n $npkts -s $seed -i \$(dev_netdev @DEV@) -p @IP@" "$tmp/inj"
irc=$?
touch "$tmp/done"
cat "$tmp/inj"
t_eq "inject sent its $npkts packets from the peer" 0 "$irc"

wait "$victim"
crc=$?
cat "$tmp/cli"
[ "$crc" -eq 0 ] || _t_report "not ok" "the victim ran to the end" "exit status $crc"
serve_report "$crc" "$tmp/srv" "the victim's server destroyed what each case made"

# Packets still in flight reach the counters within a moment.
sleep 1
in_after=$(udp_in)
counters >"$tmp/after"
sum=0 detail=''
while read -r c v; do
	b=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/before")
	sum=$((sum + v - b))
	[ "$v" -gt "$b" ] && detail="$detail $c=$((v - b))"
done <"$tmp/after"
echo "# datagrams delivered to UDP sockets: $((in_after - in_before)); taken or dropped by $dev:$detail"
t_eq "every datagram for $dev is taken or dropped under a counted reason" \
	"$((in_after - in_before))" "$sum"
