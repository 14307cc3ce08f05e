#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The stag trace system (drivers/infiniband/sw/stag/trace.h): every event
# appears when what it reports happens, with the fields that answer "why
# did my RDMA WRITE fail with REM_ACCESS_ERR?" (Documentation/stag.rst,
# "Tracing"). Cases of qp_test and mw_test make the events, with every
# stag event on in tracefs; this reads the trace they leave.
#
# The retransmission event needs the wire (stag.loopback=0): the loopback
# path has no packets to send again.
#
# Needs a kernel with event tracing (Debian's; the debug kernel has none).
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
tr=/sys/kernel/tracing
tmp=$(mktemp -d)
trap 'echo 0 >"$tr/events/stag/enable" 2>/dev/null; rm -rf "$tmp"' EXIT

[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
if [ "$(cat "/sys/class/infiniband/$dev/ports/1/hw_counters/drop_qkey" 2>/dev/null)" = "" ]; then
	echo "ok - trace: the stag trace system # SKIP $dev is not a stag device"
	exit 0
fi
if [ ! -d "$tr/events" ]; then
	echo "ok - trace: the stag trace system # SKIP this kernel has no event tracing"
	exit 0
fi

events="gate_refused qp_state mr_reg mr_dereg mw_bind invalidate drop retransmit"
missing=''
for e in $events; do
	[ -f "$tr/events/stag/stag_$e/format" ] || missing+=" stag_$e"
done
t_eq "tracefs lists every stag event" "" "$missing"

# traced OUT CMD...: runs CMD with every stag event on; its trace goes to
# OUT, its output to OUT.log.
traced()
{
	local out=$1 rc

	shift
	echo 0 >"$tr/tracing_on"
	echo >"$tr/trace"
	echo 1 >"$tr/events/stag/enable"
	echo 1 >"$tr/tracing_on"
	"$@" >"$out.log" 2>&1
	rc=$?
	echo 0 >"$tr/tracing_on"
	echo 0 >"$tr/events/stag/enable"
	cat "$tr/trace" >"$out"
	echo 1 >"$tr/tracing_on"
	return $rc
}

# case_ok LOG: the one case the test ran passed.
case_ok() { grep -q '^ok ' "$1" && ! grep -q '^not ok' "$1"; }

# field LINE NAME: the word after NAME in LINE.
field() { sed -n "s/.* $2 \([^ ,:)]*\).*/\1/p" <<<"$1"; }

# ---- a WRITE one byte past a region: the refusal, its key and address ----
traced "$tmp/bounds" "$T_BIN/qp_test" "$dev" "RC RDMA_WRITE of the byte past a region's end"
t_run "qp_test: the WRITE past the region fails with REM_ACCESS_ERR" case_ok "$tmp/bounds.log"
refused=$(grep -m1 ' stag_gate_refused: ' "$tmp/bounds")
echo "# ${refused#*: }"
t_run "stag_gate_refused: bounds, for a REMOTE_WRITE of 1 byte" \
	grep -qE "^$dev qpn [0-9]+ key 0x[0-9a-f]{8} refused: bounds \(asked REMOTE_WRITE at 0x[0-9a-f]+ len 1\)$" \
	<<<"${refused#*stag_gate_refused: }"
key=$(field "$refused" key)
addr=$(field "$refused" at)
qpn=$(field "$refused" qpn)
reg=$(grep -m1 " stag_mr_reg: $dev reg key ${key:-none} " "$tmp/bounds")
echo "# ${reg#*: }"
iova=$(field "$reg" iova)
length=$(field "$reg" length)
t_run "stag_mr_reg: the refused key's registration, with its iova and length" \
	test -n "$iova" -a -n "$length"
t_eq "the address refused is the byte just past that region (iova + length)" \
	"$(printf '0x%x' $((${iova:-0} + ${length:-0})))" "${addr:-none}"
t_run "stag_qp_state: the refusing QP $qpn went RESET -> INIT -> RTR -> RTS" \
	sh -c "grep -q ' qpn $qpn RESET -> INIT' '$tmp/bounds' &&
	       grep -q ' qpn $qpn INIT -> RTR' '$tmp/bounds' &&
	       grep -q ' qpn $qpn RTR -> RTS' '$tmp/bounds'"
t_run "stag_qp_state: the requester's error put a QP in ERR" \
	grep -q " stag_qp_state: $dev qpn [0-9]* RTS -> ERR" "$tmp/bounds"
t_run "stag_mr_dereg: the region deregistered at the end" \
	grep -q " stag_mr_dereg: $dev key $key$" "$tmp/bounds"

# ---- a key no longer registered ----
traced "$tmp/stale" "$T_BIN/qp_test" "$dev" "RC RDMA_WRITE with a stale rkey"
t_run "qp_test: the WRITE with a stale rkey fails with REM_ACCESS_ERR" case_ok "$tmp/stale.log"
t_run "stag_gate_refused: key, for a REMOTE_WRITE" \
	grep -qE " stag_gate_refused: $dev qpn [0-9]+ key 0x[0-9a-f]{8} refused: key \(asked REMOTE_WRITE " \
	"$tmp/stale"

# ---- windows: a bind, a Local Invalidate ----
traced "$tmp/mw" "$T_BIN/mw_test" "$dev" \
	"region with a bound type 2 window: dereg EBUSY, still works; LOCAL_INV, dereg"
t_run "mw_test: bind, LOCAL_INV, dereg" case_ok "$tmp/mw.log"
bind=$(grep -m1 ' stag_mw_bind: ' "$tmp/mw")
t_run "stag_mw_bind: the type 2 bind succeeded, with its rights" \
	grep -qE "^$dev qpn [0-9]+ window 0x[0-9a-f]{8} -> (0x[0-9a-f]{8}) over 0x[0-9a-f]{8} at 0x[0-9a-f]+ length [0-9]+ access [^:]*REMOTE_WRITE[^:]*: success$" \
	<<<"${bind#*stag_mw_bind: }"
echo "# ${bind#*: }"
rkey=$(sed -n 's/.* -> \(0x[0-9a-f]*\) over .*/\1/p' <<<"$bind")
t_run "stag_invalidate: the consumer's LOCAL_INV of that window's rkey, 0" \
	grep -q " stag_invalidate: $dev qpn [0-9]* key ${rkey:-none} by the consumer: 0$" "$tmp/mw"

# ---- a drop, under its reason and QP ----
traced "$tmp/qkey" "$T_BIN/qp_test" "$dev" "UD SEND with the wrong qkey is dropped"
t_run "qp_test: the UD SEND with the wrong qkey is dropped" case_ok "$tmp/qkey.log"
t_run "stag_drop: drop_qkey, at a QP" \
	grep -qE " stag_drop: $dev qpn [1-9][0-9]* drop_qkey$" "$tmp/qkey"

# ---- a retransmission (the wire only) ----
case $(cat /sys/module/stag/parameters/loopback 2>/dev/null) in
0|N) wire=1 ;;
*) wire=0 ;;
esac
if [ "$wire" = 0 ]; then
	echo "ok - trace: stag_retransmit after an RNR wait # SKIP loopback: nothing is sent twice"
else
	traced "$tmp/rnr" "$T_BIN/qp_test" "$dev" \
		"RC SEND with rnr_retry 7 completes once a receive is posted 50 ms later"
	t_run "qp_test: the SEND completes after its RNR waits" case_ok "$tmp/rnr.log"
	t_run "stag_retransmit: the SEND again once its RNR wait is over" \
		grep -qE " stag_retransmit: $dev qpn [0-9]+ back to psn [0-9]+ .*, rnr_wait_over, [0-9]+ retries left$" \
		"$tmp/rnr"
fi
