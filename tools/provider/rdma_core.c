// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rdma-core the provider runs under.
 *
 * ibverbs_provider.h declares libibverbs's private provider interface
 * itself, because rdma-core does not install it, and that interface is
 * not a stable ABI: its version node (IBVERBS_PRIVATE_34) stayed the same
 * from rdma-core 17 to 56 while structures grew and moved (rdma-core 56
 * moved verbs_qp's comp_mask); since then each release has its own (65.0
 * exports IBVERBS_PRIVATE_65). So the provider asks which rdma-core it was loaded into and
 * registers only under a release whose layouts were read from its own
 * binaries. Under any other it does not register at all, and says why: it
 * never guesses a layout.
 *
 * The release is read from libibverbs's file name, which rdma-core's build
 * sets to libibverbs.so.1.<ABI minor>.<release> (libibverbs.so.1.14.44.0 is
 * rdma-core 44.0): the file the process loaded as libibverbs.so.1, its
 * symbolic links resolved.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <link.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/stag-abi.h>

#include "rdma_core.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#ifndef IBVERBS_PABI_VERSION
#define IBVERBS_PABI_VERSION	34
#endif

/*
 * The releases ibverbs_provider.h was checked against, by major version,
 * for the private ABI this build has: libibverbs only ever opens a
 * libstag-rdmav<PABI>.so of its own PABI, and within one PABI the layouts
 * may still differ by release.
 */
#if IBVERBS_PABI_VERSION == 65
static const unsigned long known_majors[] = { 65 };
#define KNOWN_RELEASES	"65"
#else
static const unsigned long known_majors[] = { 44, 56 };
#define KNOWN_RELEASES	"44 and 56"
#endif

/**
 * stag_rdma_core_parse() - the rdma-core release in a libibverbs file name
 * @path: the library's real path (symbolic links resolved)
 * @version: filled with the release, "44.0"
 * @len: room in @version
 *
 * Return: 0, or -1 when @path is not named libibverbs.so.1.<N>.<release>
 * with a numeric release.
 */
int stag_rdma_core_parse(const char *path, char *version, size_t len)
{
	static const char stem[] = "libibverbs.so.1.";
	const char *base = strrchr(path, '/'), *p, *rel;
	size_t n;

	base = base ? base + 1 : path;
	if (strncmp(base, stem, sizeof(stem) - 1))
		return -1;
	/* The ABI minor, then the release: digits and dots, from a digit. */
	p = base + sizeof(stem) - 1;
	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p++ != '.' || !isdigit((unsigned char)*p))
		return -1;
	rel = p;
	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	n = p - rel;
	if (*p || rel[n - 1] == '.' || n >= len)
		return -1;
	memcpy(version, rel, n);
	version[n] = '\0';
	return 0;
}

/* The major release of the libibverbs stag_rdma_core_check() found, or 0. */
static unsigned long loaded_release;

/**
 * stag_rdma_core_release() - the rdma-core release the provider runs under
 *
 * For what changed within one private ABI (rdma-core 55 gave
 * ibv_cmd_reg_dmabuf_mr() an argument; 56 still exports
 * IBVERBS_PRIVATE_34).
 *
 * Return: its major number (44, 56, 65), or 0 before stag_rdma_core_check().
 */
unsigned long stag_rdma_core_release(void)
{
	return loaded_release;
}

/* Is @version ("56.1") a release whose layouts ibverbs_provider.h matches? */
bool stag_rdma_core_known(const char *version)
{
	unsigned long major;
	char *end;
	size_t i;

	major = strtoul(version, &end, 10);
	if (end == version || (*end && *end != '.'))
		return false;
	for (i = 0; i < ARRAY_SIZE(known_majors); i++)
		if (major == known_majors[i])
			return true;
	return false;
}

/* Is there a stag device here? Only then is a refusal worth a message. */
static bool stag_device_present(void)
{
	glob_t g;
	bool any;

	any = !glob("/sys/class/infiniband/" STAG_DEVICE_NAME_PREFIX "*", 0, NULL, &g);
	if (any)
		globfree(&g);
	return any;
}

/* dl_iterate_phdr() callback: the path libibverbs.so.1 was loaded from. */
static int find_libibverbs(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');
	const char **path = data;

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libibverbs.so.", strlen("libibverbs.so.")))
		return 0;
	*path = info->dlpi_name;
	return 1;
}

/**
 * stag_rdma_core_check() - may the provider register with this libibverbs?
 *
 * Return: true under a known rdma-core release. Otherwise false, and with a
 * stag device present, a message on stderr naming the release found.
 */
bool stag_rdma_core_check(void)
{
	char version[32] = "unknown", *real = NULL;
	const char *path = NULL;
	bool ok;

	dl_iterate_phdr(find_libibverbs, &path);
	if (path)
		real = realpath(path, NULL);
	ok = real && !stag_rdma_core_parse(real, version, sizeof(version)) &&
	     stag_rdma_core_known(version);
	if (ok)
		loaded_release = strtoul(version, NULL, 10);
	if (!ok && stag_device_present())
		fprintf(stderr,
			"stag: libibverbs %s is rdma-core %s, whose private provider interface "
			"this provider was not checked against (rdma-core "
			KNOWN_RELEASES " only): not loading. Check it with "
			"make -C tools/provider abi-check.\n",
			real ? real : "(not found)", version);
	free(real);
	return ok;
}
