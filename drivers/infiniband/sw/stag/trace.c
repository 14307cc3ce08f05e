// SPDX-License-Identifier: GPL-2.0
/*
 * The stag trace system's events, defined once (see trace.h).
 */

#define CREATE_TRACE_POINTS
#include "trace.h"
