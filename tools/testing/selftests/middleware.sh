#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The middleware users run on RDMA, server and client in this guest, on
# Debian's packages: UCX (ucx_perftest over the rc and ud transports), Open
# MPI over UCX (a ping-pong that checks every byte), libfabric's verbs
# provider (MSG endpoints, and RDM through ofi_rxm), NVMe over Fabrics
# (nvmet-rdma and nvme-rdma, a RAM disk written and verified by fio) and
# NFS over RDMA (svcrdma and xprtrdma, files compared byte for byte). With
# stag.loopback=0 each case must also have moved RoCE v2 packets through
# stag0: its sent_pkts counter grows.
#
# What rdma_rxe fails here and stag does not, and why (Documentation/stag.rst
# has the whole story): UCX 1.13 reads a UD receive's RoCE packet type from
# wc.sl, where mlx5 puts it and stag does too; libfabric 1.17's RDM
# endpoints ask for CQs of 196608 entries, more than rxe's 32767.
#
# In a two-guest run (tools/testing/vm/pair, stag on both ends: rxe fails
# UCX and RDM) the servers, the NVMe-oF target, the NFS server and Open
# MPI's second rank (started through mpi_rsh, the guests having no ssh)
# run in the peer guest and the clients here.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0.
#
#   STAG_TEST_DEV		the device (default stag0)
#   STAG_MIDDLEWARE		the groups to run (default "ucx mpi fabric nvme nfs")
#   STAG_MIDDLEWARE_TIMEOUT	seconds each side of a case may take (default 120)
#   STAG_MIDDLEWARE_NVME_MB	MiB each of NVMe-oF's three fio jobs writes (default 16)
. "$(dirname "$0")/lib.sh"

# ---- the servers' halves, here or (through peer.py) in the peer guest ----

NQN=stag-middleware
NVMET=/sys/kernel/config/nvmet
NFS_SRV=/srv/stag-nfs

# nvme_target up IP | down: a memory-backed null_blk namespace exported
# by nvmet-rdma on IP, port 4420.
nvme_target()
{
	local c=$NVMET

	if [ "$1" = down ]; then
		rm -f "$c/ports/1/subsystems/$NQN"
		rmdir "$c/ports/1" "$c/subsystems/$NQN/namespaces/1" "$c/subsystems/$NQN" 2>/dev/null
		return 0
	fi
	modprobe -a nvmet nvmet-rdma nvme-rdma &&
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || return
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$c/subsystems/$NQN" && echo 1 >"$c/subsystems/$NQN/attr_allow_any_host" &&
	mkdir "$c/subsystems/$NQN/namespaces/1" &&
	echo /dev/nullb0 >"$c/subsystems/$NQN/namespaces/1/device_path" &&
	echo 1 >"$c/subsystems/$NQN/namespaces/1/enable" && mkdir "$c/ports/1" &&
	echo "$2" >"$c/ports/1/addr_traddr" && echo rdma >"$c/ports/1/addr_trtype" &&
	echo 4420 >"$c/ports/1/addr_trsvcid" && echo ipv4 >"$c/ports/1/addr_adrfam" &&
	ln -s "$c/subsystems/$NQN" "$c/ports/1/subsystems/$NQN"
}

# nfs_server up | down: nfsd exporting a tmpfs at $NFS_SRV as the NFSv4
# root, with an RDMA listener on port 20049. "put NAME SIZE" writes a file
# of random bytes there, "sum NAME" prints a file's sha256.
nfs_server()
{
	case $1 in
	down)
		rpc.nfsd 0 >/dev/null 2>&1
		exportfs -ua >/dev/null 2>&1
		pkill rpc.mountd
		pkill rpcbind
		umount "$NFS_SRV" 2>/dev/null
		return 0 ;;
	put)
		head -c "$3" /dev/urandom >"$NFS_SRV/$2"
		return ;;
	sum)
		sha256sum <"$NFS_SRV/$2" | cut -d' ' -f1
		return ;;
	esac
	modprobe -a nfsd rpcrdma nfsv4 || return
	mkdir -p "$NFS_SRV" /var/lib/nfs/v4recovery /run/rpc_pipefs
	mount -t tmpfs tmpfs "$NFS_SRV" &&
	echo "$NFS_SRV *(rw,no_root_squash,fsid=0,insecure,no_subtree_check)" >/etc/exports &&
	{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
	rpcbind -w && exportfs -ra && rpc.mountd && rpc.nfsd -N 3 4 &&
	echo "rdma 20049" >/proc/fs/nfsd/portlist
}

