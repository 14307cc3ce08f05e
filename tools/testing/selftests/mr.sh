#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory regions from userspace (bin/mr_test, see mr_test.c): alignment,
# access rules, bad ranges, iovas, RLIMIT_MEMLOCK, overlapping and 1 GiB
# registrations (STAG_MR_BIG_MIB: fewer MiB instead), restrack. What
# registration costs is make bench's.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0.
. "$(dirname "$0")/lib.sh"

dev=${STAG_MR_DEV:-stag0}

# The TPT's debugfs file is checked too.
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug

# mr_test prints its own TAP lines; a crash must still count as a failure.
"$T_BIN/mr_test" "$dev"
rc=$?
[ "$rc" -eq 0 ] || _t_report "not ok" "mr_test $dev ran to the end" "exit status $rc"
