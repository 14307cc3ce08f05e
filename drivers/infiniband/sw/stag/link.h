/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag link: rdma link add/delete and the netdev events that follow a link.
 */
#ifndef _STAG_LINK_H
#define _STAG_LINK_H

int stag_link_init(void);
void stag_link_uninit(void);

#endif /* _STAG_LINK_H */
