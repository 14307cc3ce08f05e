#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The verbs fuzzer (bin/fuzz, see fuzz.c): processes of threads making
# random verbs calls, valid and hostile, killed at random points, for
# STAG_FUZZ_SECONDS (default 60) from STAG_FUZZ_SEED (default 1). After
# it, everything the kernel held for them must be back where it was: the
# host's FOLL_PIN balance, every process's VmPin, the TPT's entries
# (debugfs), the device's restrack counts. Then the fuzzer runs again and
# stag is unloaded under it: rmmod returns, every pin is released, and
# stag0 is added back. A kernel report anywhere fails the run (vm/run).
#
# Runs in the guest (tools/testing/vm/run), which has created stag0.
. "$(dirname "$0")/lib.sh"

dev=stag0
secs=${STAG_FUZZ_SECONDS:-60}
seed=${STAG_FUZZ_SEED:-1}
tpt=/sys/kernel/debug/stag/$dev/tpt

if [ "${STAG_TEST_DEV:-stag0}" != stag0 ]; then
	echo "ok - fuzz: the verbs fuzzer # SKIP not a stag run"
	exit 0
fi
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
netdev=$(dev_netdev "$dev")
ip=$(dev_ip "$dev")
gid=$(roce_v2_index "$dev" "$ip")
if [ -z "$gid" ]; then
	_t_report "not ok" "a RoCE v2 GID of an IPv4 address on $dev" "address '$ip'"
	exit 0
fi

summary() { rdma resource show 2>/dev/null | grep " $dev: "; }
tpt_entries() { awk '$1 == "entries:" { print $2 }' "$tpt"; }
# Every process's VmPin, summed (kB).
vmpin() { cat /proc/[0-9]*/status 2>/dev/null | awk '$1 == "VmPin:" { s += $2 } END { print s + 0 }'; }

pins0=$(pins)
res0=$(summary)
tpt0=$(tpt_entries)
echo "# seed $seed, $secs s; before: $res0; TPT entries $tpt0; FOLL_PIN balance $pins0"
"$T_BIN/fuzz" -d "$dev" -g "$gid" -s "$seed" -t "$secs"
rc=$?
t_eq "the fuzzer's workers died of nothing but its own SIGKILL (seed $seed)" 0 "$rc"
# What a killed process held is released as its file closes; give it time.
wait_for 10 sh -c "[ \"\$(rdma resource show 2>/dev/null | grep ' $dev: ')\" = '$res0' ]"
t_eq "restrack: $dev holds what it held before" "$res0" "$(summary)"
t_eq "the TPT holds as many entries as before" "$tpt0" "$(tpt_entries)"
t_eq "every page pinned is released (FOLL_PIN balance)" "$pins0" "$(pins)"
t_eq "no process has pinned memory (VmPin)" 0 "$(vmpin)"

# ---- rmmod under the fuzzer ----
"$T_BIN/fuzz" -d "$dev" -g "$gid" -s "$((seed + 1))" -t 20 -R >/tmp/fuzz-rmmod.out 2>&1 &
fuzzer=$!
sleep 4
t_run "rmmod stag under the fuzzer: returns within 30 s" timeout 30 rmmod stag
t_run "the module is gone" sh -c '! grep -q "^stag " /proc/modules'
wait "$fuzzer"
rc=$?
sed -n 's/^# fuzz: [0-9]* workers/# fuzz under rmmod: &/p' /tmp/fuzz-rmmod.out
t_eq "the fuzzer's workers, the device gone under them, died of nothing else" 0 "$rc"
t_eq "every page pinned is released after rmmod" "$pins0" "$(pins)"
t_eq "no process has pinned memory after rmmod" 0 "$(vmpin)"
back_here() { rdma link add "$dev" type stag netdev "$netdev" && wait_for 10 roce_v2_index "$dev" "$ip"; }
t_run "stag0 added again" back_here
