#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The foundation: module load/unload, rdma link add/delete on eth0, lo and
# dummy netdevs, what ibv_devinfo reports, port state following the netdev
# with its async events, PDs from userspace, and bad input.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0 on
# $STAG_NETDEV.
#
#   STAG_LINK_LOOPS	adds and deletes of each repeated link (default 20)
. "$(dirname "$0")/lib.sh"

dev=${STAG_NETDEV:-eth0}
loops=${STAG_LINK_LOOPS:-20}

port_state()
{
	ibv_devinfo -d "$1" 2>/dev/null | sed -n 's/^[[:space:]]*state:[[:space:]]*\([A-Z_]*\).*/\1/p'
}

devinfo_field()
{
	ibv_devinfo -v -d "$1" 2>/dev/null | sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -1
}

has_link()
{
	rdma link show "$1/1" >/dev/null 2>&1
}

no_link()
{
	! has_link "$1"
}

t_run "module is loaded" grep -q '^stag ' /proc/modules
t_run "stag0 is bound to $dev" sh -c "rdma link show stag0/1 | grep -q 'netdev $dev'"
t_run "ibv_devices lists stag0" sh -c 'ibv_devices | grep -qw stag0'

out=$(ibv_devinfo -v -d stag0 2>&1 >/dev/null)
t_eq "ibv_devinfo -v prints no warnings" "" "$out"
t_eq "link layer is Ethernet" "Ethernet" "$(devinfo_field stag0 link_layer)"
t_eq "transport is InfiniBand (RoCE)" "InfiniBand (0)" "$(devinfo_field stag0 transport)"
t_eq "port is active" "PORT_ACTIVE" "$(port_state stag0)"
t_eq "active MTU follows a 1500-byte netdev" "1024 (3)" "$(devinfo_field stag0 active_mtu)"
t_eq "max MTU is 4096" "4096 (5)" "$(devinfo_field stag0 max_mtu)"
t_eq "phys state is LINK_UP" "LINK_UP (5)" "$(devinfo_field stag0 phys_state)"

if [ "$dev" != lo ]; then
	ip4=$(ip -4 -o addr show dev "$dev" | awk '{ split($4, a, "/"); print a[1]; exit }')
	t_run "GID table has the IPv4 address $ip4 as RoCE v2" \
		sh -c "ibv_devinfo -v -d stag0 | grep -q 'GID\[ *[0-9]*\]:.*::ffff:$ip4, RoCE v2'"
	t_run "GID table has the link-local default GID" \
		sh -c "ibv_devinfo -v -d stag0 | grep -q 'GID\[ *0\]:.*fe80:.*RoCE v2'"

	ip -6 addr add fd5a:7a9::15/64 dev "$dev" nodad
	t_run "GID table gains an IPv6 address as RoCE v2" wait_for 5 \
		sh -c "ibv_devinfo -v -d stag0 | grep -q 'GID\[ *[0-9]*\]:.*fd5a:7a9::15, RoCE v2'"
	ip -6 addr del fd5a:7a9::15/64 dev "$dev"
	t_run "and loses it with the address" wait_for 5 \
		sh -c "! ibv_devinfo -v -d stag0 | grep -q 'fd5a:7a9::15'"

	events=/tmp/asyncwatch.out
	ibv_asyncwatch -d stag0 > "$events" 2>&1 &
	watch=$!
	sleep 1
	ip link set "$dev" down
	t_run "port goes down with the netdev" wait_for 5 sh -c "[ \"\$(ibv_devinfo -d stag0 | sed -n 's/^[[:space:]]*state:[[:space:]]*\([A-Z_]*\).*/\1/p')\" = PORT_DOWN ]"
	t_run "netdev down raises IBV_EVENT_PORT_ERR" wait_for 5 grep -q IBV_EVENT_PORT_ERR "$events"
	ip link set "$dev" up
	t_run "port comes back with the netdev" wait_for 5 sh -c "[ \"\$(ibv_devinfo -d stag0 | sed -n 's/^[[:space:]]*state:[[:space:]]*\([A-Z_]*\).*/\1/p')\" = PORT_ACTIVE ]"
	t_run "netdev up raises IBV_EVENT_PORT_ACTIVE" wait_for 5 grep -q IBV_EVENT_PORT_ACTIVE "$events"
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	t_eq "each transition raised exactly one event" "1 1" \
		"$(grep -c IBV_EVENT_PORT_ERR "$events") $(grep -c IBV_EVENT_PORT_ACTIVE "$events")"
