/* SPDX-License-Identifier: MIT */
/* wavesched — writing kernels in GLSL for the Vulkan backend (the twin of
 * kernel.h; see docs/vulkan.md).
 *
 * A shader file starts with `#version 460` and includes this header first.
 * ws_add_glsl_module (cmake/WsGlsl.cmake) compiles it with glslc:
 *
 *   <name>.comp       a plain kernel: WS_KERNEL(name, args_t, i, a) { ... }
 *                     and a `// ws:args_size N` line (N = sizeof the C struct)
 *   <name>.coro.comp  a coroutine: WS_FRAME(...) + continuations +
 *                     WS_COROUTINE(name, frame_t, args_t, entry, CONTS),
 *                     compiled twice: with WS_COROUTINE_STEP (one
 *                     continuation over a queue) and WS_COROUTINE_MEGA (the
 *                     megakernel).
 *
 * Everything a kernel sees of memory is a 64-bit buffer device address
 * (uint64_t), the same value ws_buffer_address() returns on the host and the
 * same bytes the C/CUDA kernels receive. GLSL reads it through
 * GL_EXT_buffer_reference blocks in the scalar layout, whose scalar
 * alignments are the natural C alignments, so a struct of scalars has the
 * same offsets as in C. Two C/GLSL differences to keep in mind:
 *  - a struct nested in another struct has no trailing padding in GLSL's
 *    scalar layout (C pads it to its alignment): give nested structs explicit
 *    padding fields so that their size is a multiple of their alignment;
 *  - GLSL vectors (vec3, uvec2...) are laid out like C structs of floats or
 *    uint32_t (alignment 4), never like C's 16-byte vector types.
 *
 * C kernel.h                       GLSL (this file)
 *   WS_PTR(uint32_t, a)[i]           WS_PTR(uint32_t, a)[i]
 *   ws_atomic_add_u32(&p[i], v)      ws_atomic_add_u32(WS_ADDR(uint32_t, p, i), v)
 *                                    or atomicAdd(WS_PTR(uint32_t, p)[i], v)
 *   const args_t *a; a->x            args_t a; a.x (args_t: WS_ARGS block)
 *   ws_item *it; it->id              ws_item it; it.id
 *   frame_t *f; f->x                 inout frame_t f; f.x
 *   CONTS X(index, fn, "name")       CONTS X(index, fn)  (GLSL has no strings)
 *
 * Shaders must not spin-wait on other invocations and should keep
 * per-invocation loops short: Mesa's lavapipe stops an invocation's loops
 * after about 65,535 iterations in total.
 */
#ifndef WAVESCHED_KERNEL_GLSL
#define WAVESCHED_KERNEL_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require
/* uint32_t, uint64_t, uint16_t, ... as in C. 64-bit integers need the
 * device's shaderInt64 feature (required by the backend); 8/16-bit types
 * and float64 need shaderInt8/shaderInt16/shaderFloat64 and the 8/16-bit
 * storage features only in shaders that use them (the backend checks the
 * SPIR-V capabilities against the device before creating a pipeline). */
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require

/* ---- launch geometry ----
 * Every wavesched shader runs with local_size_x = the launch's block size
 * (specialization constant 0) and learns which invocations are real from
 * the dispatch itself, so that a plain kernel keeps all 128 bytes of push
 * constants for its arguments. A launch of n invocations in G = ceil(n / B)
 * groups of B is recorded as ceil(G / WS_CHUNK_GROUPS) vkCmdDispatchBase
 * calls; chunk c covers groups [c * WS_CHUNK_GROUPS, ...) and is dispatched
 * with baseGroup = (0, pad_c, c) and groupCount = (g_c, 1, 1), where pad_c = 0
 * except in the last chunk, whose last group has pad = G * B - n surplus
 * invocations (pad < B). So gl_WorkGroupID.z is the chunk, gl_WorkGroupID.y
 * its pad. The host side is vk_record_dispatch (src/backend/vulkan/vk_stream.c). */
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WS_CHUNK_GROUPS = 32768u;
/* Specialization constant 2: the launch's invocation count when the launch
 * is an indirect dispatch (the Vulkan device loop's stage kernels: no base
 * group carries the pad there), 0 otherwise. */
layout(constant_id = 2) const uint WS_INVOCATIONS = 0u;
/* Specialization constant 2046 (the largest id glslang accepts, so that it
 * stays clear of ids a shader numbers from 0; ids 0, 1, 2 and 2046 are the
 * library's): the continuation a coroutine's step pipeline was specialized
 * for, or 0xffffffff (not specialized: the generic step, which runs the
 * continuation the launch names, WS_LAUNCH.src). When set, the step shader
 * runs this continuation whatever WS_LAUNCH.src says (the backend sets both
 * alike), and the driver folds the resume switch to that one case, so a
 * light continuation's pipeline no longer carries the registers and code of
 * the heaviest one (docs/vulkan.md, "Launches"). The megakernel is never
 * specialized. A continuation may read it (tests do), but must not depend on
 * it for results: specialization is a backend choice (WS_VULKAN_SPECIALIZE). */
layout(constant_id = 2046) const uint WS_SPEC_SRC = 0xffffffffu;

