/* SPDX-License-Identifier: MIT */
/* vk_phases — what the pieces of one Vulkan device-loop iteration cost: a
 * pipeline barrier (three sets of masks) against a one-group dispatch, an
 * indirect dispatch of zero or one group, a pipeline bind with push
 * constants, a decide-then-dispatch mini iteration, in a primary or a
 * secondary command buffer (the device loop runs from a secondary one).
 * Not part of the build:
 *   glslc -O --target-env=vulkan1.2 -o vk_phases.spv bench/probes/vk_phases.comp
 *   cc -O2 -std=c11 -o vk_phases bench/probes/vk_phases.c -lvulkan
 *   ./vk_phases [vk_phases.spv]
 * Environment: PROBE_DEVICE (physical device index; default the first
 * discrete GPU, else 0), PROBE_T (iterations per command buffer, default 256).
 * Each pattern's T iterations are recorded into one command buffer, which is
 * submitted and waited for 6 times; the first is discarded, the median of the
 * rest is the pattern's time. Output per pattern: µs per iteration, i.e.
 * (median - median of an empty command buffer) / T, and the median itself.
 * Patterns without a barrier between dispatches that write the same words
 * race on purpose: only the time matters, not the counts.
 */
#define _POSIX_C_SOURCE 199309L
#define PROBE_NAME "vk_phases"
#include "vk_probe.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 6
#define CONTROL_WORDS 4096u   /* the shader's control region; work follows */
#define WORK_WORDS (1u << 20) /* dispatchN's n */
#define IND0 (1024u * 4u)     /* byte offset of the zero-group indirect command */
#define IND1 (1028u * 4u)     /* byte offset of the one-group indirect command */

static VkDevice dev;
static VkQueue queue;
static VkFence fence;
static VkCommandBuffer prim, sec;
static VkPipelineLayout layout;
static VkPipeline pipe[2]; /* identical pipelines, so binding the other is a real change */
static VkDescriptorSet set;
static VkBuffer buf;
/* VK_EXT_conditional_rendering, when the device has it (the cond patterns
 * are skipped otherwise) */
static PFN_vkCmdBeginConditionalRenderingEXT cond_begin;
static PFN_vkCmdEndConditionalRenderingEXT cond_end;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                    VkAccessFlags sa, VkAccessFlags da) {
  VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, sa, da};
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}
/* the library's barrier, word for word */
static void full_barrier(VkCommandBuffer cb) {
  barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
              VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
              VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT);
}
/* the library's barrier with conditional rendering on (vk_loop.c) */
static void cond_barrier(VkCommandBuffer cb) {
  barrier(cb,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
              VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
              VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
              VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT |
              VK_ACCESS_CONDITIONAL_RENDERING_READ_BIT_EXT);
}
static void compute_barrier(VkCommandBuffer cb) {
  barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}
static void indirect_barrier(VkCommandBuffer cb) {
  barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
          VK_ACCESS_SHADER_WRITE_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
              VK_ACCESS_INDIRECT_COMMAND_READ_BIT);
}
static void push(VkCommandBuffer cb, uint32_t n, uint32_t mode) {
  uint32_t pc[2] = {n, mode};
  vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
}

/* One iteration each. Every command buffer starts with pipe[0] and the set
 * bound and the pattern's n pushed in mode 0; a pattern that pushes mode 1
 * leaves mode 0 pushed again. */