fi

t_run "PDs from userspace" "$T_ROOT/tools/provider/tests/pd_smoke" stag0
out=$("$T_ROOT/tools/provider/tests/dmabuf_smoke" stag0 2>&1)
if [ "${out%%:*}" = skip ]; then
	echo "ok - $T_SUITE: a dma-buf region from userspace # SKIP ${out#skip: }"
else
	t_eq "a dma-buf region from userspace (offset, length, refusals)" ok "$out"
fi

# Repeated add/delete, on lo and on the guest's NIC.
loop()
{
	local name=$1 nd=$2 i
	for i in $(seq 1 "$loops"); do
		rdma link add "$name" type stag netdev "$nd" || return 1
		has_link "$name" || return 1
		rdma link delete "$name" || return 1
		no_link "$name" || return 1
	done
}
t_run "add and delete a link on lo $loops times" loop stag_lo lo
rdma link add stag_lo type stag netdev lo
t_eq "a link on lo is active" "PORT_ACTIVE" "$(port_state stag_lo)"
t_run "a link on lo has the IPv4 loopback GID" \
	sh -c "ibv_devinfo -v -d stag_lo | grep -q '::ffff:127.0.0.1, RoCE v2'"
rdma link delete stag_lo
rdma link delete stag0
t_run "add and delete a link on $dev $loops times" loop stag0 "$dev"
t_run "stag0 comes back on $dev" rdma link add stag0 type stag netdev "$dev"

# MTU: a dummy netdev can go to 9000 where the NIC cannot.
ip link add stagd0 type dummy
ip link set stagd0 mtu 9000 up
t_run "add on a dummy netdev" rdma link add stag_d type stag netdev stagd0
t_eq "active MTU follows a 9000-byte netdev" "4096 (5)" "$(devinfo_field stag_d active_mtu)"
ip link set stagd0 mtu 1200
t_eq "active MTU follows an MTU change" "1024 (3)" "$(devinfo_field stag_d active_mtu)"

# Bad input: each fails with its own errno and changes nothing.
before=$(stag_links)
t_fails "nonexistent netdev: ENODEV" "No such device" \
	rdma link add stag_x type stag netdev nosuchdev
t_fails "netdev already has a stag device: EEXIST" "File exists" \
	rdma link add stag_x type stag netdev stagd0
mark=$(dmesg | wc -l)
t_fails "name already taken: EEXIST" "File exists" \
	rdma link add stag_d type stag netdev lo
# The name a renamed device was added under stays taken while it lives:
# its debugfs directory has it. (stag_d was added on lo before the fix,
# with the kernel saying its directory existed.)
t_run "rename stag_d to stag_r" rdma dev set stag_d name stag_r
t_fails "the name stag_r had at its link add: EEXIST" "File exists" \
	rdma link add stag_d type stag netdev lo
t_run "rename stag_r back to stag_d" rdma dev set stag_r name stag_d
t_eq "taken names: the kernel says nothing of debugfs" "" \
	"$(dmesg | tail -n +$((mark + 1)) | grep -i debugfs)"
modprobe tun
ip tuntap add dev stagtun0 mode tun
ip link set stagtun0 up
t_fails "non-Ethernet netdev: EINVAL" "Invalid argument" \
	rdma link add stag_x type stag netdev stagtun0
