/* SPDX-License-Identifier: MIT */
/* The fuzzer's table-driven coroutine (tools/fuzz/fz.h) in GLSL for the
 * Vulkan backend: the structs and the pure functions shared by
 * fz_main.coro.comp and fz_stage.comp. Same fields, same offsets, same
 * arithmetic as the C source, so every backend gives the model's results. */
#ifndef WS_FUZZ_FZ_GLSL
#define WS_FUZZ_FZ_GLSL

#include "wavesched/pool.glsl"

#define FZ_MAX_K 6u
#define FZ_MAX_WORKS 2u
#define FZ_MAX_STAGES 3u

#define FZ_ERR_FRAME 0u
#define FZ_ERR_PAYLOAD 1u
#define FZ_ERR_PUBLISH 2u

/* fz_item (16 bytes, alignment 4): serial, left and hops are read and
 * written as the 16-bit word at 8 and the bytes at 10 and 11 */
#define FZ_ITEM_ID 0u
#define FZ_ITEM_CHECK 4u
#define FZ_ITEM_SERIAL 8u
#define FZ_ITEM_LEFT 10u
#define FZ_ITEM_HOPS 11u

/* fz.h struct fz_args (224 bytes); the byte tables are flattened
 * ([k-1][choice] -> 2 (k-1) + choice, [w][k-1] -> FZ_MAX_K w + k - 1). */
struct fz_args {
  uint64_t visits;
  uint64_t result;
  uint64_t done;
  uint64_t errors;
  uint64_t released[2];
  uint64_t aux_visits[2];
  ws_pool_view pool[2];
  uint seed;
  uint K;
  uint maxlen;
  uint bad_next;
  uint8_t entry_next[2];
  uint8_t next[12];
  uint8_t bound[12];
  uint8_t pub_stage[12];
  uint8_t amax[2];
  uint8_t work_count;
  uint8_t pad;
};

/* fz.h struct fz_stage_args (96 bytes, push constants). anext[3][2] and the
 * 2 pad bytes are read as two 32-bit words: push constants of 8-bit types
 * would need the storagePushConstant8 feature. */
struct fz_stage_args {
  ws_pool_view pool;
  uint64_t aux_visits;
  uint64_t released;
  uint64_t errors;
  uint seed;
  uint work;
  uint stage;
  uint stage_count;
  uint anext_lo; /* anext[0][0], [0][1], [1][0], [1][1] */
  uint anext_hi; /* anext[2][0], [2][1], pad */
};

uint fz_anext(fz_stage_args sa, uint s, uint choice) {
  const uint byte_index = 2u * s + choice;
  const uint word = byte_index < 4u ? sa.anext_lo : sa.anext_hi;
  return (word >> (8u * (byte_index & 3u))) & 0xffu;
}

uint fz_hash(uint a, uint b, uint c, uint d) {
  uint h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u);
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= c * 0xC2B2AE35u + (h >> 13);
  h *= 0x27D4EB2Fu;
  h ^= d + (h >> 15);
  h *= 0x165667B1u;
  h ^= h >> 16;
  return h;
}

uint64_t fz_mix(uint64_t digest, uint v) {
  digest ^= uint64_t(v) + 0x9E3779B97F4A7C15ul + (digest << 6) + (digest >> 2);
  return digest * 0x100000001B3ul;
}

uint fz_path_length(uint seed, uint id, uint maxlen) {
  return fz_hash(seed, id, 1u, 0u) % (maxlen != 0u ? maxlen : 1u);
}

uint fz_pub_count(uint seed, uint id, uint steps, uint w, uint bound) {
  return bound != 0u ? fz_hash(seed, id, 2u + w, steps) % (bound + 1u) : 0u;
}

uint fz_choice(uint seed, uint id, uint steps) { return fz_hash(seed, id, 7u, steps) & 1u; }

uint fz_item_check(uint id, uint serial) { return fz_hash(id, serial, 11u, 0x5EEDu); }

uint fz_item_budget(uint seed, uint w, uint id, uint serial, uint amax) {
  return fz_hash(seed ^ (w + 1u), id, 13u, serial) % (amax != 0u ? amax : 1u);
}

uint fz_item_choice(uint seed, uint w, uint id, uint serial, uint hops) {
  return fz_hash(seed ^ (w + 1u), id, 17u + hops, serial) & 1u;
}

uint fz_tag(uint id, uint steps) { return (id * 7u + steps * 3u) & 0xffu; }

#endif