/* Sets i to this invocation's launch index; false for the surplus
 * invocations of the last group, which must do nothing observable (they may
 * still take part in barriers). */
bool ws_invocation_index(out uint i) {
  i = (gl_WorkGroupID.z * WS_CHUNK_GROUPS + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
      gl_LocalInvocationID.x;
  if (WS_INVOCATIONS != 0u)
    return i < WS_INVOCATIONS;
  return !(gl_WorkGroupID.x == gl_NumWorkGroups.x - 1u &&
           gl_LocalInvocationID.x >= gl_WorkGroupSize.x - gl_WorkGroupID.y);
}

/* ---- the launch record (include/wavesched/launch.h) ----
 * Offsets mirror struct ws_launch; launch.h and the Vulkan backend pin the
 * C side with _Static_asserts on the same numbers, and glslang rejects an
 * explicit offset that misaligns a member (it does not catch overlaps: the
 * C-side asserts do). */
#define WS_LAYOUT_AOS 0u
#define WS_LAYOUT_SOA 1u
#define WS_LAUNCH_FUSED 1u
#define WS_LAUNCH_SCAN 4u
#define WS_TERMINATE 0u

#define WS_LAUNCH_BLOCK_                                                                   \
  layout(push_constant, scalar) uniform ws_launch_pc_ {                                    \
    layout(offset = 0) uint64_t args;                                                      \
    layout(offset = 8) uint64_t frames;                                                    \
    layout(offset = 16) uint64_t field_offsets;                                            \
    layout(offset = 24) uint64_t ids;                                                      \
    layout(offset = 32) uint64_t tokens;                                                   \
    layout(offset = 40) uint64_t slots;                                                    \
    layout(offset = 48) uint64_t counts;                                                   \
    layout(offset = 56) uint count;                                                        \
    layout(offset = 60) uint capacity;                                                     \
    layout(offset = 64) uint first_id;                                                     \
    layout(offset = 68) uint src;                                                          \
    layout(offset = 72) uint slot_base;                                                    \
    layout(offset = 76) uint layout_;                                                      \
    layout(offset = 80) uint flags;                                                        \
    layout(offset = 84) uint continuation_count;                                           \
    layout(offset = 88) uint64_t plan;                                                     \
    layout(offset = 96) uint64_t limit;                                                    \
  } WS_LAUNCH;

/* Logical item as a continuation sees it: never the slot. */
struct ws_item {
  uint id;
};

/* ---- typed access to device addresses ----
 * For every supported type T: WS_SIZEOF(T), WS_ALIGNOF(T) (C's sizeof and
 * _Alignof), WS_ZERO(T) (a zero value), WS_REF(T)(addr).v (one T at addr)
 * and WS_PTR(T, addr)[i] (an array of T at addr). `uint`, `int` and `float`
 * are spelled either way.
 *
 * Any other type (a struct used as a frame field, say) is declared the same
 * way, with three defines and one macro:
 *   struct t_pair { uint8_t a; uint8_t b; uint16_t c; };   // C: 4 bytes, align 2
 *   #define WS_SIZEOF_t_pair 4u
 *   #define WS_ALIGNOF_t_pair 2u
 *   #define WS_ZERO_t_pair t_pair(uint8_t(0), uint8_t(0), uint16_t(0))
 *   WS_DECLARE_TYPE(t_pair, 2)
 */
#define WS_SIZEOF(T) WS_SIZEOF_##T
#define WS_ALIGNOF(T) WS_ALIGNOF_##T
#define WS_ZERO(T) WS_ZERO_##T
#define WS_REF(T) ws_ref_##T
#define WS_PTR(T, addr) ws_array_##T(addr).v
/* Address of element i of an array of T at addr. */
#define WS_ADDR(T, addr, i) ((addr) + uint64_t(i) * uint64_t(WS_SIZEOF(T)))

/* The reference types of T: addresses of T must be multiples of `align`. */
#define WS_DECLARE_TYPE(T, align)                                                          \
  layout(buffer_reference, scalar, buffer_reference_align = align) buffer ws_ref_##T {     \
    T v;                                                                                   \
  };                                                                                       \
  layout(buffer_reference, scalar, buffer_reference_align = align) buffer ws_array_##T {   \
    T v[];                                                                                 \
  };

/* Sizes and alignments are C's for the corresponding C type (uint16_t,
 * double, a struct of 3 floats for vec3, ...). Declaring a reference type
 * costs nothing: SPIR-V only carries the types a shader uses. */