t_fails "name without the stag prefix: EINVAL" "Invalid argument" \
	rdma link add foo0 type stag netdev lo
t_fails "bare prefix as a name: EINVAL" "Invalid argument" \
	rdma link add stag type stag netdev lo
t_eq "failed adds changed nothing" "$before" "$(stag_links)"
ip tuntap del dev stagtun0 mode tun

# The device follows its netdev out.
ip link del stagd0
t_run "netdev unregistration removes its device" wait_for 10 no_link stag_d

# rmmod while devices exist, then autoload by rdma link add.
rdma link add stag_lo type stag netdev lo
t_run "rmmod with devices present" rmmod stag
t_eq "no stag device is left" "" "$(ls /sys/class/infiniband | grep '^stag' || true)"
t_run "rdma link add autoloads stag" rdma link add stag0 type stag netdev "$dev"
t_run "the module is back" grep -q '^stag ' /proc/modules

# rmmod while a process holds a context: the context is disassociated, the
# process sees EIO, and rmmod does not wait for it.
fifo=/tmp/ctx_hold.fifo
# A holder that died early must fail its case, not kill this script.
trap '' PIPE
rm -f "$fifo"
mkfifo "$fifo"
"$T_BIN/ctx_hold" stag0 < "$fifo" > /tmp/ctx_hold.out 2>&1 &
holder=$!
exec 7> "$fifo"
wait_for 10 grep -q ready /tmp/ctx_hold.out
t_run "rmmod with an open user context" timeout 30 rmmod stag
echo go >&7
exec 7>&-
wait "$holder"
t_eq "the holder saw its context disassociated (EIO)" "0" "$?"
grep '^#' /tmp/ctx_hold.out
t_run "stag0 back after forced removal" rdma link add stag0 type stag netdev "$dev"

# UDP port 4791: whoever binds it first carries RoCE v2 for the host
# (Documentation/stag.rst, "Sharing the machine with rdma_rxe").
port_4791() { [ -n "$(ss -Hlun 'sport = :4791' 2>/dev/null)" ]; }
taken_said() { dmesg | grep -q 'stag: UDP port 4791 is taken'; }
if grep -q '^rdma_rxe ' /proc/modules; then
	t_run "rdma_rxe has UDP port 4791: stag says it serves this host only" taken_said
else
	t_run "stag's devices hold UDP port 4791" port_4791
	# rdma_rxe binds the port when it loads before 7.1; from 7.1 (its
	# sockets are per network namespace) at its first device.
	if kernel_before 7.1; then
		t_run "rdma_rxe cannot load while stag has the port" sh -c '! modprobe rdma_rxe'
	else
		t_run "rdma_rxe loads while stag has the port" modprobe rdma_rxe
		t_run "an rdma_rxe device cannot be created while stag has the port" \
			sh -c "! rdma link add rxe0 type rxe netdev $dev"
	fi
	for l in $(stag_links | sed "s/^link //"); do
		rdma link delete "$l"
	done
	t_run "the last stag device lets the port go" sh -c '! ss -Hlun "sport = :4791" | grep -q .'
	if kernel_before 7.1; then
		t_run "then rdma_rxe loads and takes it" \
			sh -c 'modprobe rdma_rxe && ss -Hlun "sport = :4791" | grep -q .'
	else
		t_run "then an rdma_rxe device takes it" \
			sh -c "rdma link add rxe0 type rxe netdev $dev && ss -Hlun 'sport = :4791' | grep -q ."
	fi
	t_run "a stag device added now works, for this host only" \
		sh -c "rdma link add stag0 type stag netdev $dev && dmesg | grep -q 'stag: UDP port 4791 is taken'"
	rdma link delete stag0
	rdma link delete rxe0 2>/dev/null
	rmmod rdma_rxe
	t_run "once rdma_rxe is gone, a new stag device has the wire again" \
		sh -c "rdma link add stag0 type stag netdev $dev && ss -Hlun 'sport = :4791' | grep -q ."
fi
