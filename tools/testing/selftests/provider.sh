#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The provider registers only under an rdma-core whose private provider
# interface it was checked against (tools/provider/rdma_core.c): it reads
# the release from libibverbs's file name. A copy of this guest's
# libibverbs, found first through LD_LIBRARY_PATH under another release's
# name, shows what a user of that release sees.
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
real=$(ldd "$(command -v ibv_devices)" | awk '$1 == "libibverbs.so.1" { print $3 }')
real=$(realpath "$real" 2>/dev/null)
if [ ! -f "$real" ]; then
	echo "ok - provider: libibverbs releases # SKIP ibv_devices has no libibverbs.so.1"
	exit 0
fi
shopt -s extglob
rel=${real##*/libibverbs.so.1.+([0-9]).}

# devices_as REL: ibv_devices, and what it says, under this libibverbs
# named as rdma-core REL.
devices_as()
{
	local d=$tmp/$1

	mkdir -p "$d"
	cp "$real" "$d/libibverbs.so.1.14.$1"
	ln -sf "libibverbs.so.1.14.$1" "$d/libibverbs.so.1"
	LD_LIBRARY_PATH=$d ibv_devices 2>&1
}

listed() { grep -qw "$dev" <<<"$1"; }

out=$(ibv_devices 2>&1)
t_run "this guest's libibverbs ($rel): $dev is listed" listed "$out"
t_eq "and nothing is said about the release" "" "$(grep '^stag:' <<<"$out")"

out=$(devices_as 56.1)
t_run "named as rdma-core 56.1 (checked): $dev is listed" listed "$out"

out=$(devices_as 65.0)
t_run "named as rdma-core 65.0 (not checked): $dev is not listed" sh -c "! grep -qw $dev" <<<"$out"
t_run "and the provider says why, naming the release" \
	grep -q "^stag: libibverbs $tmp/65.0/libibverbs.so.1.14.65.0 is rdma-core 65.0, .*: not loading" \
	<<<"$out"

out=$(devices_as 45.0)
t_run "named as rdma-core 45.0 (between two checked, not itself checked): not listed" \
	sh -c "! grep -qw $dev" <<<"$out"