#define WS_SIZEOF_uint32_t 4u
#define WS_ALIGNOF_uint32_t 4u
#define WS_ZERO_uint32_t 0u
#define WS_SIZEOF_int32_t 4u
#define WS_ALIGNOF_int32_t 4u
#define WS_ZERO_int32_t 0
#define WS_SIZEOF_float 4u
#define WS_ALIGNOF_float 4u
#define WS_ZERO_float 0.0
#define WS_SIZEOF_uint64_t 8u
#define WS_ALIGNOF_uint64_t 8u
#define WS_ZERO_uint64_t 0ul
#define WS_SIZEOF_int64_t 8u
#define WS_ALIGNOF_int64_t 8u
#define WS_ZERO_int64_t 0l
#define WS_SIZEOF_double 8u
#define WS_ALIGNOF_double 8u
#define WS_ZERO_double 0.0lf
#define WS_SIZEOF_uint16_t 2u
#define WS_ALIGNOF_uint16_t 2u
#define WS_ZERO_uint16_t uint16_t(0)
#define WS_SIZEOF_int16_t 2u
#define WS_ALIGNOF_int16_t 2u
#define WS_ZERO_int16_t int16_t(0)
#define WS_SIZEOF_float16_t 2u
#define WS_ALIGNOF_float16_t 2u
#define WS_ZERO_float16_t float16_t(0)
#define WS_SIZEOF_uint8_t 1u
#define WS_ALIGNOF_uint8_t 1u
#define WS_ZERO_uint8_t uint8_t(0)
#define WS_SIZEOF_int8_t 1u
#define WS_ALIGNOF_int8_t 1u
#define WS_ZERO_int8_t int8_t(0)
#define WS_SIZEOF_vec2 8u
#define WS_ALIGNOF_vec2 4u
#define WS_ZERO_vec2 vec2(0)
#define WS_SIZEOF_vec3 12u
#define WS_ALIGNOF_vec3 4u
#define WS_ZERO_vec3 vec3(0)
#define WS_SIZEOF_vec4 16u
#define WS_ALIGNOF_vec4 4u
#define WS_ZERO_vec4 vec4(0)
#define WS_SIZEOF_uvec2 8u
#define WS_ALIGNOF_uvec2 4u
#define WS_ZERO_uvec2 uvec2(0)
#define WS_SIZEOF_uvec3 12u
#define WS_ALIGNOF_uvec3 4u
#define WS_ZERO_uvec3 uvec3(0)
#define WS_SIZEOF_uvec4 16u
#define WS_ALIGNOF_uvec4 4u
#define WS_ZERO_uvec4 uvec4(0)
#define WS_SIZEOF_ivec2 8u
#define WS_ALIGNOF_ivec2 4u
#define WS_ZERO_ivec2 ivec2(0)
#define WS_SIZEOF_ivec3 12u
#define WS_ALIGNOF_ivec3 4u
#define WS_ZERO_ivec3 ivec3(0)
#define WS_SIZEOF_ivec4 16u
#define WS_ALIGNOF_ivec4 4u
#define WS_ZERO_ivec4 ivec4(0)
/* the GLSL spellings of the 32-bit types */
#define WS_SIZEOF_uint 4u
#define WS_ALIGNOF_uint 4u
#define WS_ZERO_uint 0u
#define WS_SIZEOF_int 4u
#define WS_ALIGNOF_int 4u
#define WS_ZERO_int 0
#define WS_SIZEOF_float32_t 4u
#define WS_ALIGNOF_float32_t 4u
#define WS_ZERO_float32_t 0.0
#define ws_ref_uint ws_ref_uint32_t
#define ws_array_uint ws_array_uint32_t
#define ws_ref_int ws_ref_int32_t
#define ws_array_int ws_array_int32_t
#define ws_ref_float32_t ws_ref_float
#define ws_array_float32_t ws_array_float

WS_DECLARE_TYPE(uint32_t, 4)
WS_DECLARE_TYPE(int32_t, 4)
WS_DECLARE_TYPE(float, 4)
WS_DECLARE_TYPE(uint64_t, 8)
WS_DECLARE_TYPE(int64_t, 8)
WS_DECLARE_TYPE(double, 8)
WS_DECLARE_TYPE(uint16_t, 2)
WS_DECLARE_TYPE(int16_t, 2)
WS_DECLARE_TYPE(float16_t, 2)
WS_DECLARE_TYPE(uint8_t, 1)
WS_DECLARE_TYPE(int8_t, 1)
WS_DECLARE_TYPE(vec2, 4)
WS_DECLARE_TYPE(vec3, 4)
WS_DECLARE_TYPE(vec4, 4)
WS_DECLARE_TYPE(uvec2, 4)
WS_DECLARE_TYPE(uvec3, 4)
WS_DECLARE_TYPE(uvec4, 4)
WS_DECLARE_TYPE(ivec2, 4)
WS_DECLARE_TYPE(ivec3, 4)
WS_DECLARE_TYPE(ivec4, 4)

/* An array of a user struct at a device address:
 *   struct reg_item { uint id; uint tag; uint pending; uint reserved; };
 *   WS_DECLARE_ARRAY(reg_items, reg_item, 4)
 *   reg_items(addr).v[slot].tag
 * The array stride is the struct size rounded up to its alignment, as in C. */
#define WS_DECLARE_ARRAY(name, T, align)                                                   \
  layout(buffer_reference, scalar, buffer_reference_align = align) buffer name {           \
    T v[];                                                                                 \
  };

/* The user argument block of a coroutine, read through its device address
 * (ws_launch.args). Declare it like a struct, same fields as the C struct:
 *   WS_ARGS(demo_args) { uint64_t out_hash; uint64_t steps; };
 * Device addresses inside may also be declared as buffer_reference types
 * (8 bytes, like uint64_t). */
