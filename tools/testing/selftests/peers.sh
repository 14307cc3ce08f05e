#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Peers that fail, in a two-guest run with stag in this guest (it changes
# this guest's netdev and unloads its module):
#
#  - wire_test --peers (wire_peers.c): the peer's process SIGKILLed in the
#    middle of a transfer, this netdev down and up, its MTU shrunk under a
#    live QP; then, in a memory cgroup of 64 MiB, 64 MiB of WRITEs posted
#    while the peer's ACKs are blackholed;
#  - rmmod stag here while a transfer runs, its process stopped: rmmod
#    returns at once (contexts are disassociated), every page the transfer
#    pinned is released while the process still lives, and a new device
#    works;
#  - rmmod stag in the peer while this side transfers: the same there, and
#    this side's WRITEs end in RETRY_EXC_ERR.
#
#   tools/testing/vm/pair -- peers.sh
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
port=18793
limit=600
tmp=$(mktemp -d /tmp/peers.XXXXXX)
export STAG_WIRE_TIMEOUT=${STAG_WIRE_TIMEOUT:-120}

case $dev in
stag*)	;;
*)	echo "ok - peers: peers that fail # SKIP $dev is not a stag device"; exit 0 ;;
esac
pair_setup "peers that fail" || exit 0
mtu0=$(cat "/sys/class/net/$netdev/mtu")
trap 'ip link set dev "$netdev" up mtu "$mtu0" 2>/dev/null; umount "$tmp/cgroup2" 2>/dev/null
      rm -rf "$tmp"' EXIT

peer_pins() { peer_run "$(declare -f pins); pins" "$tmp/pp" && cat "$tmp/pp"; }

# serve PORT: wire_test's server in the peer.
serve()
{
	serve_start "tcp_listening $1" "$T_BIN/wire_test -d @DEV@ -g @GID@ --serve $1" \
		"$limit" "$tmp/srv" && return 0
	_t_report "not ok" "wire_test --serve listens on $peer" "$(tail -20 "$tmp/srv")"
	return 1
}

# victim PORT: RC WRITEs to the peer until its device is gone (wire_peers.c),
# in a process group of its own, $VICTIM: wire_test runs the case in a
# child (t_case_run), and a signal must reach the child. Once only the
# parent was stopped and killed: the child wrote on, its QP's device gone,
# and its "no completion in 60 s" a minute later landed in the next
# victim's output, failing that case on slow guests.
victim()
{
	setsid "$T_BIN/wire_test" --peers -d "$dev" -g "$gid" -c "$STAG_PEER_IP:$1" \
		"until the peer's device is gone" >"$tmp/victim" 2>&1 &
	VICTIM=$!
}

# victim_gone: no process of the victim's is left, its case's child neither.
victim_gone() { ! pgrep -f "[u]ntil the peer's device is gone" >/dev/null; }

# victim_end: the victim killed, and within 10 s nothing of it left to
# write into $tmp/victim when the next one starts (wall-clock seconds: a
# child left behind lives on for a minute, and wait_for's tries of pgrep
# can take that long under TCG).
victim_end()
{
	local end=$((SECONDS + 10))

	kill -9 -- -"$VICTIM" 2>/dev/null
	wait "$VICTIM" 2>/dev/null
	while ! victim_gone && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.2
	done
	t_run "no process of the victim is left" victim_gone
}

# flowing: the victim's WRITEs are on the wire.
flowing() { grep -q '^# flowing' "$tmp/victim"; }

# stag_back_here: the device added again, with its RoCE v2 GID.
stag_back_here()
{
	rdma link add "$dev" type stag netdev "$netdev" &&
		wait_for 10 roce_v2_index "$dev" "$ip"
}

echo "# $dev at $ip (GID index $gid, netdev $netdev, MTU $mtu0); server: $peer at $STAG_PEER_IP"

# ---- the C cases ----
if serve "$port"; then
	"$T_BIN/wire_test" --peers -d "$dev" -g "$gid" -c "$STAG_PEER_IP:$port" | tee "$tmp/cli"
	crc=${PIPESTATUS[0]}
	[ "$crc" -eq 0 ] || _t_report "not ok" "wire_test --peers ran to the end" "exit status $crc"
	serve_report "$crc" "$tmp/srv" "the server on $peer destroyed what each case made"
fi
t_eq "the netdev's MTU is back" "$mtu0" "$(cat "/sys/class/net/$netdev/mtu")"

