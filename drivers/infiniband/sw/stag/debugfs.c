// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: what the TPT of each device holds. Read-only; a reader walks
 * the table under RCU and takes a reference on each entry it looks into,
 * exactly as the gate does.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "debugfs.h"
#include "dev.h"
#include "pages.h"
#include "tpt.h"

static struct dentry *stag_debugfs_root;

struct tpt_stats {
	u64 entries, valid, mrs, mws, page_refs, list_bytes;
};

static void tpt_walk(struct stag_tpt *tpt, struct tpt_stats *st)
{
	struct stag_tpt_entry *e;
	struct stag_pages *pages;
	unsigned long index;

	/* Page lists are swapped by rereg and fast registration: RCU keeps them. */
	rcu_read_lock();
	xa_for_each(&tpt->xa, index, e) {
		if (!refcount_inc_not_zero(&e->ref))
			continue;
		st->entries++;
		st->valid += stag_tpt_state(e) == STAG_TPT_VALID;
		st->mrs += e->type == STAG_TPT_MR;
		st->mws += e->type == STAG_TPT_MW;
		pages = READ_ONCE(e->pages);
		if (e->type == STAG_TPT_MR && pages) {
			st->page_refs += READ_ONCE(pages->npages);
			st->list_bytes += stag_pages_size(pages);
		}
		stag_tpt_put(e);
	}
	rcu_read_unlock();
}

static int tpt_show(struct seq_file *m, void *unused)
{
	struct stag_dev *sdev = m->private;
	struct tpt_stats st = {};
	u64 pinned = atomic64_read(&sdev->pinned_pages);

	tpt_walk(&sdev->tpt, &st);
	seq_printf(m, "entries:        %llu\n", st.entries);
	seq_printf(m, "valid:          %llu\n", st.valid);
	seq_printf(m, "mrs:            %llu\n", st.mrs);
	seq_printf(m, "mws:            %llu\n", st.mws);
	seq_printf(m, "max_index:      %u\n", sdev->tpt.max_index);
	seq_printf(m, "pinned_pages:   %llu\n", pinned);
	seq_printf(m, "mapped_pages:   %llu\n", st.page_refs);
	seq_printf(m, "pagelist_bytes: %llu\n", st.list_bytes);
	if (pinned)
		seq_printf(m, "bytes_per_pinned_page: %llu.%02llu\n",
			   st.list_bytes / pinned, st.list_bytes * 100 / pinned % 100);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tpt);

void stag_debugfs_init(void)
{
	stag_debugfs_root = debugfs_create_dir("stag", NULL);
}

void stag_debugfs_uninit(void)
{
	debugfs_remove_recursive(stag_debugfs_root);
}

/* Named as the device was created; a later rename does not follow. */
void stag_debugfs_add_dev(struct stag_dev *sdev, const char *name)
{
	sdev->debugfs = debugfs_create_dir(name, stag_debugfs_root);
	debugfs_create_file("tpt", 0400, sdev->debugfs, sdev, &tpt_fops);
}

/* Waits for readers of the device's files, so sdev may go right after. */
void stag_debugfs_remove_dev(struct stag_dev *sdev)
{
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
}