#define WS_ARGS(name)                                                                      \
  layout(buffer_reference, scalar, buffer_reference_align = 8) readonly buffer name

uint ws_align_up(uint x, uint a) { return (x + a - 1u) / a * a; }

/* kernel.h's ws_hash32, bit for bit: lowbias32 (Wellons) */
uint ws_hash32(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* ---- atomics on device addresses (relaxed, device scope). Kernels that
 * need ordering across launches get it from stream order, never from
 * fences inside a launch. GLSL's own atomicAdd(WS_PTR(T, p)[i], v) works as
 * well; these take an address, like kernel.h's take a pointer. ---- */
uint ws_atomic_add_u32(uint64_t addr, uint v) { return atomicAdd(ws_ref_uint32_t(addr).v, v); }
uint ws_atomic_sub_u32(uint64_t addr, uint v) { return atomicAdd(ws_ref_uint32_t(addr).v, 0u - v); }
int ws_atomic_add_i32(uint64_t addr, int v) { return atomicAdd(ws_ref_int32_t(addr).v, v); }
uint ws_atomic_max_u32(uint64_t addr, uint v) { return atomicMax(ws_ref_uint32_t(addr).v, v); }

/* Warp-aggregated atomics (kernel.h ws_atomic_add_u32_agg). When every
 * active invocation of the subgroup names the same word (counters, a pool's
 * words: the case aggregation is for), one atomic for all of them, each
 * getting the old value plain atomics in invocation order would have given
 * it. Invocations naming several words use plain atomics: the loop that
 * combined them per word (by subgroup arithmetic, and by ballots) returned
 * overlapping old values on lavapipe once a subgroup held several words,
 * while totals stayed right (tests/core/test_atomics.c, core_atomics_vulkan;
 * docs/decisions.md). A form that read the peers' values by broadcast
 * passed that test in session 9 but was taken out again: its loops spend
 * lavapipe's per-invocation loop budget, and a megakernel item calling it
 * in each of 1,000 continuations stopped early without a word
 * (bad_input_vulkan, test_endless_item); a primitive that user code calls
 * in its own loops must not loop. */
uint ws_atomic_add_u32_agg(uint64_t addr, uint v) {
  const uvec2 a = unpackUint2x32(addr);
  if (!subgroupAllEqual(a.x) || !subgroupAllEqual(a.y))
    return atomicAdd(ws_ref_uint32_t(addr).v, v);
  const uint below = subgroupExclusiveAdd(v);
  const uint total = subgroupAdd(v);
  uint base = 0u;
  if (subgroupElect())
    base = atomicAdd(ws_ref_uint32_t(addr).v, total);
  return subgroupBroadcastFirst(base) + below;
}
int ws_atomic_add_i32_agg(uint64_t addr, int v) { return int(ws_atomic_add_u32_agg(addr, uint(v))); }

/* Fused accounting's count updates for one frame (kernel.h ws_fused_count_,
 * internal): counts[src] -= 1 unless src is 0, counts[next] += 1 unless
 * next is WS_TERMINATE, with one atomic per distinct word per subgroup.
 * src is the launch's, the same in the whole subgroup; next differs across
 * a divergent step's invocations, where ws_atomic_add_u32_agg would fall
 * back to one atomic per frame on the K + 1 count words (one sector), so
 * each pass of the loop here combines the invocations that share the first
 * active invocation's next (queue.glsl's ws_queue_global_add loop) and adds
 * their number once. Only totals matter and no old value is returned: the
 * loop's ranked form is what lavapipe got wrong (above), its totals never
 * were (session 9; measured on an H100 in session 17, where it made fused
 * accounting Vulkan's default: docs/decisions.md). Unlike ws_atomic_add_u32_agg it
 * may loop: the step calls it once per frame, outside any loop of the
 * user's code, so it cannot drain lavapipe's loop budget (above). */
void ws_fused_count_(uint64_t counts, uint src, uint next) {
  if (src != 0u)
    ws_atomic_add_u32_agg(WS_ADDR(uint32_t, counts, src), 0xffffffffu);
  if (next != WS_TERMINATE) {
    for (;;) {
      if (next == subgroupBroadcastFirst(next)) {
        const uint peers = subgroupBallotBitCount(subgroupBallot(true));
        if (subgroupElect())
          atomicAdd(ws_ref_uint32_t(WS_ADDR(uint32_t, counts, next)).v, peers);
        break;
      }
    }
  }
}
uint ws_atomic_exch_u32(uint64_t addr, uint v) { return atomicExchange(ws_ref_uint32_t(addr).v, v); }
uint ws_atomic_cas_u32(uint64_t addr, uint expect, uint v) {
  return atomicCompSwap(ws_ref_uint32_t(addr).v, expect, v);
}
/* A compare-and-swap retry, not a wait: each round some invocation's swap
 * succeeds, so it needs no progress from invocations that are not running
 * (no float atomics feature is required). */
float ws_atomic_add_f32(uint64_t addr, float v) {
  uint old = ws_ref_uint32_t(addr).v;
  for (;;) {
    const uint seen = atomicCompSwap(ws_ref_uint32_t(addr).v, old, floatBitsToUint(uintBitsToFloat(old) + v));
    if (seen == old)
      return uintBitsToFloat(old);
    old = seen;
  }
  return 0.0;
}

/* ---- frames ----
 * FIELDS(X) lists X(type, name) in the order of the C WS_FRAME list, with
 * the GLSL twin of each C type (uint32_t -> uint32_t or uint, float ->
 * float, uint16_t -> uint16_t, a struct of 3 floats -> vec3, a C struct ->
 * a GLSL struct declared as shown under "typed access"). The macros
 * generate
 *   struct tname;                      the frame as a local value
 *   tname tname_ws_zero()             all fields 0 (the entry's frame)
 *   uint tname_ws_size()              sizeof the C struct (AoS record)
 *   tname tname_ws_load(frames, field_offsets, layout, slot)
 *   void tname_ws_store(f, frames, field_offsets, layout, slot)
 * AoS: record s is at frames + s * size, fields at C's offsets (each at the
 * next multiple of its alignment). SoA: field k of slot s is at
 * frames + field_offsets[k] + s * WS_SIZEOF(type) (the host orders the
 * arrays by decreasing alignment, so every access is aligned). */
#define WS_FRAME_DECL_(T, name) T name;
#define WS_FRAME_ZERO_(T, name) f.name = WS_ZERO(T);
#define WS_FRAME_SIZE_(T, name)                                                            \
  o = ws_align_up(o, WS_ALIGNOF(T)) + WS_SIZEOF(T);                                         \
  al = max(al, WS_ALIGNOF(T));
#define WS_FRAME_AOS_LOAD_(T, name)                                                        \
  o = ws_align_up(o, WS_ALIGNOF(T));                                                       \
  f.name = WS_REF(T)(base + o).v;                                                          \
  o += WS_SIZEOF(T);
#define WS_FRAME_AOS_STORE_(T, name)                                                       \
  o = ws_align_up(o, WS_ALIGNOF(T));                                                       \
  WS_REF(T)(base + o).v = f.name;                                                          \
  o += WS_SIZEOF(T);
#define WS_FRAME_SOA_LOAD_(T, name)                                                        \
  f.name = WS_PTR(T, frames + WS_PTR(uint64_t, field_offsets)[k])[slot];                   \
  ++k;
#define WS_FRAME_SOA_STORE_(T, name)                                                       \
  WS_PTR(T, frames + WS_PTR(uint64_t, field_offsets)[k])[slot] = f.name;                   \
  ++k;

#define WS_FRAME(tname, FIELDS)                                                            \
  struct tname {                                                                           \
    FIELDS(WS_FRAME_DECL_)                                                                 \
  };                                                                                       \
  tname tname##_ws_zero() {                                                                \
    tname f;                                                                               \
    FIELDS(WS_FRAME_ZERO_)                                                                 \
    return f;                                                                              \
  }                                                                                        \
  uint tname##_ws_size() {                                                                 \
    uint o = 0u;                                                                           \
    uint al = 1u;                                                                          \
    FIELDS(WS_FRAME_SIZE_)                                                                 \
    return ws_align_up(o, al);                                                             \
  }                                                                                        \
  tname tname##_ws_load(uint64_t frames, uint64_t field_offsets, uint layout_, uint slot) { \
    tname f;                                                                               \
    if (layout_ == WS_LAYOUT_AOS) {                                                        \
      const uint64_t base = frames + uint64_t(slot) * uint64_t(tname##_ws_size());         \
      uint o = 0u;                                                                         \
      FIELDS(WS_FRAME_AOS_LOAD_)                                                           \
    } else {                                                                               \
      uint k = 0u;                                                                         \
      FIELDS(WS_FRAME_SOA_LOAD_)                                                           \
    }                                                                                      \
    return f;                                                                              \
  }                                                                                        \
  void tname##_ws_store(tname f, uint64_t frames, uint64_t field_offsets, uint layout_,    \
                        uint slot) {                                                       \
    if (layout_ == WS_LAYOUT_AOS) {                                                        \
      const uint64_t base = frames + uint64_t(slot) * uint64_t(tname##_ws_size());         \
      uint o = 0u;                                                                         \
      FIELDS(WS_FRAME_AOS_STORE_)                                                          \
    } else {                                                                               \
      uint k = 0u;                                                                         \
      FIELDS(WS_FRAME_SOA_STORE_)                                                          \
    }                                                                                      \
  }

/* ---- coroutines ----
 * A continuation is `uint fn(ws_item it, inout frame_t f, args_t a)` and
 * returns the index (1..K) of the continuation to suspend to, or
 * WS_TERMINATE. CONTS is an X-macro list X(index, fn) in index order 1..K;
 * indices are unsigned constants (`#define DEMO_MIX 1u` or `const uint`). */
/* A stepped continuation (kernel.h "stepped continuations"):
 * `void begin(ws_item, frame_t, args_t, out state_t)`, `bool step(inout
 * state_t, args_t)` (true: call again), `uint end(ws_item, inout frame_t,
 * args_t, state_t)`. Here fn is the loop begin, steps, end, as on the CPU;
 * the lane refill is CUDA's. */
#define WS_CONTINUATION_STEPS(fn, tframe, targs, src, tstate, begin, step, end)            \
  uint fn(ws_item it_, inout tframe f_, targs a_) {                                        \
    tstate s_;                                                                             \
    begin(it_, f_, a_, s_);                                                                \
    while (step(s_, a_)) {                                                                 \
    }                                                                                      \
    return end(it_, f_, a_, s_);                                                           \
  }
/* kernel.h WS_CONTINUATION_STEPS_OF: fn is the caller's one-call form, which
 * is what runs here; the steps are CUDA's only. */
#define WS_CONTINUATION_STEPS_OF(fn, tframe, targs, src, tstate, begin, step, end)
#define WS_CORO_CASE_(idx, fn)                                                             \
  case (idx):                                                                              \
    next_ = fn(it_, f_, a_);                                                               \
    break;
#define WS_CORO_COUNT_(idx, fn) +1u

/* Runs continuation `src` (0 = entry) for one frame. An index outside 1..K is
 * an invalid transition: the item terminates and the error word counts it
 * (the host reports it at the next synchronization). K is the smaller of the
 * compiled list and the launch's continuation_count (limit_), as in kernel.h:
 * a host description shorter than the shader cannot index past counts[]. */
#define WS_CORO_RESUME_(co, tframe, targs, entry_fn, CONTS)                                \
  uint co##_ws_resume(uint src_, ws_item it_, inout tframe f_, targs a_, uint64_t err_,    \
                      uint limit_) {                                                       \
    uint next_ = WS_TERMINATE;                                                             \
    switch (src_) {                                                                        \
    case 0u:                                                                               \
      next_ = entry_fn(it_, f_, a_);                                                       \
      break;                                                                               \
      CONTS(WS_CORO_CASE_)                                                                 \
    default:                                                                               \
      break;                                                                               \
    }                                                                                      \
    if (next_ > (0u CONTS(WS_CORO_COUNT_)) || next_ > limit_) {                            \
      ws_atomic_add_u32(err_, 1u);                                                         \
      next_ = WS_TERMINATE;                                                                \
    }                                                                                      \
    return next_;                                                                          \
  }

