# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers for stag's guest test suites. Each suite sources this file and
# reports every case with ok/not ok; tools/testing/check counts them.

T_SUITE=${T_SUITE:-$(basename "$0" .sh)}
T_BIN=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bin
T_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

# The end of the last verdict, or the suite's start, in microseconds
# (whatever the locale's decimal point): a verdict that came 5 s or more
# after it says how long, as testlib's C cases do, so that a CI log shows
# where a suite's time went ($STAG_CASE_SLOW seconds if set, as there;
# whole seconds here).
_t_last=${EPOCHREALTIME//[.,]/}
_t_slow=${STAG_CASE_SLOW:-5}
_t_slow=${_t_slow%%[.,]*}
_t_slow=$(( ${_t_slow:-0} * 10 ))

_t_report()
{
	local verdict=$1 name=$2 detail=$3 now tenths

	echo "$verdict - $T_SUITE: $name"
	[ -n "$detail" ] && printf '%s\n' "$detail" | head -20 | sed 's/^/#   /'
	now=${EPOCHREALTIME//[.,]/}
	tenths=$(( (now - _t_last) / 100000 ))
	[ "$tenths" -ge "$_t_slow" ] && echo "# the case took $((tenths / 10)).$((tenths % 10)) s"
	_t_last=$now
	return 0
}

# t_run NAME CMD...: passes when CMD exits 0.
t_run()
{
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		_t_report ok "$name" ""
	else
		_t_report "not ok" "$name" "exit $?: $out"
	fi
}

# t_fails NAME MESSAGE CMD...: passes when CMD fails and says MESSAGE (the
# strerror() text of the errno the kernel must return).
t_fails()
{
	local name=$1 msg=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		_t_report "not ok" "$name" "succeeded, expected: $msg"
	elif grep -qF -- "$msg" <<<"$out"; then
		_t_report ok "$name" ""
	else
		_t_report "not ok" "$name" "expected '$msg', got: $out"
	fi
}

# t_eq NAME EXPECTED ACTUAL
t_eq()
{
	if [ "$2" = "$3" ]; then
		_t_report ok "$1" ""
	else
		_t_report "not ok" "$1" "expected '$2', got '$3'"
	fi
}

# pins: pages pinned host-wide (FOLL_PIN) and not released.
pins()
{
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	awk '$1 == "nr_foll_pin_acquired" { a = $2 } $1 == "nr_foll_pin_released" { r = $2 }
	     END { print a - r }' /proc/vmstat
}

# memcg_new NAME MAX MNT: a cgroup v2 group with memory.max MAX, made under
# /sys/fs/cgroup, or under a cgroup2 mount at MNT (the caller unmounts it)
# when the guest has none; its path. Fails without a memory controller.
memcg_new()
{
	local root=/sys/fs/cgroup

	if [ ! -f "$root/cgroup.controllers" ]; then
		root=$3
		mkdir -p "$root"
		mountpoint -q "$root" || mount -t cgroup2 none "$root" || return 1
	fi
	grep -qw memory "$root/cgroup.controllers" || return 1
	echo +memory >"$root/cgroup.subtree_control" 2>/dev/null
	mkdir -p "$root/$1" && echo "$2" >"$root/$1/memory.max" && echo "$root/$1"
}

# in_cgroup CG CMD...: CMD run as a member of the cgroup at path CG.
in_cgroup()
{
	# shellcheck disable=SC2016 # $$ is the inner shell's
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$@"
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
wait_for()
{
	local tries=$(($1 * 10))
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

stag_links()
{
	rdma link show 2>/dev/null | grep -o 'link stag[^/ ]*' | sort
}

# kernel_before X.Y: the running kernel is older than release X.Y. For
# cases whose exact outcome the kernel decides (the guests run 6.1, 6.12
# and 7.2).
kernel_before()
{
	local v
	v=$(uname -r | sed 's/^\([0-9]*\.[0-9]*\).*/\1/')
	[ "$v" != "$1" ] && [ "$(printf '%s\n' "$v" "$1" | sort -V | head -1)" = "$v" ]
}

# ---- addresses ----

# gid_v4 ADDR: the IPv4-mapped GID of ADDR as sysfs prints it.
gid_v4()
{
	local IFS=.

	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

# roce_v2_index DEV ADDR: the index of the RoCE v2 GID of ADDR on DEV's port 1.
roce_v2_index()
{
	local sysport=/sys/class/infiniband/$1/ports/1 want f i

	want=$(gid_v4 "$2")
	for f in "$sysport"/gids/*; do
		i=${f##*/}
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] || continue
		[ "$(cat "$sysport/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# dev_netdev DEV: the netdev DEV's port 1 sits on.
dev_netdev()
{
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p'
}

# dev_ip DEV: $STAG_IP when it is on DEV's netdev, else that netdev's first IPv4 address.
dev_ip()
{
	ip -4 -o addr show dev "$(dev_netdev "$1")" 2>/dev/null |
		awk -v want="$STAG_IP" '{ split($4, a, "/"); if (!first) first = a[1]; if (a[1] == want) hit = 1 }
			END { print hit ? want : first }'
}

# ---- readiness of a server ----

tcp_listening()
{
	[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

# An rdma_cm listener on the port (rping, ucmatose, udaddy, perftest -R).
cm_listening()
{
	rdma resource show cm_id 2>/dev/null | grep -q "LISTEN.*:$1 "
}

# ---- the peer guest of a two-guest run (tools/testing/vm/pair, peer.py) ----

PEER_PORT=4790

# peer_open: connect to peer.py in the other guest, which may still be starting.
peer_open()
{
	local tries=600

	while [ "$tries" -gt 0 ]; do
		{ exec {PEER_FD}<>"/dev/tcp/$STAG_PEER_IP/$PEER_PORT"; } 2>/dev/null && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

_b64() { printf '%s' "$1" | base64 -w0; }

# _peer_reply FILE: read "WORD rc n" and n bytes of output into FILE; print WORD rc.
_peer_reply()
{
	local word rc n

	read -r word rc n <&"$PEER_FD" || { echo "LOST 255"; return; }
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then
		head -c "$n" <&"$PEER_FD" >"$1"
	else
		: >"$1"
	fi
	echo "$word $rc"
}

# peer_start READY SERVER TIMEOUT OUT: start SERVER on the peer until READY;
# 0 when it listens, else the server's status (its output in OUT).
peer_start()
{
	local word rc

	printf 'START %s %s %s\n' "$(_b64 "$1")" "$(_b64 "$2")" "$(_b64 "$3")" >&"$PEER_FD"
	read -r word rc <<<"$(_peer_reply "$4")"
	[ "$word" = READY ] && return 0
	return "${rc:-255}"
}

# peer_wait OUT [GRACE]: the server's exit status; its output in OUT. Given
# GRACE, the server is stopped if it has not ended within that many seconds.
peer_wait()
{
	local word rc

	if [ -n "${2:-}" ]; then
		printf 'WAIT %s\n' "$(_b64 "$2")" >&"$PEER_FD"
	else
		echo WAIT >&"$PEER_FD"
	fi
	read -r word rc <<<"$(_peer_reply "$1")"
	return "${rc:-255}"
}

peer_kill()
{
	local reply

	echo KILL >&"$PEER_FD"
	read -r reply <&"$PEER_FD"
}

# peer_run CMD OUT: run CMD in the peer guest; its status, its output in OUT.
peer_run()
{
	local word rc

	printf 'RUN %s\n' "$(_b64 "$1")" >&"$PEER_FD"
	read -r word rc <<<"$(_peer_reply "$2")"
	return "${rc:-255}"
}

# pair_setup WHAT: for a suite of guest b in a two-guest run (vm/pair): sets
# ip, gid and netdev of $dev, and peer, and has serve_start use the peer
# guest. Else it reports WHAT skipped, or what is missing, and fails: the
# suite then exits.
pair_setup()
{
	if [ -z "${STAG_PEER_IP:-}" ] || [ "${STAG_ROLE:-}" != b ]; then
		echo "ok - $T_SUITE: $1 # SKIP needs two guests (tools/testing/vm/pair)"
		return 1
	fi
	ip=$(dev_ip "$dev")
	gid=$(wait_for 10 roce_v2_index "$dev" "$ip" && roce_v2_index "$dev" "$ip")
	netdev=$(dev_netdev "$dev")
	if [ -z "$ip" ] || [ -z "$gid" ] || [ -z "$netdev" ]; then
		_t_report "not ok" "a RoCE v2 GID of an IPv4 address on $dev" \
			"address '$ip', GID index '$gid', netdev '$netdev'"
		return 1
	fi
	serve_in_peer || { _t_report "not ok" "reach peer.py in the peer guest" ""; return 1; }
	peer=${STAG_PEER_DEV:-the peer guest}
}

# ---- a case's server: in this guest, or in the peer guest ----

SERVE_PEER=0

# serve_here DEV GID IP: serve_start starts servers in this guest, with
# @DEV@, @GID@ and @IP@ in their commands standing for DEV, GID and IP.
serve_here()
{
	SERVE_PEER=0
	SERVE_DEV=$1 SERVE_GID=$2 SERVE_IP=$3
}

# serve_where DEV GID IP: servers here (serve_here), and $sip is IP; or,
# in guest b of a two-guest run, in the peer guest, and $sip is its
# address. Fails, having reported it, when the peer cannot be reached.
serve_where()
{
	sip=$3
	serve_here "$1" "$2" "$3"
	[ -n "${STAG_PEER_IP:-}" ] && [ "${STAG_ROLE:-}" = b ] || return 0
	serve_in_peer || { _t_report "not ok" "reach peer.py in the peer guest" ""; return 1; }
	sip=$STAG_PEER_IP
	echo "# servers in the peer guest, $sip"
}

# serve_in_peer: serve_start starts servers in the peer guest (peer.py).
serve_in_peer()
{
	peer_open && SERVE_PEER=1
}

# serve_start READY SERVER TIMEOUT OUT: start SERVER under a hard TIMEOUT,
# its output in OUT; 0 once READY (run where SERVER runs) passes, else the
# server's status.
serve_start()
{
	local ready=$1 cmd=$2 limit=$3 out=$4 tries

	if [ "$SERVE_PEER" = 1 ]; then
		peer_start "$ready" "$cmd" "$limit" "$out"
		return
	fi
	cmd=${cmd//@DEV@/$SERVE_DEV}
	cmd=${cmd//@GID@/$SERVE_GID}
	cmd=${cmd//@IP@/$SERVE_IP}
	# shellcheck disable=SC2086
	timeout -k 5 "$limit" $cmd >"$out" 2>&1 &
	SERVE_PID=$!
	tries=$((limit * 10))
	# shellcheck disable=SC2086
	until $ready >/dev/null 2>&1; do
		tries=$((tries - 1))
		if ! kill -0 "$SERVE_PID" 2>/dev/null || [ "$tries" -le 0 ]; then
			kill "$SERVE_PID" 2>/dev/null
			wait "$SERVE_PID"
			return 1
		fi
		sleep 0.1
	done
}

# serve_end CLIENT_STATUS OUT [GRACE]: the server's exit status, its output
# in OUT. A server whose client failed may wait for it for ever: it is
# stopped. Given GRACE, the server has that many seconds to end of itself,
# and is then stopped (a receiver whose sender is known to have sent less
# than it waits for).
serve_end()
{
	local tries

	if [ "$SERVE_PEER" = 1 ]; then
		[ "$1" -ne 0 ] && peer_kill
		peer_wait "$2" ${3:+"$3"}
		return
	fi
	[ "$1" -ne 0 ] && kill "$SERVE_PID" 2>/dev/null
	if [ -n "${3:-}" ]; then
		tries=$(($3 * 10))
		while kill -0 "$SERVE_PID" 2>/dev/null && [ "$tries" -gt 0 ]; do
			sleep 0.1
			tries=$((tries - 1))
		done
		kill "$SERVE_PID" 2>/dev/null
	fi
	wait "$SERVE_PID"
}

# serve_report CLIENT_STATUS OUT NAME: serve_end, then the case NAME: the
# server ended well and printed no "not ok" of its own.
serve_report()
{
	local src

	serve_end "$1" "$2"
	src=$?
	if [ "$src" -eq 0 ] && ! grep -q '^not ok' "$2"; then
		_t_report ok "$3" ""
	else
		_t_report "not ok" "$3" "exit status $src: $(grep -A4 '^not ok' "$2"; tail -5 "$2")"
	fi
}