# The peer guest runs the above through peer.py: middleware.sh --serve ...
if [ "${1:-}" = --serve ]; then
	shift
	"$@"
	exit
fi

# there CMD... OUT: a server half, in the peer guest in a two-guest run,
# else here; its status, its output in OUT.
there()
{
	local out=${*: -1} cmd=("${@:1:$#-1}")

	if [ "$SERVE_PEER" = 1 ]; then
		peer_run "$(printf '%q ' "$T_ROOT/tools/testing/selftests/middleware.sh" --serve \
			"${cmd[@]}")" "$out"
	else
		"${cmd[@]}" >"$out" 2>&1
	fi
}

dev=${STAG_TEST_DEV:-stag0}
groups=" ${STAG_MIDDLEWARE:-ucx mpi fabric nvme nfs} "
limit=${STAG_MIDDLEWARE_TIMEOUT:-120}
nvme_mb=${STAG_MIDDLEWARE_NVME_MB:-16}
tmp=$(mktemp -d /tmp/middleware.XXXXXX)
port=18700	# each case listens on its own port

ip=$(dev_ip "$dev")
if [ -z "$ip" ]; then
	_t_report "not ok" "an IPv4 address on $dev's netdev" "netdev '$(dev_netdev "$dev")'"
	exit 0
fi
counter=/sys/class/infiniband/$dev/ports/1/hw_counters/sent_pkts
wire=0
case $(cat /sys/module/stag/parameters/loopback 2>/dev/null) in
0 | N) [ -r "$counter" ] && wire=1 ;;
esac

# The servers: here, or in the peer guest, which its clients reach at $sip.
serve_where "$dev" "" "$ip" || exit 0
# Traffic to the peer guest has no other way than the wire.
[ "$SERVE_PEER" = 1 ] && [ -r "$counter" ] && wire=1
echo "# $dev, $ip; $([ $wire = 1 ] && echo "every message a RoCE v2 packet" || echo "loopback")"

# Open MPI refuses root without these, and a host named "(none)".
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ "$(hostname)" = "(none)" ] && hostname stag-guest

sent_pkts()
{
	if [ $wire = 1 ]; then cat "$counter"; else echo 0; fi
}

# counters_at FILE: this device's counters, one "name value" a line. One
# process for all of them: a cat each took 2 s of every case in a guest of
# one vCPU under TCG (38 counters), twice a case.
counters_at()
{
	grep -H . "${counter%/*}"/* 2>/dev/null | sed 's|.*/\([^/:]*\):|\1 |' >"$1"
}

# counters_grown FILE: the counters that grew since counters_at FILE, on
# one comment line: what a slow or failed case had to do (retransmissions,
# timeouts, drops).
counters_grown()
{
	local now=$tmp/counters-now

	[ $wire = 1 ] || return 0
	counters_at "$now"
	awk 'NR == FNR { was[$1] = $2; next }
	     $2 != was[$1] { d = d " " $1 "=+" ($2 - was[$1]) }
	     END { if (d != "") print "# counters grown:" d }' "$1" "$now"
}

# verdict NAME WHY SENT0: reports NAME, failed when WHY says something, or
# when on the wire the case moved no packet through the device; then the
# counters the case moved (since counters_at $tmp/counters0).
verdict()
{
	local name=$1 why=$2 sent0=$3

	if [ -z "$why" ] && [ $wire = 1 ] && [ "$(sent_pkts)" -le "$sent0" ]; then
		why="$dev's sent_pkts stayed at $sent0: the traffic did not go through $dev"
	fi
	if [ -z "$why" ]; then
		_t_report ok "$name" ""
	else
		_t_report "not ok" "$name" "$why"
	fi
	counters_grown "$tmp/counters0"
}