/* Step kernel: continuation WS_LAUNCH.src (WS_SPEC_SRC in a pipeline
 * specialized for one continuation) over WS_LAUNCH.count frames (the
 * entry over new items first_id.. when src == 0). Same semantics as
 * kernel.h's co_ws_step: slot from the slot list or slot_base + i; the entry
 * starts from a zero frame and records the id; the frame is stored only when
 * the item suspends; the token is always written; fused accounting updates
 * the counts here.
 *
 * Driven by a device loop (WS_LAUNCH.plan != 0, the Vulkan device loop's
 * indirect dispatches), the launch reads its frames from the plan the
 * decide shader wrote this iteration (launch.h ws_launch_plan, as kernel.h's
 * co_ws_dev_at / co_ws_dev_count do): the plan's count when it names this
 * continuation, every frame of the queue under the all-queues policy, none
 * otherwise; the decide shader sizes the indirect dispatch to one invocation
 * per frame (base group 0, so the index is the plain global one). A launch
 * whose src is WS_PLAN_SRC_ANY (the generic step, never a specialized one)
 * runs the plan's continuation, whichever it is: the device loop's one step
 * dispatch under the greedy policy (WS_VULKAN_LOOP_STEPS=one, vk_loop.c),
 * where an iteration runs at most one continuation. */
