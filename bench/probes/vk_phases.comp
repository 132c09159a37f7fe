// SPDX-License-Identifier: MIT
// vk_phases.c's shader. Words 0..4095 of the buffer are control words (the
// indirect commands at 1024 and 1028); the work region starts at word 4096.
//   mode 0: invocation i < n adds 1 to work word i
//   mode 1: invocation 0 "decides", like the device loop's decide shader:
//           (0,1,1) at words 1024..1026, a zero-group indirect command, and
//           (1,1,1) at words 1028..1030, a one-group one
#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer Buf { uint w[]; } buf;
layout(push_constant) uniform Pc { uint n; uint mode; } pc;

const uint WORK = 4096u;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (pc.mode == 0u) {
    if (i < pc.n) buf.w[WORK + i] += 1u;
  } else if (i == 0u) {
    // read a word so the zero is not a compile-time constant
    buf.w[1024] = buf.w[0] % 1u;
    buf.w[1025] = 1u;
    buf.w[1026] = 1u;
    buf.w[1028] = 1u;
    buf.w[1029] = 1u;
    buf.w[1030] = 1u;
  }
}