# pair NAME CHECK SERVER... -- CLIENT...: SERVER in the background (here
# or in the peer guest; @DEV@ is its device there), CLIENT when SERVER
# listens on $port (TCP, as every program here exchanges its addresses
# over a socket first), both under $limit. Passes when both exit 0 and
# CHECK SERVER_OUT CLIENT_OUT prints nothing.
pair()
{
	local name=$1 check=$2 srv=() cli=() crc src why sent0 spid
	shift 2
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	sent0=$(sent_pkts)
	counters_at "$tmp/counters0"

	# serve_start word-splits its command here and hands it to bash in
	# the peer: quoted once, for the peer.
	if [ "$SERVE_PEER" = 1 ]; then
		spid=$(printf '%q ' "${srv[@]}")
	else
		spid="${srv[*]}"
	fi
	if ! serve_start "tcp_listening $port" "$spid" "$limit" "$tmp/srv"; then
		_t_report "not ok" "$name" "the server never listened: $(tail -5 "$tmp/srv")"
		port=$((port + 1))
		return
	fi
	timeout -k 5 "$limit" "${cli[@]}" >"$tmp/cli" 2>&1
	crc=$?
	serve_end "$crc" "$tmp/srv"
	src=$?
	port=$((port + 1))
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		why="client status $crc, server status $src (124: timed out after $limit s)"
	else
		why=$($check "$tmp/srv" "$tmp/cli" 2>&1)
	fi
	[ -n "$why" ] && why="$why
--- client: ${cli[*]}
$(grep -v '^ *[0-9]\+  \|^[|+]' "$tmp/cli" | tail -8)
--- server: ${srv[*]}
$(grep -v '^ *[0-9]\+  \|^[|+]' "$tmp/srv" | tail -8)"
	verdict "$name" "$why" "$sent0"
}

# ---- UCX ----

# ucx_perftest's client prints a "Final:" line with the iterations when the
# test ran to the end; either side prints "ERROR" or "Fatal" when it did not.
ucx_ok()
{
	grep -Eq "^Final:[[:space:]]+${ucx_iters}[[:space:]]" "$2" ||
		echo "no 'Final: $ucx_iters' line from the client"
	grep -Ehm2 "UCX +ERROR|Fatal" "$1" "$2"
	return 0
}

# ucx TLS TEST SIZE ITERS: one ucx_perftest on stag0's port only, with no
# transport but TLS (and self, for a process's messages to itself).
ucx()
{
	local tls=$1 test=$2 size=$3
	ucx_iters=$4

	pair "UCX $tls: ucx_perftest $test, $size bytes, $ucx_iters iterations" ucx_ok \
		env UCX_NET_DEVICES="@DEV@:1" UCX_TLS="$tls,self" \
		ucx_perftest -p "$port" -t "$test" -s "$size" -n "$ucx_iters" -- \
		env UCX_NET_DEVICES="$dev:1" UCX_TLS="$tls,self" \
		ucx_perftest -p "$port" -t "$test" -s "$size" -n "$ucx_iters" "$sip"
}

if [[ $groups == *" ucx "* ]]; then
	ucx rc tag_lat 8 1000
	ucx rc tag_bw 1048576 100	# rendezvous: the data moves by RDMA READ
	ucx rc ucp_put_bw 65536 200
	ucx rc ucp_get 65536 200
	ucx rc ucp_fadd 8 200
	ucx ud tag_lat 8 1000
	ucx ud tag_bw 65536 200
	ucx ud ucp_put_bw 65536 100	# UD has no RDMA: UCP emulates it over messages
	ucx ud ucp_get 65536 100
fi

# ---- Open MPI over UCX ----

