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
# Runs in the guest (tools/testing/vm/run), which has created stag0.
#
#   STAG_TEST_DEV		the device (default stag0)
#   STAG_MIDDLEWARE		the groups to run (default "ucx mpi fabric nvme nfs")
#   STAG_MIDDLEWARE_TIMEOUT	seconds each side of a case may take (default 120)
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
groups=" ${STAG_MIDDLEWARE:-ucx mpi fabric nvme nfs} "
limit=${STAG_MIDDLEWARE_TIMEOUT:-120}
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
echo "# $dev, $ip; $([ $wire = 1 ] && echo "every message a RoCE v2 packet" || echo "loopback")"

# Open MPI refuses root without these, and a host named "(none)".
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ "$(hostname)" = "(none)" ] && hostname stag-guest

sent_pkts()
{
	if [ $wire = 1 ]; then cat "$counter"; else echo 0; fi
}

# verdict NAME WHY SENT0: reports NAME, failed when WHY says something, or
# when on the wire the case moved no packet through the device.
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
}

# pair NAME CHECK SERVER... -- CLIENT...: SERVER in the background, CLIENT
# when SERVER listens on $port (TCP, as every program here exchanges its
# addresses over a socket first), both under $limit. Passes when both exit
# 0 and CHECK SERVER_OUT CLIENT_OUT prints nothing.
pair()
{
	local name=$1 check=$2 srv=() cli=() crc src why sent0 spid tries
	shift 2
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	sent0=$(sent_pkts)

	timeout -k 5 "$limit" "${srv[@]}" >"$tmp/srv" 2>&1 &
	spid=$!
	tries=$((limit * 10))
	until tcp_listening "$port"; do
		tries=$((tries - 1))
		if ! kill -0 "$spid" 2>/dev/null || [ "$tries" -le 0 ]; then
			kill "$spid" 2>/dev/null
			wait "$spid"
			_t_report "not ok" "$name" "the server never listened (status $?): $(tail -5 "$tmp/srv")"
			port=$((port + 1))
			return
		fi
		sleep 0.1
	done
	timeout -k 5 "$limit" "${cli[@]}" >"$tmp/cli" 2>&1
	crc=$?
	[ "$crc" -ne 0 ] && kill "$spid" 2>/dev/null
	wait "$spid"
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
	grep -Eq "^Final:[[:space:]]+$ucx_iters[[:space:]]" "$2" ||
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
		env UCX_NET_DEVICES="$dev:1" UCX_TLS="$tls,self" \
		ucx_perftest -p "$port" -t "$test" -s "$size" -n "$ucx_iters" -- \
		env UCX_NET_DEVICES="$dev:1" UCX_TLS="$tls,self" \
		ucx_perftest -p "$port" -t "$test" -s "$size" -n "$ucx_iters" 127.0.0.1
}

if [[ $groups == *" ucx "* ]]; then
	ucx rc tag_lat 8 1000
	ucx rc tag_bw 1048576 100	# rendezvous: the data moves by RDMA READ
	ucx rc ucp_put_bw 65536 200
	ucx rc ucp_get 65536 200
	ucx rc ucp_fadd 8 200
	ucx ud tag_lat 8 1000
	ucx ud tag_bw 65536 200
fi

# ---- Open MPI over UCX ----

# mpirun TLS: two ranks of mpi_pingpong, Open MPI's UCX PML on stag0 with
# only TLS (no shared memory, no TCP: every message goes through stag0).
mpi()
{
	local tls=$1 out=$tmp/mpi sent0 rc why=""

	sent0=$(sent_pkts)
	timeout -k 5 "$limit" mpirun --oversubscribe -np 2 --mca pml ucx \
		--mca btl self --mca osc ^ucx -x UCX_NET_DEVICES="$dev:1" -x UCX_TLS="$tls,self" \
		"$T_BIN/mpi_pingpong" 10 >"$out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		why="mpirun status $rc: $(tail -8 "$out")"
	elif ! grep -q "^mpi_pingpong: 10 sizes, 100 exchanges, data intact$" "$out"; then
		why="no 'data intact' line: $(tail -8 "$out")"
	fi
	verdict "Open MPI over UCX $tls: 2 ranks, 0 B to 4 MiB, every byte and guard checked" \
		"$why" "$sent0"
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
		grep -Eq "^[0-9.]+[kmg]?[[:space:]]+$fi_iters[[:space:]]+=$fi_iters[[:space:]]" "$f" ||
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
		fi_pingpong -p "$prov" -d "$dev" -e "$ep" -c -B "$port" -S "$size" -I "$fi_iters" -- \
		fi_pingpong -p "$prov" -d "$dev" -e "$ep" -c -P "$port" -S "$size" -I "$fi_iters" "$ip"
}

