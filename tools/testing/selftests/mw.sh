#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory windows over loopback (bin/mw_test, see mw_test.c): type 1 and
# type 2 binds and every rule of a bind with its exact completion status,
# accesses checked against the window's own bytes and rights with guard
# bytes, LOCAL_INV and SEND_WITH_INV, bind ordering, window and region
# lifetime.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0 and
# installed the provider into libibverbs' provider directory.
#
#   STAG_TEST_DEV	the device (default stag0; rxe0 to check the test itself)
#   STAG_MW_TIMEOUT	seconds one case may take (default 30)
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}

# mw_test prints its own TAP lines; a crash must still count as a failure.
"$T_BIN/mw_test" "$dev"
rc=$?
[ "$rc" -eq 0 ] || _t_report "not ok" "mw_test $dev ran to the end" "exit status $rc"