# ---- the peer's ACKs blackholed, the client in a memory cgroup ----
port=$((port + 1))
if ! cg=$(memcg_new stag-peers 64M "$tmp/cgroup2"); then
	echo "ok - peers: ACKs blackholed in a memory cgroup # SKIP no cgroup v2 memory controller"
elif serve "$port"; then
	in_cgroup "$cg" "$T_BIN/wire_test" --peers -d "$dev" -g "$gid" -c "$STAG_PEER_IP:$port" \
		"ACKs blackholed" | tee "$tmp/cli"
	crc=${PIPESTATUS[0]}
	[ "$crc" -eq 0 ] || _t_report "not ok" "wire_test --peers in the cgroup ran to the end" \
		"exit status $crc"
	serve_report "$crc" "$tmp/srv" "the server on $peer destroyed what the case made"
	echo "# memory cgroup: max 64M, peak $(cat "$cg/memory.peak" 2>/dev/null || echo ?)"
	t_eq "the cgroup's process was never OOM-killed" 0 \
		"$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")"
	rmdir "$cg"
fi

# ---- rmmod here, with a live connection ----
port=$((port + 1))
if serve "$port"; then
	pins0=$(pins)
	victim "$port"
	wait_for 60 flowing
	t_run "the victim's WRITEs are flowing" flowing
	# Stopped, it cannot exit and so release its pages itself: the
	# disassociation must. Its WRITEs in flight go on in the kernel.
	kill -STOP -- -"$VICTIM"
	t_run "rmmod stag here, a transfer in flight: returns within 30 s" timeout 30 rmmod stag
	t_run "the module is gone" sh -c '! grep -q "^stag " /proc/modules'
	t_eq "every page the transfer pinned is released (the victim stopped, alive)" \
		"$pins0" "$(pins)"
	t_run "the victim is still alive" kill -0 -- -"$VICTIM"
	victim_end
	serve_end 1 "$tmp/srv"
	t_run "stag0 added again" stag_back_here
fi

# ---- rmmod in the peer, with a live connection ----
port=$((port + 1))
peer_run 'dev_netdev @DEV@' "$tmp/pn"
pnetdev=$(cat "$tmp/pn")
ppins0=$(peer_pins)
if [ -n "$pnetdev" ] && serve "$port"; then
	victim "$port"
	# Where this side's QPs stand every 2 s, for a failure to show.
	while sleep 2; do date +%T; rdma -dd resource show qp; done >"$tmp/qps" 2>&1 &
	watch=$!
	wait_for 60 flowing
	t_run "the victim's WRITEs are flowing" flowing
	# The server stopped, as the victim above ("[w]": not this shell).
	peer_run 'pkill -STOP -f "[w]ire_test.*--serve"' "$tmp/stop"
	t_run "rmmod stag in the peer, a transfer in flight: returns within 30 s" \
		peer_run "timeout 30 rmmod stag" "$tmp/rm"
	t_eq "every page the peer's server pinned is released (the server stopped, alive)" \
		"$ppins0" "$(peer_pins)"
	peer_run 'pkill -CONT -f "[w]ire_test.*--serve"' "$tmp/stop"
	# A peer gone silent: this side's WRITE ends in RETRY_EXC_ERR.
	wait_for 60 grep -q '^\(not \)\?ok - peers: RC WRITEs until' "$tmp/victim"
	grep '^# [0-9]* WRITEs done' "$tmp/victim"
	t_run "this side's WRITE in flight: RETRY_EXC_ERR, the rest flushed" \
		grep -q "^ok - peers: RC WRITEs until the peer's device is gone" "$tmp/victim"
	if ! grep -q "^ok - peers: RC WRITEs until" "$tmp/victim"; then
		sed -n '/^not ok/,+4p;/^# .*drv_/p' "$tmp/victim" | sed 's/^/# victim: /'
		tail -n 24 "$tmp/qps" | sed 's/^/# qps: /'
		cp "$tmp/victim" "$tmp/qps" "$STAG_OUT/" 2>/dev/null
	fi
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	grep -H . /sys/class/infiniband/"$dev"/ports/1/hw_counters/* 2>/dev/null |
		grep -v ':0$' | sed 's|.*/|# counter: |'
	victim_end
	serve_end 1 "$tmp/srv"
	t_run "stag0 added again in the peer" \
		peer_run "rdma link add @DEV@ type stag netdev $pnetdev" "$tmp/add"
fi
