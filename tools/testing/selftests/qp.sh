#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue pairs over loopback (bin/qp_test, see qp_test.c): every RC
# operation byte for byte with guard bytes, the IBA's error completions
# and flushing, UC, UD, SRQs, completion channels, the QP state machine,
# ibv_qp_ex and ibv_cq_ex, and raw WQEs from a hostile process.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0 and
# installed the provider into libibverbs' provider directory.
#
#   STAG_TEST_DEV	the device (default stag0; rxe0 to check the test itself)
#   STAG_QP_TIMEOUT	seconds one case may take (default 30)
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}

# qp_test prints its own TAP lines; a crash must still count as a failure.
"$T_BIN/qp_test" "$dev"
rc=$?
[ "$rc" -eq 0 ] || _t_report "not ok" "qp_test $dev ran to the end" "exit status $rc"