if [[ $groups == *" fabric "* ]]; then
	fabric msg verbs 1024 200
	fabric msg verbs 1000000 20
	fabric rdm "verbs;ofi_rxm" 1024 100
	fabric rdm "verbs;ofi_rxm" 1000000 10
fi

# ---- NVMe over Fabrics ----

# A RAM disk (null_blk, memory backed) exported by nvmet-rdma on $ip,
# connected with nvme-rdma. fio
# writes it with checksums and reads them back (direct I/O, so every block
# crosses the fabric both ways).
nvme_case()
{
	local c=/sys/kernel/config/nvmet nqn=stag-middleware blk="" sent0 why="" i out fio=$tmp/fio

	sent0=$(sent_pkts)
	if ! modprobe -a nvmet nvmet-rdma nvme-rdma ||
	   ! modprobe null_blk nr_devices=1 memory_backed=1 gb=1; then
		_t_report "not ok" "NVMe-oF: the modules" "$(modprobe -a nvmet nvmet-rdma nvme-rdma null_blk 2>&1)"
		return
	fi
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	if ! { mkdir "$c/subsystems/$nqn" && echo 1 >"$c/subsystems/$nqn/attr_allow_any_host" &&
		mkdir "$c/subsystems/$nqn/namespaces/1" &&
		echo /dev/nullb0 >"$c/subsystems/$nqn/namespaces/1/device_path" &&
		echo 1 >"$c/subsystems/$nqn/namespaces/1/enable" && mkdir "$c/ports/1" &&
		echo "$ip" >"$c/ports/1/addr_traddr" && echo rdma >"$c/ports/1/addr_trtype" &&
		echo 4420 >"$c/ports/1/addr_trsvcid" && echo ipv4 >"$c/ports/1/addr_adrfam" &&
		ln -s "$c/subsystems/$nqn" "$c/ports/1/subsystems/$nqn"; } 2>"$tmp/nvmet"; then
		why="the nvmet target on $ip: $(cat "$tmp/nvmet")"
	elif ! out=$(timeout "$limit" nvme connect -t rdma -a "$ip" -s 4420 -n "$nqn" 2>&1); then
		why="nvme connect: $out"
	fi
	# The namespace's block device: the guest has no other NVMe.
	for i in $(seq 50); do
		[ -n "$why" ] && break
		blk=$(ls /sys/block | grep -m1 '^nvme[0-9]*n1$')
		[ -n "$blk" ] && [ -b "/dev/$blk" ] && break
		blk=""
		sleep 0.1
	done
	[ -z "$why" ] && [ -z "$blk" ] && why="no /dev/nvme*n1 after nvme connect"
	if [ -z "$why" ] &&
	   ! [ "$(cat "/sys/block/$blk/device/transport" 2>/dev/null ||
		  cat /sys/class/nvme/nvme*/transport 2>/dev/null | head -1)" = rdma ]; then
		why="/dev/$blk is not on the rdma transport"
	fi
	if [ -z "$why" ]; then
		for job in "--rw=randwrite --bs=4k --iodepth=16 --verify=crc32c" \
			   "--rw=write --bs=128k --iodepth=4 --verify=md5" \
			   "--rw=randrw --bs=16k --iodepth=8 --verify=sha256"; do
			# shellcheck disable=SC2086
			if ! timeout "$limit" fio --name=stag --filename="/dev/$blk" --direct=1 \
				--ioengine=libaio --size=16M $job --do_verify=1 --verify_fatal=1 \
				--output="$fio" >/dev/null 2>&1 || ! grep -q "err= 0" "$fio"; then
				why="fio $job: $(grep -Eim3 "err=|verify|bad" "$fio")"
				break
			fi
		done
	fi
	nvme disconnect -n "$nqn" >/dev/null 2>&1
	rm -f "$c/ports/1/subsystems/$nqn"
	rmdir "$c/ports/1" "$c/subsystems/$nqn/namespaces/1" "$c/subsystems/$nqn" 2>/dev/null
	verdict "NVMe-oF: nvmet-rdma and nvme-rdma, fio writes 3x16 MiB and verifies crc32c, md5, sha256" \
		"$why" "$sent0"
}

