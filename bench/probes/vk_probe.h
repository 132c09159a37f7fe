/* SPDX-License-Identifier: MIT */
/* What the Vulkan probes in this folder share (probe.h is the CUDA ones'):
 * each is still one program, built alone with
 * `cc -O2 -std=c11 -o NAME bench/probes/NAME.c -lvulkan`. */
#ifndef WAVESCHED_VK_PROBE_H
#define WAVESCHED_VK_PROBE_H
#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>

/* PROBE_NAME: the program's name in its messages */
#define VK(call) vk_check((call), #call)

/* A probe measures or reports; any failed call ends it with the call named. */
static void vk_check(VkResult r, const char *what) {
  if (r != VK_SUCCESS) {
    printf("%s: %s failed: VkResult %d\n", PROBE_NAME, what, (int)r);
    fflush(stdout);
    exit(1);
  }
}
#endif
