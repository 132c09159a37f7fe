/* SPDX-License-Identifier: MIT */
/* wavesched path tracer — the MPI glue (pt_mpi.h, docs/mpi.md). */
#include "pt_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int pt_mpi_init(pt_mpi *m, char *err, size_t err_cap) {
  memset(m, 0, sizeof *m);
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
    snprintf(err, err_cap, "MPI_Init failed");
    return -1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m->size);
  /* the node's ranks: CUDA device = local rank modulo the node's devices */
  MPI_Comm node;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node) ==
      MPI_SUCCESS) {
    MPI_Comm_rank(node, &m->local_rank);
    MPI_Comm_free(&node);
  } else {
    m->local_rank = m->rank;
  }
  return 0;
}

void pt_mpi_finalize(void) { MPI_Finalize(); }

void pt_mpi_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

int pt_mpi_agree(const pt_mpi *m, int failed, const char *prog, const char *step) {
  /* how many failed, and the first of them */
  int in[2] = {failed ? 1 : 0, failed ? m->rank : INT_MAX}, count = 0, first = INT_MAX;
  MPI_Allreduce(&in[0], &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&in[1], &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (count == 0)
    return 0;
  if (!failed) {
    if (count == 1)
      fprintf(stderr, "%s: %s: rank %d of %d failed; stopping\n", prog, step, first, m->size);
    else
      fprintf(stderr, "%s: %s: %d of %d ranks failed (the first: rank %d); stopping\n", prog, step,
              count, m->size, first);
  }
  return 1;
}

void pt_mpi_gather_bytes(const pt_mpi *m, const void *mine, size_t bytes, void *all) {
  MPI_Gather(mine, (int)bytes, MPI_BYTE, m->rank == 0 ? all : NULL, (int)bytes, MPI_BYTE, 0,
             MPI_COMM_WORLD);
}

int pt_mpi_gather_rows(const pt_mpi *m, const float *share, uint32_t width, uint32_t height,
                       ws_partition_kind kind, float *image) {
  /* every rank knows every share: no counts travel. Counts and offsets are
   * ints (MPI's): the image is at most PT_MAX_PIXELS * 3 < 2^31 floats. */
  const size_t row = (size_t)width * 3;
  ws_partition mine;
  ws_partition_range(height, (uint32_t)m->size, (uint32_t)m->rank, kind, &mine);
  const int send = (int)(mine.count * row);
  int *counts = NULL, *displs = NULL;
  float *staging = NULL;
  int bad = 0;
  if (m->rank == 0) {
    counts = malloc((size_t)m->size * sizeof *counts);
    displs = malloc((size_t)m->size * sizeof *displs);
    staging = malloc((size_t)height * row * sizeof *staging);
    bad = !counts || !displs || !staging;
  }
  /* rank 0 out of memory: every rank skips the gather together */
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (bad) {
    free(counts);
    free(displs);
    free(staging);
    return -1;
  }
  if (m->rank == 0) {
    int at = 0;
    for (int r = 0; r < m->size; ++r) {
      ws_partition p;
      ws_partition_range(height, (uint32_t)m->size, (uint32_t)r, kind, &p);
      counts[r] = (int)(p.count * row);
      displs[r] = at;
      at += counts[r];
    }
  }
  MPI_Gatherv(share, send, MPI_FLOAT, staging, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
  if (m->rank == 0) {
    /* staging holds the shares in rank order; each row to its place */
    for (int r = 0; r < m->size; ++r) {
      ws_partition p;
      ws_partition_range(height, (uint32_t)m->size, (uint32_t)r, kind, &p);
      for (uint64_t l = 0; l < p.count; ++l)
        memcpy(image + ws_partition_index(&p, l) * row, staging + (size_t)displs[r] + l * row,
               row * sizeof(float));
    }
  }
  free(counts);
  free(displs);
  free(staging);
  return 0;
}
