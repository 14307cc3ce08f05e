# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers for stag's guest test suites. Each suite sources this file and
# reports every case with ok/not ok; tools/testing/check counts them.

T_SUITE=${T_SUITE:-$(basename "$0" .sh)}
T_BIN=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bin
T_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

_t_report()
{
	local verdict=$1 name=$2 detail=$3

	echo "$verdict - $T_SUITE: $name"
	[ -n "$detail" ] && printf '%s\n' "$detail" | head -20 | sed 's/^/#   /'
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