static void p_d1(VkCommandBuffer cb, unsigned it) { (void)it; vkCmdDispatch(cb, 1, 1, 1); }
static void p_d1_cb(VkCommandBuffer cb, unsigned it) { p_d1(cb, it); compute_barrier(cb); }
static void p_d1_ib(VkCommandBuffer cb, unsigned it) { p_d1(cb, it); indirect_barrier(cb); }
static void p_d1_fb(VkCommandBuffer cb, unsigned it) { p_d1(cb, it); full_barrier(cb); }
static void p_i0(VkCommandBuffer cb, unsigned it) {
  (void)it;
  vkCmdDispatchIndirect(cb, buf, IND0);
}
static void p_i0_fb(VkCommandBuffer cb, unsigned it) { p_i0(cb, it); full_barrier(cb); }
static void p_i1(VkCommandBuffer cb, unsigned it) {
  (void)it;
  vkCmdDispatchIndirect(cb, buf, IND1);
}
static void p_i1_fb(VkCommandBuffer cb, unsigned it) { p_i1(cb, it); full_barrier(cb); }
static void decide(VkCommandBuffer cb) {
  push(cb, 256, 1);
  vkCmdDispatch(cb, 1, 1, 1);
}
/* a device-loop iteration in miniature: decide, b1, k indirect dispatches
 * of the command at byte offset off, b2. With the lighter masks the next
 * decide's write is not ordered after this iteration's indirect read (a
 * write-after-read hazard that rewriting the same values makes benign). */
static void mini(VkCommandBuffer cb, void (*b1)(VkCommandBuffer), int k, VkDeviceSize off,
                 void (*b2)(VkCommandBuffer)) {
  decide(cb);
  b1(cb);
  push(cb, 256, 0);
  for (int i = 0; i < k; i++) vkCmdDispatchIndirect(cb, buf, off);
  b2(cb);
}
static void p_mini_full(VkCommandBuffer cb, unsigned it) {
  (void)it;
  mini(cb, full_barrier, 3, IND0, full_barrier);
}
static void p_mini_light(VkCommandBuffer cb, unsigned it) {
  (void)it;
  mini(cb, indirect_barrier, 3, IND0, compute_barrier);
}
static void p_mini_light1(VkCommandBuffer cb, unsigned it) {
  (void)it;
  mini(cb, indirect_barrier, 1, IND1, compute_barrier);
}
/* an indirect dispatch inside a conditional block whose predicate is its
 * own group count (the library's device loop) */
static void cond_indirect(VkCommandBuffer cb, VkDeviceSize off) {
  VkConditionalRenderingBeginInfoEXT ci = {
      .sType = VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT, .buffer = buf,
      .offset = off};
  cond_begin(cb, &ci);
  vkCmdDispatchIndirect(cb, buf, off);
  cond_end(cb);
}
static void p_ci0(VkCommandBuffer cb, unsigned it) { (void)it; cond_indirect(cb, IND0); }
static void p_mini_cond(VkCommandBuffer cb, unsigned it) {
  (void)it;
  decide(cb);
  cond_barrier(cb);
  push(cb, 256, 0);
  for (int i = 0; i < 3; i++) cond_indirect(cb, IND0);
  cond_barrier(cb);
}
/* decide, barrier, one real indirect dispatch among three discarded ones,
 * barrier: the loop's fewest phases per iteration */
static void p_mini_cond1(VkCommandBuffer cb, unsigned it) {
  (void)it;
  decide(cb);
  cond_barrier(cb);
  push(cb, 256, 0);
  cond_indirect(cb, IND0);
  cond_indirect(cb, IND1);
  cond_indirect(cb, IND0);
  cond_barrier(cb);
}
static void p_fb(VkCommandBuffer cb, unsigned it) { (void)it; full_barrier(cb); }
static void p_decide_fb(VkCommandBuffer cb, unsigned it) {
  (void)it;
  decide(cb);
  full_barrier(cb);
  push(cb, 256, 0);
}
static void p_mini_full1(VkCommandBuffer cb, unsigned it) {
  (void)it;
  mini(cb, full_barrier, 1, IND1, full_barrier);
}
static void p_bind(VkCommandBuffer cb, unsigned it) {
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe[(it + 1) & 1]);
  push(cb, 256, 0);
  vkCmdDispatch(cb, 1, 1, 1);
  full_barrier(cb);
}
static void p_dn(VkCommandBuffer cb, unsigned it) {
  (void)it;
  vkCmdDispatch(cb, WORK_WORDS / 256, 1, 1);
}
static void p_dn_fb(VkCommandBuffer cb, unsigned it) { p_dn(cb, it); full_barrier(cb); }