layout(buffer_reference, scalar, buffer_reference_align = 4) readonly buffer ws_launch_plan_ref {
  uint action;
  uint src;
  uint count;
  uint first_id;
  uint slot_base;
  uint use_slots;
  uint slot_offset;
};
#define WS_PLAN_REFILL 1u
#define WS_PLAN_RESUME 2u
#define WS_PLAN_RESUME_ALL 3u
#define WS_PLAN_SRC_ANY 0xffffffffu
#define WS_CORO_STEP_MAIN_(co, tframe, targs)                                              \
  /* the step's continuation: the specialization's, a constant the driver                  \
   * folds every test of src below with, else the launch's */                              \
  uint co##_ws_src() { return WS_SPEC_SRC != 0xffffffffu ? WS_SPEC_SRC : WS_LAUNCH.src; }  \
  void co##_ws_run(uint src, uint slot, uint id) {                                         \
    ws_item it;                                                                            \
    tframe f;                                                                              \
    if (src == 0u) {                                                                       \
      f = tframe##_ws_zero();                                                              \
      it.id = id;                                                                          \
      WS_PTR(uint32_t, WS_LAUNCH.ids)[slot] = it.id;                                       \
    } else {                                                                               \
      it.id = WS_PTR(uint32_t, WS_LAUNCH.ids)[slot];                                       \
      f = tframe##_ws_load(WS_LAUNCH.frames, WS_LAUNCH.field_offsets, WS_LAUNCH.layout_, slot); \
    }                                                                                      \
    const uint64_t counts = WS_LAUNCH.counts;                                              \
    const uint next = co##_ws_resume(src, it, f, targs(WS_LAUNCH.args),                    \
                                     WS_ADDR(uint32_t, counts, WS_LAUNCH.continuation_count + 1u), \
                                     WS_LAUNCH.continuation_count);                        \
    if (next != WS_TERMINATE)                                                              \
      tframe##_ws_store(f, WS_LAUNCH.frames, WS_LAUNCH.field_offsets, WS_LAUNCH.layout_, slot); \
    WS_PTR(uint32_t, WS_LAUNCH.tokens)[slot] = next;                                       \
    if ((WS_LAUNCH.flags & WS_LAUNCH_FUSED) != 0u)                                         \
      ws_fused_count_(counts, src, next); /* one atomic per distinct queue per subgroup */ \
  }                                                                                        \
  /* Scan mode (WS_LAUNCH_SCAN on the host loop's launch; a plan whose          \
   * use_slots is 2 in the device loop): the launch is one invocation per slot    \
   * below the scan bound, and each workgroup first lists its own slots whose    \
   * token is src in shared memory, so that its first invocations run them       \
   * together (kernel.h's CUDA scan does the same per block). Each slot is read  \
   * by exactly one invocation before any frame of the workgroup runs, and       \
   * workgroups own disjoint slots, so a frame that suspends to src again is     \
   * not run twice. A resume adds the frames it ran to counts[K + 3], which the  \
   * decisions check against the count they trusted. The device loop's refill    \
   * (src 0, loop.comp) scans for free slots (token 0) and hands out count       \
   * tickets from counts[K + 4], zeroed by the decide shader: ticket t runs      \
   * item first_id + t in the slot that drew it, and free slots past the         \
   * count stay free. */                                                         \
  shared uint co##_ws_scan_slot_[gl_WorkGroupSize.x];                                      \
  shared uint co##_ws_scan_found_;                                                         \
  shared uint co##_ws_scan_ticket_;                                                        \
  /* one call of co_ws_run, outside any loop, in every mode: drivers         \
   * inline it, so the shader stays the host-driven step plus a few loads   \
   * (a second inlined copy of a large coroutine costs compile time) */     \
  void main() {                                                                            \
    uint i, n, base = 0u, slot_base, first;                                                \
    uint64_t slots;                                                                        \
    bool scan, real = true;                                                                \
    uint src = co##_ws_src();                                                              \
    if (WS_LAUNCH.plan != 0ul) {                                                           \
      ws_launch_plan_ref pl = ws_launch_plan_ref(WS_LAUNCH.plan);                          \
      n = 0u;                                                                              \
      if (pl.action == WS_PLAN_RESUME_ALL) {                                               \
        /* queue src's slots follow queues 1..src-1 in the sorted list (a              \
         * WS_PLAN_SRC_ANY launch is never recorded for this policy: none) */          \
        if (src != 0u && src <= WS_LAUNCH.continuation_count) {                            \
          n = WS_PTR(uint32_t, WS_LAUNCH.counts)[src];                                     \
          for (uint t = 1u; t < src; ++t)                                                  \
            base += WS_PTR(uint32_t, WS_LAUNCH.counts)[t];                                 \
        }                                                                                  \
      } else if ((pl.action == WS_PLAN_REFILL || pl.action == WS_PLAN_RESUME) &&           \
                 (pl.src == src || src == WS_PLAN_SRC_ANY)) {                              \
        /* only when ANY: a specialized step's src stays the constant it folds */     \
        if (src == WS_PLAN_SRC_ANY)                                                        \
          src = pl.src;                                                                    \
        n = pl.count;                                                                      \
        base = pl.slot_offset;                                                             \
      }                                                                                    \
      const bool listed = pl.action == WS_PLAN_RESUME_ALL || pl.use_slots != 0u;           \
      slots = listed ? WS_LAUNCH.slots : 0ul;                                              \
      slot_base = pl.slot_base;                                                            \
      first = pl.first_id;                                                                 \
      scan = n != 0u && pl.action != WS_PLAN_RESUME_ALL && pl.use_slots == 2u;             \
      i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;                  \
    } else {                                                                               \
      scan = (WS_LAUNCH.flags & WS_LAUNCH_SCAN) != 0u;                                     \
      /* a scanning workgroup's surplus invocations still reach its barriers */            \
      real = ws_invocation_index(i);                                                       \
      if (!real && !scan)                                                                  \
        return;                                                                            \
      n = WS_LAUNCH.count;                                                                 \
      slots = WS_LAUNCH.slots;                                                             \
      slot_base = WS_LAUNCH.slot_base;                                                     \
      first = WS_LAUNCH.first_id;                                                          \
    }                                                                                      \
    bool run;                                                                              \
    uint slot = 0u, id = 0u;                                                               \
    if (scan) { /* uniform: every invocation of the launch takes this branch */            \
      const uint lane = gl_LocalInvocationID.x;                                            \
      if (lane == 0u)                                                                      \
        co##_ws_scan_found_ = 0u;                                                          \
      barrier();                                                                           \
      if (real && i < slot_base && WS_PTR(uint32_t, WS_LAUNCH.tokens)[i] == src)           \
        co##_ws_scan_slot_[atomicAdd(co##_ws_scan_found_, 1u)] = i;                        \
      barrier();                                                                           \
      const uint found = co##_ws_scan_found_;                                              \
      const uint K = WS_LAUNCH.continuation_count;                                         \
      if (lane == 0u && found != 0u)                                                       \
        co##_ws_scan_ticket_ =                                                             \
            atomicAdd(ws_ref_uint32_t(WS_ADDR(uint32_t, WS_LAUNCH.counts,                   \
                                              src == 0u ? K + 4u : K + 3u)).v, found);     \
      barrier();                                                                           \
      const uint ticket = co##_ws_scan_ticket_ + lane;                                     \
      run = lane < found && (src != 0u || ticket < n);                                     \
      if (run) {                                                                           \
        slot = co##_ws_scan_slot_[lane];                                                   \
        id = first + ticket;                                                               \
      }                                                                                    \
    } else {                                                                               \
      run = i < n;                                                                         \
      if (run) {                                                                           \
        slot = slots != 0ul ? WS_PTR(uint32_t, slots)[base + i] : slot_base + i;           \
        id = first + i;                                                                    \
      }                                                                                    \
    }                                                                                      \
    if (run)                                                                               \
      co##_ws_run(src, slot, id);                                                          \
  }

