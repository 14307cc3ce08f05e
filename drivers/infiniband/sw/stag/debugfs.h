/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag debugfs: per-device TPT occupancy and pinned pages, under
 * /sys/kernel/debug/stag/<device>/.
 */
#ifndef _STAG_DEBUGFS_H
#define _STAG_DEBUGFS_H

struct stag_dev;

void stag_debugfs_init(void);
void stag_debugfs_uninit(void);
void stag_debugfs_add_dev(struct stag_dev *sdev, const char *name);
void stag_debugfs_remove_dev(struct stag_dev *sdev);

#endif /* _STAG_DEBUGFS_H */