# mpirun TLS: two ranks of mpi_pingpong, Open MPI's UCX PML on the device
# with only TLS (no shared memory, no TCP: every message goes through it).
# In a two-guest run, rank 1 runs in the peer guest: mpirun starts Open
# MPI's daemon there through mpi_rsh and peer.py --rsh, in place of
# ssh. Each rank names its own guest's device.
mpi()
{
	local tls=$1 out=$tmp/mpi sent0 rc why="" where=(--oversubscribe) name=""
	local rank='UCX_NET_DEVICES=${STAG_TEST_DEV:-stag0}:1 exec "$0" 10'

	[ "$SERVE_PEER" = 1 ] && name=" in 2 guests"
	name="Open MPI over UCX $tls: 2 ranks$name, 0 B to 4 MiB, every byte and guard checked"

	sent0=$(sent_pkts)
	counters_at "$tmp/counters0"
	if [ "$SERVE_PEER" = 1 ]; then
		# Open MPI tells the ranks' hosts apart by name.
		there hostname stag-peer "$tmp/mpi-peer"
		if ! serve_start "tcp_listening $port" \
		     "python3 $T_ROOT/tools/testing/selftests/peer.py --rsh $port" \
		     "$limit" "$tmp/mpi-peer"; then
			verdict "$name" "peer.py --rsh did not start: $(tail -5 "$tmp/mpi-peer")" "$sent0"
			port=$((port + 1))
			return
		fi
		where=(--host "$ip,$sip" --mca plm_rsh_agent "$T_ROOT/tools/testing/selftests/mpi_rsh"
		       --mca oob_tcp_if_include "$(dev_netdev "$dev")")
	fi
	STAG_TEST_DEV=$dev STAG_MPI_RSH_PORT=$port timeout -k 5 "$limit" mpirun "${where[@]}" \
		-np 2 --mca pml ucx --mca btl self --mca osc ^ucx -x UCX_TLS="$tls,self" \
		bash -c "$rank" "$T_BIN/mpi_pingpong" >"$out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		why="mpirun status $rc: $(tail -8 "$out")"
	elif ! grep -q "^mpi_pingpong: 10 sizes, 100 exchanges, data intact$" "$out"; then
		why="no 'data intact' line: $(tail -8 "$out")"
	elif [ "$SERVE_PEER" = 1 ] && ! { grep -qx "mpi_pingpong: rank 0 on $(hostname)" "$out" &&
					grep -qx "mpi_pingpong: rank 1 on stag-peer" "$out"; }; then
		why="the ranks did not run one in each guest: $(grep rank "$out")"
	fi
	if [ "$SERVE_PEER" = 1 ] && ! serve_end "$rc" "$tmp/mpi-peer" && [ -z "$why" ]; then
		why="Open MPI's daemon in the peer failed: $(tail -5 "$tmp/mpi-peer")"
	fi
	port=$((port + 1))
	verdict "$name" "$why" "$sent0"
}

if [[ $groups == *" mpi "* ]]; then
	if [ -x "$T_BIN/mpi_pingpong" ]; then
		mpi rc
		mpi ud
	else
		_t_report "not ok" "Open MPI over UCX" "no $T_BIN/mpi_pingpong (mpicc missing at build?)"
	fi
fi

# ---- libfabric ----

# fi_pingpong -c checks the data of every message; each side prints a
# result line with the message count when all arrived.
fabric_ok()
{
	local f

	for f in "$1" "$2"; do
		grep -Eq "^[0-9.]+[kmg]?[[:space:]]+${fi_iters}[[:space:]]+=${fi_iters}[[:space:]]" "$f" ||
			echo "no result line for $fi_iters messages from ${f##*/}"
	done
	grep -Ehm2 "\[error\]|ret=-" "$1" "$2"
	return 0
}

# fabric EP PROV SIZE ITERS
fabric()
{
	local ep=$1 prov=$2 size=$3
	fi_iters=$4

	pair "libfabric $ep ($prov): fi_pingpong -c, $size bytes, $fi_iters messages" fabric_ok \
		fi_pingpong -p "$prov" -d @DEV@ -e "$ep" -c -B "$port" -S "$size" -I "$fi_iters" -- \
		fi_pingpong -p "$prov" -d "$dev" -e "$ep" -c -P "$port" -S "$size" -I "$fi_iters" "$sip"
}

if [[ $groups == *" fabric "* ]]; then
	fabric msg verbs 1024 200
	fabric msg verbs 1000000 20
	fabric rdm "verbs;ofi_rxm" 1024 100
	fabric rdm "verbs;ofi_rxm" 1000000 10
fi

# ---- NVMe over Fabrics ----

