// The native-limit baseline for the speed targets of the tiled SGEMM block (README, Performance): the per-
// instruction counts warpscope reports, computed by plain compiled C for this one kernel. .ci/bench.sh builds
// it with gcc -O2 and times it against `warpscope analyze` in the same run. Kept verbatim as given.
// The physical-limit baseline for the tiled SGEMM block (32x32 threads, TILE 32): natively compiled address
// arithmetic plus per-warp sector / bank-wavefront counting, the same numbers warpscope reports per instruction.
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
static int N = 1024;
enum { T = 32 };
static uint64_t sect[8], wav[8], issues[8];
static void glob(int k, uint64_t *a) { // distinct 32-B sectors of 32 lanes, 4 B each
  uint64_t s[32]; int n = 0;
  for (int l = 0; l < 32; l++) { uint64_t x = a[l] >> 5; int f = 0; for (int j = 0; j < n; j++) if (s[j] == x) { f = 1; break; } if (!f) s[n++] = x; }
  sect[k] += n; issues[k]++;
}
static void shar(int k, uint64_t *a) { // max distinct words per bank
  uint64_t w[32][32]; int c[32] = {0}, m = 0;
  for (int l = 0; l < 32; l++) { uint64_t x = a[l] >> 2; int b = x & 31, f = 0; for (int j = 0; j < c[b]; j++) if (w[b][j] == x) { f = 1; break; } if (!f) w[b][c[b]++] = x; if (c[b] > m) m = c[b]; }
  wav[k] += m; issues[k]++;
}
int main(int argc, char **argv) {
  if (argc > 1) N = atoi(argv[1]);
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  uint64_t A = 0x100000000ull, B = 0x200000000ull, C = 0x300000000ull, As = 0, Bs = T * T * 4;
  uint64_t a[32];
  for (int k = 0; k < N / T; k++) {
    for (int w = 0; w < 32; w++) { int ty = w; // warp w = row ty, lanes = tx
      for (int l = 0; l < 32; l++) a[l] = A + 4ull * ((uint64_t)ty * N + k * T + l); glob(0, a);
      for (int l = 0; l < 32; l++) a[l] = As + 4ull * (ty * T + l); shar(1, a);
      for (int l = 0; l < 32; l++) a[l] = B + 4ull * ((uint64_t)(k * T + ty) * N + l); glob(2, a);
      for (int l = 0; l < 32; l++) a[l] = Bs + 4ull * (ty * T + l); shar(3, a);
      for (int j = 0; j < T; j++) {
        for (int l = 0; l < 32; l++) a[l] = As + 4ull * (ty * T + j); shar(4, a);
        for (int l = 0; l < 32; l++) a[l] = Bs + 4ull * (j * T + l); shar(5, a);
      }
    }
  }
  for (int w = 0; w < 32; w++) { for (int l = 0; l < 32; l++) a[l] = C + 4ull * ((uint64_t)w * N + l); glob(6, a); }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  for (int k = 0; k < 7; k++) printf("instr %d: issues %llu sectors %llu wavefronts %llu\n", k, (unsigned long long)issues[k], (unsigned long long)sect[k], (unsigned long long)wav[k]);
  printf("%.3f ms\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
}
