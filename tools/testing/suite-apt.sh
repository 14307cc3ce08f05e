# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts that fetch from another Debian suite than the
# host's (suite-extract, vm/kernel). suite_apt SUITE sets apt_opts to an
# apt configuration of that suite's own, under $STAG_CACHE/apt/SUITE, apart
# from the host's apt, whose sources stay bookworm; its package lists are
# refreshed when they are a day old. The archive's snapshot may carry an
# expired Release file: its dates are not checked, as the host's apt does
# not check them.
#
# Return: 1 when there are no package lists at all (offline, and never
# updated); stale lists are used as they are.
suite_apt()
{
	local suite=$1
	local d=${STAG_CACHE:-$HOME/.cache/stag}/apt/$suite

	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
		>"$d/sources.list"
	apt_opts=(-o "Dir::Etc::sourcelist=$d/sources.list" -o Dir::Etc::sourceparts=/dev/null
		  -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache"
		  -o 'Acquire::Check-Valid-Until=false')
	[ -z "$(find "$d/lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null)" ] || return 0
	apt-get -q "${apt_opts[@]}" update >&2 && return 0
	[ -n "$(find "$d/lists" -maxdepth 1 -name '*Packages*')" ]
}
