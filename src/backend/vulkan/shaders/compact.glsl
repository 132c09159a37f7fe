/* SPDX-License-Identifier: MIT */
/* Shared by compact_pairs.comp and by compact_holes.comp with
 * compact_move.comp (WS_VULKAN_COMPACT, vk_internal.h): the push constants
 * (vk_queue.c compact_push), the state words and the move of one frame. */
#ifndef WAVESCHED_VK_COMPACT_GLSL
#define WAVESCHED_VK_COMPACT_GLSL

#include "loop.glsl"

layout(push_constant, scalar) uniform compact_pc {
  layout(offset = 0) uint64_t tokens;
  layout(offset = 8) uint64_t ids;
  layout(offset = 16) uint64_t frames;
  layout(offset = 24) uint64_t field_offsets; /* uint64_t[field_count]: SoA arrays */
  layout(offset = 32) uint64_t scratch;       /* uint32_t[n]: the holes */
  layout(offset = 40) uint64_t state;         /* uint32_t words, vk_internal.h WS_VK_STATE_* */
  layout(offset = 48) uint n;                 /* live count: [0, n) is the dense prefix */
  layout(offset = 52) uint scan;
  layout(offset = 56) uint layout_;
  layout(offset = 60) uint frame_size;        /* AoS record size */
  layout(offset = 64) uint field_count;
  layout(offset = 72) uint64_t dyn; /* device loop: n and scan from its words (loop.glsl) */
} P;

/* WS_VK_STATE_* word indices */
const uint STATE_HOLES = 0u;
const uint STATE_MOVERS = 1u;
const uint STATE_DONE = 2u; /* compact_pairs.comp: tiles finished */
const uint STATE_ERROR = 3u;
const uint STATE_SIZES = 8u;
const uint STATE_ERR_COMPACT = 1u;

/* The live count and the scan bound: the push constants', or the device
 * loop's words. */
uint ws_compact_n() { return P.dyn != 0ul ? ws_dl_word(P.dyn, WS_DL_COMPACT_N) : P.n; }
uint ws_compact_scan() { return P.dyn != 0ul ? ws_dl_word(P.dyn, WS_DL_COMPACT_SCAN) : P.scan; }

/* 16-byte units of frame storage (ws_copy_bytes) */
layout(buffer_reference, scalar, buffer_reference_align = 16) buffer ws_compact_u128 {
  uvec4 v[];
};

/* Copies len bytes from src to dst. In the widest unit of 16, 8 or 4 bytes
 * that divides the size and both addresses, as the CUDA move kernel does
 * (a 16-byte AoS record: one load and one store, not four of each; session
 * 9, not measured); otherwise byte by byte inside 32-bit words with
 * atomics, because the neighbouring bytes of a word may belong to another
 * slot that another invocation writes at the same time (a uint16_t SoA
 * array, a 6-byte AoS record). Sources are slots >= n and destinations
 * slots < n, so no byte is both read and written. */
void ws_copy_bytes(uint64_t dst, uint64_t src, uint len) {
  const uint align = uint(dst) | uint(src) | len;
  if ((align & 15u) == 0u) {
    for (uint k = 0u; k < len / 16u; ++k)
      ws_compact_u128(dst).v[k] = ws_compact_u128(src).v[k];
    return;
  }
  if ((align & 7u) == 0u) {
    for (uint k = 0u; k < len / 8u; ++k)
      WS_PTR(uint64_t, dst)[k] = WS_PTR(uint64_t, src)[k];
    return;
  }
  if ((align & 3u) == 0u) {
    for (uint k = 0u; k < len / 4u; ++k)
      WS_PTR(uint32_t, dst)[k] = WS_PTR(uint32_t, src)[k];
    return;
  }
  for (uint k = 0u; k < len; ++k) {
    const uint64_t sa = src + k, da = dst + k;
    /* an atomic read: another invocation may be changing other bytes */
    const uint word = atomicOr(WS_REF(uint32_t)(sa & ~3ul).v, 0u);
    const uint byte = (word >> (8u * uint(sa & 3ul))) & 0xffu;
    const uint shift = 8u * uint(da & 3ul);
    atomicAnd(WS_REF(uint32_t)(da & ~3ul).v, ~(0xffu << shift));
    atomicOr(WS_REF(uint32_t)(da & ~3ul).v, byte << shift);
  }
}

/* Frame `from` (a live slot >= n holding `token`) moves into the free slot
 * `to` (< n): its storage, id and token; its old slot becomes free. Each
 * slot is in at most one pair, so no two moves touch the same bytes. */
void ws_compact_move_frame(uint to, uint from, uint token) {
  if (P.layout_ == WS_LAYOUT_AOS) {
    ws_copy_bytes(P.frames + uint64_t(to) * P.frame_size, P.frames + uint64_t(from) * P.frame_size,
                  P.frame_size);
  } else {
    for (uint f = 0u; f < P.field_count; ++f) {
      const uint size = WS_PTR(uint32_t, P.state)[STATE_SIZES + f];
      const uint64_t base = P.frames + WS_PTR(uint64_t, P.field_offsets)[f];
      ws_copy_bytes(base + uint64_t(to) * size, base + uint64_t(from) * size, size);
    }
  }
  WS_PTR(uint32_t, P.ids)[to] = WS_PTR(uint32_t, P.ids)[from];
  WS_PTR(uint32_t, P.tokens)[to] = token;
  WS_PTR(uint32_t, P.tokens)[from] = 0u;
}

#endif
