#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bulk traffic over a faulty link (bin/wire_test --lossy, see
# wire_lossy.c), in a two-guest run only: both guests put netem on their
# netdev's egress, so each direction of the link suffers the profile, and
# under each profile RC moves STAG_LOSSY_MB MiB (default 64) with each of
# WRITE, READ and SEND, byte for byte, and 256 FETCH_ADDs and ATOMIC_WRITEs
# each execute once, while UC and UD may lose messages but deliver none
# damaged or twice. Where a profile corrupts packets, the
# ICRC must have caught some: stag's icrc_errors grows.
#
#   tools/testing/vm/pair -- lossy.sh             (stag on both sides)
#   tools/testing/vm/pair --a rxe --b rxe -- lossy.sh
#
#   STAG_LOSSY_PROFILES	the profiles to run (default: all of netem_profile's
#			but "clean" and "delay", in its order)
#   STAG_LOSSY_MB	MiB per RC case (default 64)
#   STAG_LOSSY_CASES	patterns of the case names to run (default: all)
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
port=18791
limit=1500	# one profile's server
tmp=$(mktemp -d /tmp/lossy.XXXXXX)
export STAG_WIRE_TIMEOUT=${STAG_WIRE_TIMEOUT:-300}

# netem_profile NAME: the netem arguments of a profile.
netem_profile()
{
	case $1 in
	clean)		echo "delay 0ms" ;;
	delay)		echo "delay 10ms" ;;
	loss1)		echo "loss 1%" ;;
	loss5)		echo "loss 5%" ;;
	# 10% of the packets go at once, the rest 10 ms later: they pass each other.
	reorder)	echo "delay 10ms reorder 10%" ;;
	dup)		echo "duplicate 2%" ;;
	corrupt)	echo "corrupt 0.5%" ;;
	all)		echo "loss 1% duplicate 2% corrupt 0.5% delay 10ms reorder 10%" ;;
	*)		return 1 ;;
	esac
}
profiles=${STAG_LOSSY_PROFILES:-loss1 loss5 reorder dup corrupt all}

pair_setup "a faulty link" || exit 0

# netem_set SPEC: both egresses suffer SPEC ("" lifts it), on RoCE v2
# packets only (UDP destination port 4791): what is under test is the
# link as RoCE sees it, not the TCP connection over which wire_test's
# client drives the server. With that connection faulted too, each lost
# segment of its thousands of calls cost TCP's retransmission timeout
# (200 ms at least): UC, UD and the atomics spent most of their time
# waiting for their own harness (9 to 25% of the host's CPUs busy).
# stag sends packet by packet meanwhile (stag.tx_bursts=N): netem sits
# above the driver and would fault a burst (one GSO skb) whole, where a
# faulty link faults packets.
bursts=/sys/module/stag/parameters/tx_bursts
netem_tc()
{
	local nd=$1 spec=$2

	echo "tc qdisc del dev $nd root 2>/dev/null; echo Y >$bursts; true"
	[ -n "$spec" ] || return 0
	# prio's first band takes everything but what the filter sends to the second.
	echo "echo N >$bursts &&
	      tc qdisc add dev $nd root handle 1: prio bands 2 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
	      tc qdisc add dev $nd parent 1:2 handle 20: netem $spec &&
	      tc filter add dev $nd parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:2"
}
netem_set()
{
	bash -c "$(netem_tc "$netdev" "$1")" || return 1
	# shellcheck disable=SC2016 # expanded in the peer
	peer_run "$(netem_tc '$(dev_netdev @DEV@)' "$1")" "$tmp/tc" || { cat "$tmp/tc"; return 1; }
}
trap 'netem_set "" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

counter() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo -1; }
# both NAME: this guest's and the peer's counter NAME, summed; -1 where neither has it.
both()
{
	local here there

	here=$(counter "$dev" "$1")
	peer_run "$(declare -f counter); counter @DEV@ $1" "$tmp/c" && there=$(cat "$tmp/c")
	if [ "$here" -lt 0 ] && [ "${there:--1}" -lt 0 ]; then
		echo -1
	else
		echo $(( (here > 0 ? here : 0) + (${there:-0} > 0 ? ${there:-0} : 0) ))
	fi
}

echo "# $dev at $ip (GID index $gid, netdev $netdev); server: $peer at $STAG_PEER_IP"
for p in $profiles; do
	spec=$(netem_profile "$p") || { _t_report "not ok" "profile $p" "no such profile"; continue; }
	if ! netem_set "$spec"; then
		_t_report "not ok" "[$p] netem $spec on both guests" "tc failed"
		continue
	fi
	echo "# profile $p: netem $spec, both ways"
	before=$(both icrc_errors) pkts=$(both rcvd_pkts) rexmit=$(both retransmitted_pkts)
	if ! serve_start "tcp_listening $port" "$T_BIN/wire_test -d @DEV@ -g @GID@ --serve $port" \
		"$limit" "$tmp/srv"; then
		_t_report "not ok" "[$p] wire_test --serve listens on $peer" "$(tail -20 "$tmp/srv")"
		netem_set ""
		continue
	fi
	# shellcheck disable=SC2086 # the patterns are words
	STAG_LOSSY_PROFILE=$p "$T_BIN/wire_test" --lossy -d "$dev" -g "$gid" \
		-c "$STAG_PEER_IP:$port" ${STAG_LOSSY_CASES:-} | tee "$tmp/cli"
	crc=${PIPESTATUS[0]}
	[ "$crc" -eq 0 ] || _t_report "not ok" "[$p] wire_test --lossy ran to the end" "exit status $crc"
	serve_report "$crc" "$tmp/srv" "[$p] the server on $peer destroyed what each case made"
	after=$(both icrc_errors) pkts=$(( $(both rcvd_pkts) - pkts ))
	# The faults reached the RoCE packets, not only the rest of the traffic.
	case $p in
	loss*|all)
		if [ "$rexmit" -ge 0 ] && [ "$pkts" -ge 5000 ]; then
			t_run "[$p] RoCE packets were lost: retransmitted_pkts $rexmit -> $(both retransmitted_pkts)" \
				test "$(both retransmitted_pkts)" -gt "$rexmit"
		fi ;;
	esac
	# 0.5% of 5000 packets or more: none corrupted has odds below 1e-10.
	case $p in
	corrupt|all)
		if [ "$before" -lt 0 ]; then
			:
		elif [ "$pkts" -lt 5000 ]; then
			echo "ok - lossy: [$p] the ICRC caught corrupted packets # SKIP $pkts packets are too few to expect one"
		else
			t_run "[$p] the ICRC caught corrupted packets (icrc_errors $before -> $after in $pkts packets)" \
				test "$after" -gt "$before"
		fi ;;
	esac
	netem_set "" || _t_report "not ok" "[$p] netem lifted" "tc failed"
done
