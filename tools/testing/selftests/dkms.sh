#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installing stag as a user does (Documentation/stag.rst, "Installing"),
# in this guest, for the kernel it runs:
#
#  - from the tree: make dkms-install registers the source with DKMS, which
#    builds stag.ko against the kernel's headers and installs it; modprobe
#    finds that module, rdma link add makes a device, and a pingpong
#    moves checked data through it;
#  - from packages: make deb, then apt install ./*.deb builds it again in
#    stag-dkms's postinst, with the provider from libstag; the same checks;
#    apt remove takes the module out of DKMS and the provider away.
#
# The harness's own stag.ko and provider are put back at the end. Needs
# dkms and the kernel's headers: Debian's kernel (the debug kernel has no
# headers package).
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
kr=$(uname -r)
mods=/lib/modules/$kr
ver=$(cat "$T_ROOT/VERSION")
tmp=$(mktemp -d)
netdev=$(dev_netdev "$dev")
ip=$(dev_ip "$dev")
provider=$(ls /usr/lib/*/libibverbs/libstag-rdmav*.so 2>/dev/null | head -1)
# The harness's modules tree links its kernel/ to the extracted Debian
# kernel package; the headers were extracted beside it.
kroot=$(readlink "$mods/kernel" 2>/dev/null)
kroot=${kroot%/lib/modules/*}
headers=$kroot/usr/src/linux-headers-$kr
cache=${kroot%/kernel/*}
iters=100

if ! command -v dkms >/dev/null; then
	echo "ok - dkms: DKMS and the packages # SKIP dkms is not installed (tools/testing/install-deps)"
	exit 0
fi
if [ ! -e "$headers/Makefile" ] || [ -z "$netdev" ] || [ -z "$provider" ]; then
	echo "ok - dkms: DKMS and the packages # SKIP no headers for $kr, or no $dev on a netdev"
	exit 0
fi

# On the way out, DKMS's module (if a case stopped with it loaded) goes,
# and the harness's tree comes back; once the harness's stag is back, it
# stays for the harness's teardown.
restored=''
cleanup()
{
	if [ -z "$restored" ]; then
		rdma link delete "$dev" 2>/dev/null
		rmmod stag 2>/dev/null
	fi
	umount "$mods" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# gcc under TCG takes 13 minutes per build: DKMS builds where the host's
# tools/testing/vm/dkms-cache compiled the same files with the same
# command, and takes the objects from that ccache (read-only here).
mkdir -p /etc/dkms/framework.conf.d
echo "dkms_tree=\"$cache/dkms\"" >/etc/dkms/framework.conf.d/stag-test.conf
export PATH="/usr/lib/ccache:$PATH" CCACHE_DIR="$cache/ccache" CCACHE_READONLY=1 \
	CCACHE_TEMPDIR=/tmp CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime LC_ALL=C
unset LANG LC_CTYPE LC_MESSAGES

# build_id FILE: the GNU build ID of a module file, or of /sys/module/*/notes.
build_id()
{
	case $1 in
	/sys/*)	tail -c 20 "$1" | od -An -tx1 | tr -d ' \n' ;;
	*)	readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }' ;;
	esac
}

# dkms_status: what DKMS says of stag, without its warnings.
dkms_status() { dkms status -m stag "$@" 2>/dev/null; }

# unload: every stag link deleted, the module out.
unload()
{
	local l

	for l in $(stag_links | cut -d' ' -f2); do
		rdma link delete "$l" || return 1
	done
	rmmod stag
}

# A writable modules tree over the harness's (read-only from the host;
# the upper layer on the guest's /tmp, a tmpfs):
# DKMS installs into it and runs depmod. The harness's stag.ko is hidden,
# or modprobe could find it before DKMS's.
mkdir -p "$tmp/ov/up" "$tmp/ov/work" &&
	mount -t overlay overlay -o "lowerdir=$mods,upperdir=$tmp/ov/up,workdir=$tmp/ov/work" "$mods" &&
	ln -sfn "$headers" "$mods/build" && rm -f "$mods/updates/stag.ko"
t_eq "a writable modules tree with the kernel's headers as build/" "$headers" \
	"$(readlink "$mods/build")"
t_run "the harness's stag unloaded" unload

# works WHAT: the module modprobe finds is DKMS's build, it loads, a device
# comes up on the netdev, and ibv_rc_pingpong moves checked data through it.
works()
{
	local what=$1 gid srv

	t_eq "$what: modprobe finds DKMS's stag.ko" "$mods/updates/dkms/stag.ko" \
		"$(modinfo -n stag 2>&1)"
	t_run "$what: modprobe stag" modprobe stag
	t_eq "$what: the module loaded is that build (its build ID)" \
		"$(build_id "$mods/updates/dkms/stag.ko")" \
		"$(build_id /sys/module/stag/notes/.note.gnu.build-id)"
	t_run "$what: rdma link add $dev type stag netdev $netdev" \
		rdma link add "$dev" type stag netdev "$netdev"
	if ! gid=$(wait_for 10 roce_v2_index "$dev" "$ip" && roce_v2_index "$dev" "$ip"); then
		_t_report "not ok" "$what: $dev has the RoCE v2 GID of $ip" ""
		return
	fi
	ibv_rc_pingpong -d "$dev" -g "$gid" -n $iters -p 18515 -c >"$tmp/srv.log" 2>&1 &
	srv=$!
	wait_for 10 tcp_listening 18515
	t_run "$what: ibv_rc_pingpong -c, $iters iterations of checked data" \
		ibv_rc_pingpong -d "$dev" -g "$gid" -n $iters -p 18515 -c 127.0.0.1
	wait "$srv"
	t_eq "$what: the server side of the pingpong" "0" "$?"
	t_run "$what: unloaded" unload
}

# STAG_DKMS_ONLY=tree or =packages runs one half (each is a DKMS build).
only=${STAG_DKMS_ONLY:-}

# ---- from the tree ----
if [ "$only" != packages ]; then
	t0=$(date +%s)
	make -s -C "$T_ROOT" dkms-install >"$tmp/install.log" 2>&1
	rc=$?
	echo "# make dkms-install: $(( $(date +%s) - t0 )) s"
	t_eq "make dkms-install" "0" "$rc"
	[ "$rc" = 0 ] || tail -n 20 "$tmp/install.log" | sed 's/^/#   /'
	t_eq "dkms status: installed for $kr" "stag/$ver, $kr, $(uname -m): installed" \
		"$(dkms_status -v "$ver")"
	works "from the tree"
	t_run "dkms remove" dkms remove -m stag -v "$ver" --all
	t_eq "dkms remove: nothing left" "" "$(dkms_status)"
	t_run "dkms remove: the module file is gone" test ! -e "$mods/updates/dkms/stag.ko"
	rm -rf "/usr/src/stag-$ver"
fi

# ---- from packages ----
if [ "$only" != tree ]; then
	make -s -C "$T_ROOT" deb DEB_OUT="$tmp/deb" >"$tmp/deb.log" 2>&1
	t_eq "make deb: the two packages" "libstag_${ver}_$(dpkg --print-architecture).deb stag-dkms_${ver}_all.deb" \
		"$(cd "$tmp/deb" 2>/dev/null && echo *.deb)"
	t0=$(date +%s)
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$tmp"/deb/*.deb >"$tmp/apt.log" 2>&1
	rc=$?
	echo "# apt install ./*.deb: $(( $(date +%s) - t0 )) s"
	t_eq "apt install ./*.deb" "0" "$rc"
	[ "$rc" = 0 ] || tail -n 20 "$tmp/apt.log" | sed 's/^/#   /'
	t_eq "dpkg: both installed" "install ok installed install ok installed" \
		"$(dpkg-query -W -f='${Status} ' libstag stag-dkms 2>&1 | sed 's/ $//')"
	t_eq "the provider is libstag's" "libstag: $provider" "$(dpkg -S "$provider" 2>&1)"
	t_eq "dkms status: stag-dkms's postinst installed it for $kr" \
		"stag/$ver, $kr, $(uname -m): installed" "$(dkms_status -v "$ver")"
	works "from packages"
	DEBIAN_FRONTEND=noninteractive apt-get remove -y -q libstag stag-dkms >"$tmp/rm.log" 2>&1
	t_eq "apt remove: stag-dkms's prerm took it out of DKMS" "" "$(dkms_status)"
	t_run "apt remove: the module file is gone" test ! -e "$mods/updates/dkms/stag.ko"
	t_run "apt remove: the provider is gone" test ! -e "$provider"
fi

# ---- the harness's stag and provider back, for what runs after ----
umount "$mods"
install -D -m 0644 "$T_ROOT/tools/provider/${provider##*/}" "$provider"
t_run "the harness's stag back, with $dev" sh -c \
	"modprobe stag && rdma link add $dev type stag netdev $netdev"
restored=1
