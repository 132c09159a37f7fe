/* SPDX-License-Identifier: MIT */
/* Replays fuzz inputs through the same harness without libFuzzer (any C
 * compiler): the corpus check of the normal test suite.
 *   fz_replay [--describe] FILE|DIR...
 * A directory replays every regular file in it, in name order. Exit 0 when
 * every input passed; a failing input aborts with its description. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fz_harness.h"

static int describe_only;
static unsigned long ran;

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fz_replay: cannot open %s\n", path);
    return 1;
  }
  uint8_t buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  if (describe_only) {
    printf("%s: ", path);
    fz_describe_input(buf, n, stdout);
    return 0;
  }
  printf("replay %s (%zu bytes)\n", path, n);
  fflush(stdout);
  fz_run_input(buf, n);
  ++ran;
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int replay_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "fz_replay: no such file or directory: %s\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode))
    return replay_file(path);
  DIR *d = opendir(path);
  if (!d)
    return 1;
  char **names = NULL;
  size_t count = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    if (count == cap) {
      cap = cap ? 2 * cap : 64;
      names = realloc(names, cap * sizeof *names);
      if (!names)
        return 1;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[count] = malloc(len);
    if (!names[count])
      return 1;
    snprintf(names[count], len, "%s/%s", path, e->d_name);
    ++count;
  }
  closedir(d);
  qsort(names, count, sizeof *names, cmp_names);
  int rc = 0;
  for (size_t i = 0; i < count; ++i) {
    struct stat fs;
    if (stat(names[i], &fs) == 0 && S_ISREG(fs.st_mode))
      rc |= replay_file(names[i]);
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  int rc = 0, paths = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--describe") == 0) {
      describe_only = 1;
      continue;
    }
    rc |= replay_path(argv[i]);
    ++paths;
  }
  if (!paths) {
    fprintf(stderr, "usage: %s [--describe] FILE|DIR...\n", argv[0]);
    return 2;
  }
  fz_shutdown();
  if (!describe_only) {
    fz_summary(stdout);
    printf("fz_replay: %lu input(s) passed\n", ran);
  }
  return rc;
}
