#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The provider under another Debian suite's userspace: STAG_CHROOTS names
# chroots as SUITE:ROOT (tools/testing/vm/userspace-chroot makes them, with
# that suite's rdma-core and the provider built inside against it). In
# each, with this guest's /dev, /proc and /sys mounted: ibv_devinfo lists
# the device, ibv_rc_pingpong moves data between two processes of that
# userspace, and between one of it and one of this guest's (rdma-core 44),
# and ibv_ud_pingpong and ibv_srq_pingpong between two of it.
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
iters=200
tcp=18900
if [ -z "${STAG_CHROOTS:-}" ]; then
	echo "ok - userspace: other rdma-core releases # SKIP STAG_CHROOTS is not set"
	exit 0
fi
ip=$(dev_ip "$dev")
gid=$(roce_v2_index "$dev" "$ip")
tmp=$(mktemp -d /tmp/userspace.XXXXXX)
mounted=()
cleanup()
{
	local m
	for m in "${mounted[@]}"; do
		umount -l "$m" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# pingpong NAME SERVER... -- CLIENT...: a server and a client on one TCP
# port, each exiting 0 with every iteration done and no invalid data.
pingpong()
{
	local name=$1 srv=() cli=() out=""
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	tcp=$((tcp + 1))
	timeout 60 "${srv[@]}" -d "$dev" -g "$gid" -n "$iters" -p "$tcp" >"$tmp/srv" 2>&1 &
	local spid=$!
	wait_for 10 tcp_listening "$tcp" || out="the server did not listen"
	[ -n "$out" ] || timeout 60 "${cli[@]}" -d "$dev" -g "$gid" -n "$iters" -p "$tcp" "$ip" \
		>"$tmp/cli" 2>&1 || out="client: exit $? $(tail -2 "$tmp/cli")"
	wait "$spid" || out="$out server: exit $? $(tail -2 "$tmp/srv")"
	for f in "$tmp/srv" "$tmp/cli"; do
		grep -q "^$iters iters in " "$f" || out="$out; no '$iters iters' in ${f##*/}"
		! grep -q "invalid data" "$f" || out="$out; ${f##*/} found invalid data"
	done
	t_eq "$name" "" "$out"
}

for c in $STAG_CHROOTS; do
	suite=${c%%:*} root=${c#*:}
	for m in dev proc sys; do
		mount --bind "/$m" "$root/$m" && mounted=("$root/$m" "${mounted[@]}")
	done
	lib=$(cd "$root" && ls usr/lib/*/libibverbs.so.1.*.* 2>/dev/null | head -1)
	rel=${lib##*/libibverbs.so.1.}
	rel=${rel#*.}
	echo "# $suite: libibverbs ${lib##*/} (rdma-core $rel)"
	t_run "$suite (rdma-core $rel): the provider built there is installed there" \
		test -f "$root/etc/libibverbs.d/stag.driver"
	out=$(chroot "$root" ibv_devinfo -d "$dev" 2>&1)
	t_eq "$suite (rdma-core $rel): ibv_devinfo lists $dev, port active" "$dev PORT_ACTIVE" \
		"$(sed -n 's/^hca_id:[[:space:]]*//p' <<<"$out") $(grep -o PORT_ACTIVE <<<"$out")"
	t_eq "$suite (rdma-core $rel): and the provider says nothing of the release" "" \
		"$(grep '^stag:' <<<"$out")"
	pingpong "$suite (rdma-core $rel): ibv_rc_pingpong, both ends there" \
		chroot "$root" ibv_rc_pingpong -- chroot "$root" ibv_rc_pingpong
	pingpong "$suite (rdma-core $rel) serving, this guest's rdma-core driving" \
		chroot "$root" ibv_rc_pingpong -- ibv_rc_pingpong
	# Address handles (UD) and shared receive queues, there too.
	pingpong "$suite (rdma-core $rel): ibv_ud_pingpong, both ends there" \
		chroot "$root" ibv_ud_pingpong -s 512 -- chroot "$root" ibv_ud_pingpong -s 512
	pingpong "$suite (rdma-core $rel): ibv_srq_pingpong, both ends there" \
		chroot "$root" ibv_srq_pingpong -- chroot "$root" ibv_srq_pingpong
	# ibv_reg_dmabuf_mr through that release's private call (55 changed it).
	out=$(chroot "$root" /build/stag/tools/provider/tests/dmabuf_smoke "$dev" 2>&1)
	t_eq "$suite (rdma-core $rel): a dma-buf region registered there (offset, length, refusals)" \
		ok "$out"
	for m in dev proc sys; do
		umount -l "$root/$m" 2>/dev/null
	done
	mounted=()
done
