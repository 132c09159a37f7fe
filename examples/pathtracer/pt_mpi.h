/* SPDX-License-Identifier: MIT */
/* wavesched path tracer — the MPI glue of wavesched-pathtracer-mpi
 * (docs/mpi.md): start-up, every rank's verdict on a step, and the image and
 * statistics brought to rank 0 in rank order. Built only with WS_MPI; the
 * library and the single-process programs know nothing of MPI. */
#ifndef WS_PT_MPI_H
#define WS_PT_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "wavesched/wavesched.h"

typedef struct pt_mpi {
  int rank, size; /* in MPI_COMM_WORLD */
  int local_rank; /* among the ranks of this node (MPI_COMM_TYPE_SHARED) */
} pt_mpi;

/* MPI_Init and the ranks; 0, or -1 with a message in err. */
int pt_mpi_init(pt_mpi *m, char *err, size_t err_cap);
/* MPI_Finalize */
void pt_mpi_finalize(void);

/* Every rank's verdict on a step they all take, so that no rank waits in a
 * collective for one that gave up: returns 0 on every rank when every rank's
 * `failed` was 0, else 1 on every rank. A rank that did not fail itself
 * prints (prog: step: ...) which ranks did: the failing ones print their own
 * reason before calling this. */
int pt_mpi_agree(const pt_mpi *m, int failed, const char *prog, const char *step);

/* Waits for every rank. */
void pt_mpi_barrier(void);

/* Rank 0 receives `bytes` bytes from every rank into all[rank * bytes]
 * (all: size * bytes, used on rank 0 only). Same binary on every rank: the
 * records travel as bytes. */
void pt_mpi_gather_bytes(const pt_mpi *m, const void *mine, size_t bytes, void *all);

/* Rank 0 puts the image together: each rank's share (rows of `width` RGB
 * floats, ws_partition_range(height, size, rank, kind)) lands in its rows of
 * `image` (width * height * 3 floats, rank 0 only). Copies, no arithmetic:
 * every pixel comes from the one rank that rendered it. 0, or -1 (rank 0
 * out of memory for the staging buffer; MPI errors abort the job). */
int pt_mpi_gather_rows(const pt_mpi *m, const float *share, uint32_t width, uint32_t height,
                       ws_partition_kind kind, float *image);

#endif