/* Megakernel: item first_id + i runs the entry, then its own continuations
 * until it terminates, or until it ran WS_LAUNCH.limit of them (then it is
 * counted in counts[K + 2] and stops). No pool, no tokens. */
#define WS_CORO_MEGA_MAIN_(co, tframe, targs)                                              \
  void main() {                                                                            \
    uint i;                                                                                \
    if (!ws_invocation_index(i) || i >= WS_LAUNCH.count)                                   \
      return;                                                                              \
    const uint64_t err = WS_ADDR(uint32_t, WS_LAUNCH.counts, WS_LAUNCH.continuation_count + 1u); \
    tframe f = tframe##_ws_zero();                                                         \
    ws_item it;                                                                            \
    it.id = WS_LAUNCH.first_id + i;                                                        \
    uint next = 0u;                                                                        \
    uint64_t runs = 0ul;                                                                   \
    do {                                                                                   \
      if (WS_LAUNCH.limit != 0ul && runs == WS_LAUNCH.limit) {                             \
        ws_atomic_add_u32(WS_ADDR(uint32_t, WS_LAUNCH.counts, WS_LAUNCH.continuation_count + 2u), 1u); \
        break;                                                                             \
      }                                                                                    \
      next = co##_ws_resume(next, it, f, targs(WS_LAUNCH.args), err,                       \
                            WS_LAUNCH.continuation_count);                                 \
      runs += 1ul;                                                                         \
    } while (next != WS_TERMINATE);                                                        \
  }

