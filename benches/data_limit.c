/* The native limit for kernels on data (docs/model.md#kernels-on-data): plain C that computes the counts warpscope
 * gives for the byte histogram
 *
 *     __global__ void hist(const unsigned char *data, int n, unsigned int *bins) {
 *         int i = blockIdx.x * blockDim.x + threadIdx.x;
 *         if (i < n) atomicAdd(&bins[data[i]], 1);
 *     }
 *
 * over a file of bytes, warp by warp and lane by lane, as a straightforward program would: the byte load's
 * sectors (its lanes' distinct 32-byte sectors), the atomic's read-modify-writes, its distinct sectors, the most
 * lanes on one bin per issue (summed and the most), its chains (lanes on one bin in an issue, by length) and its
 * read-modify-writes per bin. Arrays start 256-byte aligned, as warpscope's default bases are.
 *
 * And for the textbook CSR SpMV (one thread per row, docs/model.md#kernels-on-data):
 *
 *     for (int j = rowptr[row]; j < rowptr[row + 1]; j++) sum += val[j] * x[col[j]];
 *
 * each instruction's warp issues and sectors, the loop run lane by lane: the test loads rowptr[row + 1] with the
 * lanes still in the loop, the body loads val[j], col[j] and x[col[j]] with the lanes whose row has a j-th entry.
 *
 *     gcc -O2 -march=native -o target/data_limit benches/data_limit.c
 *     target/data_limit FILE                   the histogram of FILE's bytes
 *     target/data_limit --csr ROWPTR COL ROWS  the SpMV over int32 files ROWPTR (ROWS + 1 entries) and COL
 *     Both print `name value` lines (.ci/bench.sh compares them with warpscope's JSON).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t *read_ints(const char *path, long *count) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    int32_t *v = malloc(n > 0 ? n : 4);
    if (fread(v, 1, n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    fclose(f);
    *count = n / 4;
    return v;
}

/* Distinct 32-byte sectors of 4-byte elements idx[0..n) of one 256-byte aligned array. */
static int sectors_of(const int64_t *idx, int n) {
    int64_t seen[32];
    int ns = 0;
    for (int l = 0; l < n; l++) {
        int64_t s = idx[l] * 4 / 32;
        int k = 0;
        while (k < ns && seen[k] != s) k++;
        if (k == ns) seen[ns++] = s;
    }
    return ns;
}

static int csr(const char *rowptr_path, const char *col_path, long rows) {
    long nr, nc;
    int32_t *rowptr = read_ints(rowptr_path, &nr);
    int32_t *col = read_ints(col_path, &nc);
    if (nr < rows + 1) {
        fprintf(stderr, "rowptr has %ld entries, fewer than rows + 1\n", nr);
        return 1;
    }
    /* Issues and sectors of: rowptr[row], rowptr[row + 1], val[j], col[j], x[col[j]], y[row]. */
    uint64_t is[6] = {0}, se[6] = {0};
    for (long r0 = 0; r0 < rows; r0 += 32) {
        int lanes = (int)(rows - r0 < 32 ? rows - r0 : 32);
        int64_t idx[32], cols[32];
        for (int l = 0; l < lanes; l++) idx[l] = r0 + l;
        is[0]++, se[0] += sectors_of(idx, lanes);
        is[5]++, se[5] += sectors_of(idx, lanes);
        for (long p = 0;; p++) {
            /* The test: lanes whose row has at least p entries. */
            int n = 0;
            for (int l = 0; l < lanes; l++)
                if (rowptr[r0 + l + 1] - rowptr[r0 + l] >= p) idx[n++] = r0 + l + 1;
            if (n == 0) break;
            is[1]++, se[1] += sectors_of(idx, n);
            /* The body: lanes whose row has a p-th entry. */
            n = 0;
            for (int l = 0; l < lanes; l++)
                if (rowptr[r0 + l + 1] - rowptr[r0 + l] > p) {
                    long j = rowptr[r0 + l] + p;
                    if (j < 0 || j >= nc) {
                        fprintf(stderr, "col has no entry %ld\n", j);
                        return 1;
                    }
                    idx[n] = j;
                    cols[n++] = col[j];
                }
            if (n == 0) continue;
            is[2]++, se[2] += sectors_of(idx, n);
            is[3]++, se[3] += sectors_of(idx, n);
            is[4]++, se[4] += sectors_of(cols, n);
        }
    }
    const char *names[6] = {"rowptr_row", "rowptr_next", "val", "col", "x", "y"};
    for (int k = 0; k < 6; k++) printf("%s %llu %llu\n", names[k], (unsigned long long)is[k], (unsigned long long)se[k]);
    free(rowptr);
    free(col);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--csr") == 0) return csr(argv[2], argv[3], atol(argv[4]));
    if (argc != 2) {
        fprintf(stderr, "usage: data_limit FILE | data_limit --csr ROWPTR COL ROWS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n > 0 ? n : 1);
    if (fread(data, 1, n, f) != (size_t)n) {
        perror(argv[1]);
        return 1;
    }
    fclose(f);
    uint64_t load_sectors = 0, ops = 0, serial = 0, max_serial = 0, atom_sectors = 0, issues = 0;
    uint64_t chains[33] = {0}, per_bin[256] = {0};
    for (long w = 0; w * 32 < n; w++) {
        int lanes = (int)((n - w * 32) < 32 ? (n - w * 32) : 32);
        issues++;
        /* The load: lane l reads byte 32w + l; its sectors are the distinct (address / 32). */
        uint64_t seen_load[32];
        int nl = 0;
        for (int l = 0; l < lanes; l++) {
            uint64_t s = (uint64_t)(w * 32 + l) / 32;
            int k = 0;
            while (k < nl && seen_load[k] != s) k++;
            if (k == nl) seen_load[nl++] = s;
        }
        load_sectors += nl;
        /* The atomic: lane l adds to bins[data[32w + l]]. */
        int count[256] = {0};
        uint64_t sectors[32];
        int ns = 0;
        for (int l = 0; l < lanes; l++) {
            int b = data[w * 32 + l];
            count[b]++;
            per_bin[b]++;
            uint64_t s = (uint64_t)b * 4 / 32;
            int k = 0;
            while (k < ns && sectors[k] != s) k++;
            if (k == ns) sectors[ns++] = s;
        }
        atom_sectors += ns;
        ops += lanes;
        int most = 0;
        for (int b = 0; b < 256; b++) {
            if (count[b]) chains[count[b]]++;
            if (count[b] > most) most = count[b];
        }
        serial += most;
        if ((uint64_t)most > max_serial) max_serial = most;
    }
    printf("issues %llu\nload_sectors %llu\nops %llu\nserial %llu\nmax_serial %llu\natomic_sectors %llu\n",
           (unsigned long long)issues, (unsigned long long)load_sectors, (unsigned long long)ops,
           (unsigned long long)serial, (unsigned long long)max_serial, (unsigned long long)atom_sectors);
    printf("chains");
    for (int k = 1; k <= 32; k++)
        if (chains[k]) printf(" %d:%llu", k, (unsigned long long)chains[k]);
    int top = 0;
    for (int b = 1; b < 256; b++)
        if (per_bin[b] > per_bin[top]) top = b;
    printf("\nhot bins[%d] %llu\n", top, (unsigned long long)per_bin[top]);
    free(data);
    return 0;
}
