#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Register Shared Memory Region from userspace (bin/shared_mr_test, see
# shared_mr_test.c), through stagdv_reg_shared_mr() of the provider
# library the test links: keys, iova and PD, pins, access rules, handles
# of another context, restrack, process exit.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0 and
# installed the provider into libibverbs' provider directory.
. "$(dirname "$0")/lib.sh"

dev=${STAG_MR_DEV:-stag0}

# shared_mr_test prints its own TAP lines; a crash must still count as a failure.
"$T_BIN/shared_mr_test" "$dev"
rc=$?
[ "$rc" -eq 0 ] || _t_report "not ok" "shared_mr_test $dev ran to the end" "exit status $rc"
