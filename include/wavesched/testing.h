/* wavesched — hooks for the library's own tests. Not for production use:
 * they change global state and exist so that fault-injection and
 * verification tests can fail on purpose. */
#ifndef WAVESCHED_TESTING_H
#define WAVESCHED_TESTING_H

#include "wavesched/wavesched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make the Nth host allocation from now fail (1 = the next one); 0 = never. */
void ws_testing_fail_alloc_after(unsigned long n);
/* Host allocations currently live / made since start. */
unsigned long ws_testing_live_allocations(void);
unsigned long ws_testing_total_allocations(void);

/* Adds `delta` to the device count of main queue `queue` at the next
 * iteration boundary of the next dispatch (once). Verification mode must
 * report it; without verification the loop may misbehave but must not hang
 * or write out of bounds. */
void ws_testing_corrupt_count(ws_scheduler *s, uint32_t queue, int32_t delta);

#ifdef __cplusplus
}
#endif
#endif