#if defined(WS_COROUTINE_MEGA)
#define WS_CORO_MAIN_ WS_CORO_MEGA_MAIN_
#else
#define WS_CORO_MAIN_ WS_CORO_STEP_MAIN_
#endif

/* The coroutine of a `<co>.coro.comp` file: the module entry is named after
 * the file, `co` only names the generated functions. */
#define WS_COROUTINE(co, tframe, targs, entry_fn, CONTS)                                   \
  WS_LAUNCH_BLOCK_                                                                         \
  WS_CORO_RESUME_(co, tframe, targs, entry_fn, CONTS)                                      \
  WS_CORO_MAIN_(co, tframe, targs)

/* ---- plain kernels ----
 *   struct vadd_args { uint64_t x; uint64_t y; uint n; uint pad; };  // as in C
 *   WS_KERNEL(vadd, vadd_args, i, a) { WS_PTR(float, a.y)[i] += WS_PTR(float, a.x)[i]; }
 * The argument struct arrives by value in push constants (up to 128 bytes,
 * scalar layout = C offsets); the body runs for i < n, n being the count
 * given to ws_kernel_launch. */
#define WS_KERNEL(name, targs, ivar, avar)                                                 \
  layout(push_constant, scalar) uniform name##_ws_pc_ {                                    \
    targs args;                                                                            \
  } name##_ws_pc;                                                                          \
  void name##_ws_body(uint ivar, targs avar);                                              \
  void main() {                                                                            \
    uint i_;                                                                               \
    if (ws_invocation_index(i_))                                                           \
      name##_ws_body(i_, name##_ws_pc.args);                                               \
  }                                                                                        \
  void name##_ws_body(uint ivar, targs avar)

/* A stepped plain kernel (kernel.h WS_KERNEL_STEPS): `bool begin(uint i,
 * targs a, out tstate s)` (false: nothing to do for i), `bool step(inout
 * tstate s, targs a)`, `void end(uint i, targs a, tstate s)`; here each
 * index is the loop. */
#define WS_KERNEL_STEPS(name, targs, tstate, begin, step, end)                             \
  WS_KERNEL(name, targs, i_, a_) {                                                         \
    tstate s_;                                                                             \
    if (begin(i_, a_, s_)) {                                                               \
      while (step(s_, a_)) {                                                               \
      }                                                                                    \
      end(i_, a_, s_);                                                                     \
    }                                                                                      \
  }

#endif
