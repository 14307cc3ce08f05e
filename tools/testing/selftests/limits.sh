#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Object limits and ring memory. The max_* module parameters refuse what
# they cannot hold; a device created with every limit at 8 reports and
# enforces them (bin/res_test, see res_test.c: EINVAL past each, threads
# racing, another process, restrack); stag0, created before, keeps the
# defaults. Then CQ rings created from a 48 MiB memory cgroup must be
# charged to it and fail with ENOMEM, not the OOM killer, past its limit.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0.
. "$(dirname "$0")/lib.sh"

params=/sys/module/stag/parameters
kinds="pd cq qp srq mr mw ah xrcd"
limit=8
netdev=stagres0
dev=stagres
addr=10.99.0.1
tmp=$(mktemp -d /tmp/limits.XXXXXX)

if [ "${STAG_TEST_DEV:-stag0}" != stag0 ] || [ ! -d "$params" ]; then
	echo "ok - limits: object limits # SKIP not a stag run"
	exit 0
fi

declare -A saved
for k in $kinds; do
	saved[$k]=$(cat "$params/max_$k")
done
restore()
{
	local k

	for k in $kinds; do
		echo "${saved[$k]}" >"$params/max_$k"
	done
}
trap 'rdma link delete "$dev" 2>/dev/null; ip link del "$netdev" 2>/dev/null; restore
      umount "$tmp/cgroup2" 2>/dev/null; rm -rf "$tmp"' EXIT

# ---- the parameters ----
# bash, not sh: dash's echo says "I/O error" whatever the errno.
t_fails "max_pd refuses 0" "Invalid argument" bash -c "echo 0 >$params/max_pd"
t_fails "max_pd refuses one past its default" "Invalid argument" \
	bash -c "echo $((saved[pd] + 1)) >$params/max_pd"
t_fails "max_mw refuses a word" "Invalid argument" bash -c "echo many >$params/max_mw"
t_eq "max_pd keeps its value after those" "${saved[pd]}" "$(cat "$params/max_pd")"

# ---- a device created with every limit at $limit ----
for k in $kinds; do
	echo "$limit" >"$params/max_$k"
done
ip link add "$netdev" type dummy && ip addr add "$addr/24" dev "$netdev" &&
	ip link set "$netdev" up && rdma link add "$dev" type stag netdev "$netdev"
restore
gid=$(wait_for 10 roce_v2_index "$dev" "$addr" && roce_v2_index "$dev" "$addr")
if [ -z "$gid" ]; then
	_t_report "not ok" "$dev on $netdev with a RoCE v2 GID of $addr" "GID index '$gid'"
	exit 0
fi
t_eq "stag0, created before, still reports the default max_qp" "${saved[qp]}" \
	"$(ibv_devinfo -v -d stag0 | sed -n 's/^[[:space:]]*max_qp:[[:space:]]*//p')"
"$T_BIN/res_test" "$dev" "$gid" "$limit" "$@"
rc=$?
[ "$rc" -eq 0 ] || _t_report "not ok" "res_test ran to the end" "exit status $rc"
t_run "$dev is deleted with nothing left of the cases" rdma link delete "$dev"

# ---- rings in a memory cgroup ----
if ! cg=$(memcg_new stag-limits 48M "$tmp/cgroup2"); then
	echo "ok - limits: rings charged to the memory cgroup # SKIP no cgroup v2 memory controller"
	exit 0
fi
in_cgroup "$cg" "$T_BIN/res_test" --ring stag0 "$cg"
rc=$?
[ "$rc" -eq 0 ] || _t_report "not ok" "res_test --ring ran to the end" "exit status $rc"
rmdir "$cg"