struct pattern {
  const char *name;
  void (*rec)(VkCommandBuffer, unsigned);
  uint32_t n;    /* the n pushed at the start */
  int secondary; /* iterations in a secondary command buffer, executed once */
  int cond;      /* needs conditional rendering */
};
static const struct pattern patterns[] = {
    {"dispatch1", p_d1, 256, 0, 0},
    {"dispatch1+compute-barrier", p_d1_cb, 256, 0, 0},
    {"dispatch1+indirect-barrier", p_d1_ib, 256, 0, 0},
    {"dispatch1+full-barrier", p_d1_fb, 256, 0, 0},
    {"indirect0", p_i0, 256, 0, 0},
    {"indirect0+full-barrier", p_i0_fb, 256, 0, 0},
    {"indirect1+full-barrier", p_i1_fb, 256, 0, 0},
    {"decide+full-barrier+3xindirect0+full-barrier", p_mini_full, 256, 0, 0},
    {"decide+indirect-barrier+3xindirect0+compute-barrier", p_mini_light, 256, 0, 0},
    {"decide+indirect-barrier+1xindirect1+compute-barrier", p_mini_light1, 256, 0, 0},
    {"pushconst+bind", p_bind, 256, 0, 0},
    {"secondary:decide+full-barrier+3xindirect0+full-barrier", p_mini_full, 256, 1, 0},
    {"dispatchN", p_dn, WORK_WORDS, 0, 0},
    {"dispatchN+full-barrier", p_dn_fb, WORK_WORDS, 0, 0},
    {"full-barrier (nothing between)", p_fb, 256, 0, 0},
    {"decide+full-barrier", p_decide_fb, 256, 0, 0},
    {"decide+full-barrier+1xindirect1+full-barrier", p_mini_full1, 256, 0, 0},
    {"cond-indirect0", p_ci0, 256, 0, 1},
    {"decide+cond-barrier+3xcond-indirect0+cond-barrier", p_mini_cond, 256, 0, 1},
    {"decide+cond-barrier+cond(0,1,0)+cond-barrier", p_mini_cond1, 256, 0, 1},
    {"secondary:decide+cond-barrier+3xcond-indirect0+cond-barrier", p_mini_cond, 256, 1, 1},
};

static void begin(VkCommandBuffer cb, const VkCommandBufferInheritanceInfo *inh) {
  VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, inh};
  VK(vkBeginCommandBuffer(cb, &bi));
}
static void bind_state(VkCommandBuffer cb, uint32_t n) {
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe[0]);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  push(cb, n, 0);
}
static void record(const struct pattern *p, unsigned T) {
  VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
  VkCommandBuffer cb = p->secondary ? sec : prim;
  begin(prim, NULL);
  if (p->secondary) begin(sec, &inh);
  bind_state(cb, p->n);
  for (unsigned it = 0; it < T; it++) p->rec(cb, it);
  if (p->secondary) {
    VK(vkEndCommandBuffer(sec));
    vkCmdExecuteCommands(prim, 1, &sec);
  }
  VK(vkEndCommandBuffer(prim));
}
static void submit_wait(void) {
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                     .pCommandBuffers = &prim};
  VK(vkQueueSubmit(queue, 1, &si, fence));
  VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
  VK(vkResetFences(dev, 1, &fence));
}
/* median of RUNS - 1 timed submissions of prim, after one untimed */
static double median_us(void) {
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double t0 = now_us();
    submit_wait();
    t[r] = now_us() - t0;
  }
  for (int i = 2; i < RUNS; i++)
    for (int j = i; j > 1 && t[j] < t[j - 1]; j--) {
      double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x;
    }
  return t[1 + (RUNS - 1) / 2];
}

static VkDeviceMemory bind_memory(VkPhysicalDevice pd, VkBuffer b, VkMemoryPropertyFlags want) {
  VkMemoryRequirements mr;
  VkPhysicalDeviceMemoryProperties mp;
  vkGetBufferMemoryRequirements(dev, b, &mr);
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  uint32_t t = 0;
  while (t < mp.memoryTypeCount &&
         !((mr.memoryTypeBits >> t & 1u) && (mp.memoryTypes[t].propertyFlags & want) == want))
    t++;
  if (t == mp.memoryTypeCount) {
    printf("vk_phases: no memory type with flags 0x%x\n", (unsigned)want);
    exit(1);
  }
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, t};
  VkDeviceMemory m;
  VK(vkAllocateMemory(dev, &ai, NULL, &m));
  VK(vkBindBufferMemory(dev, b, m, 0));
  return m;
}
static VkBuffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage) {
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                           .usage = usage, .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkBuffer b;
  VK(vkCreateBuffer(dev, &bi, NULL, &b));
  return b;
}