# The NVMe-oF target (nvme_target, here or in the peer guest), connected
# here with nvme-rdma. fio writes with checksums and reads them back
# (direct I/O, so every block crosses the fabric both ways).
nvme_case()
{
	local blk="" sent0 why="" out fio=$tmp/fio

	sent0=$(sent_pkts)
	counters_at "$tmp/counters0"
	if ! modprobe -a nvme-rdma 2>"$tmp/nvme"; then
		_t_report "not ok" "NVMe-oF: the host's modules" "$(cat "$tmp/nvme")"
		return
	fi
	if ! there nvme_target up "$sip" "$tmp/nvmet"; then
		why="the nvmet target on $sip: $(tail -5 "$tmp/nvmet")"
	elif ! out=$(timeout "$limit" nvme connect -t rdma -a "$sip" -s 4420 -n "$NQN" 2>&1); then
		why="nvme connect: $out"
	fi
	# The namespace's block device: the guest has no other NVMe.
	for _ in $(seq 50); do
		[ -n "$why" ] && break
		for blk in /sys/block/nvme*n1 ""; do
			blk=${blk##*/}
			[ -n "$blk" ] && [ -b "/dev/$blk" ] && break 2
		done
		sleep 0.1
	done
	[ -z "$why" ] && [ -z "$blk" ] && why="no /dev/nvme*n1 after nvme connect"
	if [ -z "$why" ] && ! grep -qx rdma /sys/class/nvme/nvme*/transport; then
		why="/dev/$blk is not on the rdma transport"
	fi
	if [ -z "$why" ]; then
		for job in "--rw=randwrite --bs=4k --iodepth=16 --verify=crc32c" \
			   "--rw=write --bs=128k --iodepth=4 --verify=md5" \
			   "--rw=randrw --bs=16k --iodepth=8 --verify=sha256"; do
			# shellcheck disable=SC2086
			if ! timeout "$limit" fio --name=stag --filename="/dev/$blk" --direct=1 \
				--ioengine=libaio --size="${nvme_mb}M" $job --do_verify=1 --verify_fatal=1 \
				--output="$fio" >/dev/null 2>&1 || ! grep -q "err= 0" "$fio"; then
				why="fio $job: $(grep -Eim3 "err=|verify|bad" "$fio")"
				break
			fi
		done
	fi
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	there nvme_target down "$tmp/nvmet"
	verdict "NVMe-oF: nvmet-rdma and nvme-rdma, fio writes 3x$nvme_mb MiB and verifies crc32c, md5, sha256" \
		"$why" "$sent0"
}

[[ $groups == *" nvme "* ]] && nvme_case

# ---- NFS over RDMA ----

# nfsd with an RDMA listener (svcrdma; nfs_server, here or in the peer
# guest), mounted here with proto=rdma (xprtrdma). A file written through
# the mount must reach the server whole (its sha256 there), and one
# written on the server must read back through the mount (caches dropped
# first, so the bytes cross the fabric).
nfs_case()
{
	local mnt=/mnt/stag-nfs sent0 why="" out sum

	sent0=$(sent_pkts)
	counters_at "$tmp/counters0"
	if ! modprobe -a rpcrdma nfsv4 2>"$tmp/nfs"; then
		_t_report "not ok" "NFS over RDMA: the client's modules" "$(cat "$tmp/nfs")"
		return
	fi
	mkdir -p "$mnt"
	if ! there nfs_server up "$tmp/nfs"; then
		why="the NFS server: $(tail -5 "$tmp/nfs")"
	elif ! out=$(timeout "$limit" mount -t nfs -o vers=4.2,proto=rdma,port=20049 "$sip:/" "$mnt" 2>&1); then
		why="mount proto=rdma: $out"
	elif ! grep -q " $mnt nfs4 .*proto=rdma" /proc/mounts; then
		why="$mnt is not mounted with proto=rdma: $(grep " $mnt " /proc/mounts)"
	fi
	if [ -z "$why" ]; then
		head -c 5000003 /dev/urandom >"$tmp/a"
		if ! timeout "$limit" cp "$tmp/a" "$mnt/a" || ! sync -f "$mnt/a"; then
			why="writing 5000003 bytes through the mount failed"
		elif ! there nfs_server sum a "$tmp/sum" ||
		     [ "$(cat "$tmp/sum")" != "$(sha256sum <"$tmp/a" | cut -d' ' -f1)" ]; then
			why="the server's copy of the file written through the mount differs"
		elif ! there nfs_server put b 3000001 "$tmp/put" || ! there nfs_server sum b "$tmp/sum"; then
			why="writing a file on the server: $(cat "$tmp/put")"
		else
			echo 3 >/proc/sys/vm/drop_caches
			sum=$(timeout "$limit" sha256sum <"$mnt/b" | cut -d' ' -f1)
			[ "$sum" = "$(cat "$tmp/sum")" ] && [ "$(stat -c %s "$mnt/b")" = 3000001 ] ||
				why="the file written on the server reads back different through the mount"
		fi
	fi
	umount "$mnt" 2>/dev/null
	there nfs_server down "$tmp/nfs"
	verdict "NFS over RDMA: svcrdma and xprtrdma, 5 MB written and 3 MB read byte for byte" \
		"$why" "$sent0"
}

[[ $groups == *" nfs "* ]] && nfs_case

rm -rf "$tmp"
exit 0
