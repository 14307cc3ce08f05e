#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# On-demand paging (bin/odp_test, see odp_test.c): regions registered with
# IBV_ACCESS_ON_DEMAND pin and charge nothing; data moves into pages never
# touched; holes and read-only pages fail with the exact statuses; munmap,
# mremap, MADV_DONTNEED, fork and truncation between transfers in both
# directions, every byte checked against what the process sees; prefetch,
# implicit regions, windows, and races with the data path.
#
# Runs in the guest (tools/testing/vm/run). With stag.loopback=0 the same
# cases move every byte as RoCE packets.
#
#   STAG_TEST_DEV	the device (default stag0)
#   STAG_ODP_TIMEOUT	seconds one case may take (default 60)
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}

# odp_test prints its own TAP lines; a crash must still count as a failure.
"$T_BIN/odp_test" "$dev"
rc=$?
[ "$rc" -eq 0 ] || _t_report "not ok" "odp_test $dev ran to the end" "exit status $rc"