int main(int argc, char **argv) {
  const char *spv = argc > 1 ? argv[1] : "vk_phases.spv";
  const char *ts = getenv("PROBE_T"), *ds = getenv("PROBE_DEVICE");
  unsigned T = ts ? (unsigned)strtoul(ts, NULL, 10) : 256u;
  if (T == 0) T = 1;

  FILE *f = fopen(spv, "rb");
  if (!f) { printf("vk_phases: cannot open %s\n", spv); return 1; }
  static uint32_t code[1 << 16];
  size_t code_size = fread(code, 1, sizeof code, f);
  fclose(f);
  if (code_size == 0 || code_size % 4 || code_size == sizeof code) {
    printf("vk_phases: %s is not a SPIR-V module\n", spv);
    return 1;
  }

  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "vk_phases", .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  VkInstance inst;
  VK(vkCreateInstance(&ici, NULL, &inst));
  VkPhysicalDevice pds[16];
  uint32_t npd = 16;
  VkResult er = vkEnumeratePhysicalDevices(inst, &npd, pds);
  if (er != VK_INCOMPLETE) VK(er);
  if (npd == 0) { printf("vk_phases: no Vulkan device\n"); return 1; }
  uint32_t di = 0;
  if (ds) {
    di = (uint32_t)strtoul(ds, NULL, 10);
  } else {
    for (uint32_t i = npd; i-- > 0;) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(pds[i], &p);
      if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) di = i;
    }
  }
  if (di >= npd) { printf("vk_phases: PROBE_DEVICE %u of %u devices\n", di, npd); return 1; }
  VkPhysicalDevice pd = pds[di];
  VkPhysicalDeviceDriverProperties drv = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &drv};
  vkGetPhysicalDeviceProperties2(pd, &props);
  const VkPhysicalDeviceProperties *pp = &props.properties;
  printf("device %u: %s, driver %s %s (driverVersion 0x%08x), Vulkan %u.%u.%u\n", di,
         pp->deviceName, drv.driverName, drv.driverInfo, pp->driverVersion,
         VK_API_VERSION_MAJOR(pp->apiVersion), VK_API_VERSION_MINOR(pp->apiVersion),
         VK_API_VERSION_PATCH(pp->apiVersion));

  VkQueueFamilyProperties qf[16];
  uint32_t nqf = 16, qfi = UINT32_MAX;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nqf, qf);
  for (uint32_t i = 0; i < nqf && qfi == UINT32_MAX; i++)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) qfi = i;
  if (qfi == UINT32_MAX) { printf("vk_phases: no compute queue\n"); return 1; }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = qfi, .queueCount = 1,
                                 .pQueuePriorities = &prio};
  VkPhysicalDeviceConditionalRenderingFeaturesEXT crf = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = &crf};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  const int has_cond = crf.conditionalRendering == VK_TRUE;
  crf.inheritedConditionalRendering = VK_FALSE;
  const char *ext[] = {VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = has_cond ? &crf : NULL,
                            .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = has_cond ? 1u : 0u,
                            .ppEnabledExtensionNames = ext};
  VK(vkCreateDevice(pd, &dci, NULL, &dev));
  if (has_cond) {
    cond_begin = (PFN_vkCmdBeginConditionalRenderingEXT)vkGetDeviceProcAddr(
        dev, "vkCmdBeginConditionalRenderingEXT");
    cond_end = (PFN_vkCmdEndConditionalRenderingEXT)vkGetDeviceProcAddr(
        dev, "vkCmdEndConditionalRenderingEXT");
  }
  printf("conditional rendering: %s\n", cond_begin && cond_end ? "yes" : "no");
  vkGetDeviceQueue(dev, qfi, 0, &queue);

  VkDeviceSize size = (VkDeviceSize)(CONTROL_WORDS + WORK_WORDS) * 4u;
  buf = make_buffer(size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                              VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                              (has_cond ? VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT : 0u));
  bind_memory(pd, buf, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  VkBuffer rb = make_buffer(32, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  VkDeviceMemory rmem = bind_memory(pd, rb, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);

  VkDescriptorSetLayoutBinding b0 = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                     VK_SHADER_STAGE_COMPUTE_BIT, NULL};
  VkDescriptorSetLayoutCreateInfo dlci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          NULL, 0, 1, &b0};
  VkDescriptorSetLayout dsl;
  VK(vkCreateDescriptorSetLayout(dev, &dlci, NULL, &dsl));
  VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
  VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1,
                                     &dsl, 1, &pcr};
  VK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 1,
                                     1, &ps};
  VkDescriptorPool dp;
  VK(vkCreateDescriptorPool(dev, &dpci, NULL, &dp));
  VkDescriptorSetAllocateInfo dsai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dp, 1,
                                      &dsl};
  VK(vkAllocateDescriptorSets(dev, &dsai, &set));
  VkDescriptorBufferInfo dbi = {buf, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet wds = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set,
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &dbi};
  vkUpdateDescriptorSets(dev, 1, &wds, 0, NULL);

  VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
                                   code_size, code};
  VkShaderModule sm;
  VK(vkCreateShaderModule(dev, &smci, NULL, &sm));
  VkComputePipelineCreateInfo cpci[2];
  for (int i = 0; i < 2; i++)
    cpci[i] = (VkComputePipelineCreateInfo){
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                  VK_SHADER_STAGE_COMPUTE_BIT, sm, "main", NULL},
        .layout = layout, .basePipelineIndex = -1};
  VK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 2, cpci, NULL, pipe));

  VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                 VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, qfi};
  VkCommandPool pool;
  VK(vkCreateCommandPool(dev, &cpi, NULL, &pool));
  VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, pool,
                                     VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
  VK(vkAllocateCommandBuffers(dev, &cai, &prim));
  cai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
  VK(vkAllocateCommandBuffers(dev, &cai, &sec));
  VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
  VK(vkCreateFence(dev, &fci, NULL, &fence));

  /* zeroed buffer, then the indirect commands every pattern reads */
  begin(prim, NULL);
  vkCmdFillBuffer(prim, buf, 0, VK_WHOLE_SIZE, 0);
  full_barrier(prim);
  bind_state(prim, 0);
  decide(prim);
  full_barrier(prim);
  VK(vkEndCommandBuffer(prim));
  submit_wait();

  begin(prim, NULL);
  VK(vkEndCommandBuffer(prim));
  double empty = median_us();
  printf("T = %u iterations per command buffer, median of %d submissions\n", T, RUNS - 1);
  printf("%-56s %10.1f us\n", "empty submission", empty);
  for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
    if (patterns[i].cond && !cond_begin)
      continue;
    record(&patterns[i], T);
    double m = median_us();
    printf("%-56s %8.3f us/iter %10.1f us\n", patterns[i].name, (m - empty) / T, m);
    fflush(stdout);
  }

  /* the decide shader's indirect commands, as the patterns read them */
  begin(prim, NULL);
  VkBufferCopy copy = {IND0, 0, 32};
  vkCmdCopyBuffer(prim, buf, rb, 1, &copy);
  barrier(prim, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT);
  VK(vkEndCommandBuffer(prim));
  submit_wait();
  uint32_t *w;
  VK(vkMapMemory(dev, rmem, 0, 32, 0, (void **)&w));
  int ok = w[0] == 0 && w[1] == 1 && w[2] == 1 && w[4] == 1 && w[5] == 1 && w[6] == 1;
  printf("indirect commands (%u,%u,%u) (%u,%u,%u): %s\n", w[0], w[1], w[2], w[4], w[5], w[6],
         ok ? "ok" : "WRONG");

  /* the process's exit releases every Vulkan object */
  return ok ? 0 : 1;
}