[[ $groups == *" nvme "* ]] && nvme_case

# ---- NFS over RDMA ----

# nfsd with an RDMA listener (svcrdma) exporting a tmpfs, mounted here
# with proto=rdma (xprtrdma). A file written through the mount must be on
# the server byte for byte, and one written on the server must read back
# through the mount (caches dropped first, so the bytes cross the fabric).
nfs_case()
{
	local srv=/srv/stag-nfs mnt=/mnt/stag-nfs sent0 why="" out

	sent0=$(sent_pkts)
	if ! modprobe -a nfsd rpcrdma nfsv4 2>"$tmp/nfs"; then
		_t_report "not ok" "NFS over RDMA: the modules" "$(cat "$tmp/nfs")"
		return
	fi
	mkdir -p "$srv" "$mnt" /var/lib/nfs/v4recovery /run/rpc_pipefs
	mount -t tmpfs tmpfs "$srv"
	echo "$srv *(rw,no_root_squash,fsid=0,insecure,no_subtree_check)" >/etc/exports
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	{ rpcbind -w && exportfs -ra && rpc.mountd && rpc.nfsd -N 3 4 &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist; } >"$tmp/nfs" 2>&1 ||
		why="the NFS server: $(cat "$tmp/nfs")"
	if [ -z "$why" ] &&
	   ! out=$(timeout "$limit" mount -t nfs -o vers=4.2,proto=rdma,port=20049 "$ip:/" "$mnt" 2>&1); then
		why="mount proto=rdma: $out"
	fi
	if [ -z "$why" ] && ! grep -q " $mnt nfs4 .*proto=rdma" /proc/mounts; then
		why="$mnt is not mounted with proto=rdma: $(grep " $mnt " /proc/mounts)"
	fi
	if [ -z "$why" ]; then
		head -c 5000003 /dev/urandom >"$tmp/a"
		head -c 3000001 /dev/urandom >"$tmp/b"
		cp "$tmp/b" "$srv/b"
		if ! timeout "$limit" cp "$tmp/a" "$mnt/a" || ! sync -f "$mnt/a"; then
			why="writing 5000003 bytes through the mount failed"
		elif ! cmp "$tmp/a" "$srv/a" >/dev/null 2>&1; then
			why="the server's copy of the file written through the mount differs: $(cmp "$tmp/a" "$srv/a" 2>&1)"
		else
			echo 3 >/proc/sys/vm/drop_caches
			cmp "$tmp/b" "$mnt/b" >/dev/null 2>&1 ||
				why="the file written on the server reads back different: $(cmp "$tmp/b" "$mnt/b" 2>&1)"
		fi
	fi
	umount "$mnt" 2>/dev/null
	rpc.nfsd 0 >/dev/null 2>&1
	exportfs -ua >/dev/null 2>&1
	pkill rpc.mountd
	pkill rpcbind
	umount "$srv" 2>/dev/null
	verdict "NFS over RDMA: svcrdma and xprtrdma, 5 MB written and 3 MB read byte for byte" \
		"$why" "$sent0"
}

[[ $groups == *" nfs "* ]] && nfs_case

rm -rf "$tmp"
exit 0
