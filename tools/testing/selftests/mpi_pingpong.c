// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI ping-pong that checks every byte: rank 0 sends a message of each
 * size, rank 1 checks it and sends back its bitwise complement, rank 0
 * checks that. The sizes cross UCX's eager and rendezvous thresholds (the
 * large ones move by RDMA READ or WRITE from registered memory), and each
 * buffer has guard bytes on both sides that must stay untouched.
 *
 *   mpi_pingpong [ITERATIONS]	(mpirun -np 2)
 *
 * Exits 0 and prints "mpi_pingpong: N sizes, M exchanges, data intact"
 * from rank 0 when all went through.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD	64
#define GUARD_BYTE 0x5a
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const size_t sizes[] = { 0, 1, 7, 64, 1000, 4096, 8193, 65536, 262147, 1 << 22 };

static uint8_t pattern(size_t i, int iter, size_t len)
{
	return (uint8_t)(i * 131 + iter * 17 + len);
}

static int check(const uint8_t *buf, size_t len, int iter, int flip, const char *who)
{
	size_t i;

	for (i = 0; i < GUARD; i++) {
		if (buf[i] != GUARD_BYTE || buf[GUARD + len + i] != GUARD_BYTE) {
			fprintf(stderr, "%s: %zu bytes, iteration %d: a guard byte changed\n", who,
				len, iter);
			return 1;
		}
	}
	for (i = 0; i < len; i++) {
		uint8_t want = pattern(i, iter, len) ^ (flip ? 0xff : 0);

		if (buf[GUARD + i] != want) {
			fprintf(stderr, "%s: %zu bytes, round %d: byte %zu is %#x, not %#x\n",
				who, len, iter, i, buf[GUARD + i], want);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	size_t s, i, max = sizes[ARRAY_SIZE(sizes) - 1];
	int rank, nranks, it, bad = 0, n = 0, hlen;
	char host[MPI_MAX_PROCESSOR_NAME];
	uint8_t *tx, *rx;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2) {
		if (!rank)
			fprintf(stderr, "mpi_pingpong: run it with 2 ranks, not %d\n", nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* Where each rank runs: the test checks that two guests ran one each. */
	MPI_Get_processor_name(host, &hlen);
	printf("mpi_pingpong: rank %d on %s\n", rank, host);
	fflush(stdout);
	tx = malloc(max + 2 * GUARD);
	rx = malloc(max + 2 * GUARD);
	if (!tx || !rx)
		MPI_Abort(MPI_COMM_WORLD, 2);

	for (s = 0; s < ARRAY_SIZE(sizes) && !bad; s++) {
		size_t len = sizes[s];

		for (it = 0; it < iters && !bad; it++) {
			memset(rx, GUARD_BYTE, len + 2 * GUARD);
			memset(tx, GUARD_BYTE, len + 2 * GUARD);
			if (rank == 0) {
				for (i = 0; i < len; i++)
					tx[GUARD + i] = pattern(i, it, len);
				MPI_Send(tx + GUARD, (int)len, MPI_BYTE, 1, it, MPI_COMM_WORLD);
				MPI_Recv(rx + GUARD, (int)len, MPI_BYTE, 1, it, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad = check(rx, len, it, 1, "rank 0");
			} else {
				MPI_Recv(rx + GUARD, (int)len, MPI_BYTE, 0, it, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad = check(rx, len, it, 0, "rank 1");
				for (i = 0; i < len; i++)
					tx[GUARD + i] = rx[GUARD + i] ^ 0xff;
				MPI_Send(tx + GUARD, (int)len, MPI_BYTE, 0, it, MPI_COMM_WORLD);
			}
			n++;
			/* Both ranks stop together when either found a bad byte. */
			MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		}
	}
	if (!rank && !bad)
		printf("mpi_pingpong: %zu sizes, %d exchanges, data intact\n",
		       ARRAY_SIZE(sizes), n);
	free(tx);
	free(rx);
	MPI_Finalize();
	return bad;
}
