//! Kernels on data (docs/model.md#kernels-on-data): arrays given as generators, `.npy` and raw files are read by
//! the kernel's loads, so that gathers, histograms and sparse matrices run exactly. Every expected figure below
//! is worked out by hand from the data and the rules of docs/model.md (global memory: 32-byte sectors, 128-byte
//! lines; atomics: `serial` is the most active lanes on one address per issue).
#![cfg(all(not(target_arch = "wasm32"), feature = "data"))]

use warpscope::analysis::ProgramResult;
use warpscope::data::DataSpec;
use warpscope::lang::Lang;
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;

mod common;

fn spec(text: &str) -> DataSpec {
    DataSpec::parse(text).expect("spec")
}

fn file(name: &str, path: &str, bytes: &[u8]) -> DataSpec {
    DataSpec { name: name.into(), source: path.into(), file: Some(bytes.into()) }
}

fn cuda(text: &str, block: &str, data: Vec<DataSpec>, sets: &[&str]) -> Scenario {
    let mut sc = common::scenario(Lang::Cuda, text, block, None);
    sc.data = data;
    sc.sets = sets.iter().map(|s| s.to_string()).collect();
    sc
}

/// Each memory instruction as (access, warp issues, sectors).
fn issues(r: &ProgramResult) -> Vec<(String, u64, u64)> {
    r.instructions.iter().map(|i| (i.access.clone(), i.warps, i.memory.as_ref().map_or(0, |m| m.sectors))).collect()
}

const HIST: &str = "__global__ void hist(const unsigned char *data, int n, unsigned int *bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i]], 1);
}
";

/// The pangram's first 32 bytes, "the quick brown fox jumps over t", as one warp's histogram. Its bytes are 6
/// spaces (bin 32, byte 128 of `bins`: sector 4, line 1) and letters 98-120 (bytes 392-480: sectors 12-15, line
/// 3): 5 sectors over 2 lines; the space is the most frequent byte, 6 lanes in series.
#[test]
fn a_histogram_of_text_counts_its_atomics_on_the_text() {
    let text = b"the quick brown fox jumps over the lazy dog";
    let r = common::ok(&cuda(HIST, "32", vec![file("data", "pangram.txt:uint8", text)], &["n=32"]));
    let atom = &r.instructions[1];
    assert_eq!(atom.access, "&bins[data[i]]");
    let m = atom.memory.as_ref().expect("global");
    assert_eq!((m.requests, m.lines, m.sectors), (1, 2, 5));
    let a = atom.atomic.expect("atomic");
    assert_eq!((a.ops, a.serial, a.max_serial), (32, 6, 6));
    // Its chains: 15 letters once, 4 twice (e, r, t, u), o 3 times, the space 6 times; the most-hit bins, most
    // first and then by address: the space (32), o (111), then e, r, t, u, then b and c once each.
    let c = atom.contention.as_ref().expect("contention");
    assert_eq!(c.chains, [(1, 15), (2, 4), (3, 1), (6, 1)]);
    let hot: Vec<(Option<&str>, u64)> = c.hot.iter().map(|h| (h.at.as_deref(), h.ops)).collect();
    assert_eq!(
        hot,
        [
            (Some("bins[32]"), 6),
            (Some("bins[111]"), 3),
            (Some("bins[101]"), 2),
            (Some("bins[114]"), 2),
            (Some("bins[116]"), 2),
            (Some("bins[117]"), 2),
            (Some("bins[98]"), 1),
            (Some("bins[99]"), 1)
        ]
    );
    let given = r.notes.iter().find(|n| n.id == "data-given").expect("the data is stated");
    assert_eq!(given.text, "Given data: `data` (uint8, 43 elements: pangram.txt:uint8).");
}

/// All-equal data: every lane adds 1 to the same bin, yet the address depends on loaded data, so nvcc's warp
/// aggregation does not apply (docs/model.md#kernels-on-data, Atomics): 32 read-modify-writes in series, one
/// sector (docs/model.md#atomics: "for all-equal data, 1 sector with 32 lanes in series").
#[test]
fn an_atomic_whose_address_is_data_is_never_aggregated() {
    let r = common::ok(&cuda(HIST, "32", vec![spec("data=const(7, n=32)")], &["n=32"]));
    let a = r.instructions[1].atomic.expect("atomic");
    assert_eq!((a.ops, a.serial, a.max_serial), (32, 32, 32));
    assert_eq!(r.instructions[1].memory.as_ref().map(|m| m.sectors), Some(1));
}

use common::CSR;

/// The textbook CSR kernel on a 4-row matrix with 2 nonzeros a row: rowptr = 0, 2, 4, 6, 8 and col = 0 1 | 2 3
/// | 1 2 | 3 0. Four lanes run. The loop tests `rowptr[row + 1]` three times (two passes and the exit) and runs
/// its body twice; each pass's `val[j]`, `col[j]` (j = 0, 2, 4, 6, then 1, 3, 5, 7: bytes 0-28) and `x[col[j]]`
/// (bytes 0-12) fall in one sector.
#[test]
fn the_textbook_csr_kernel_runs_its_rows_on_the_matrix() {
    let data = vec![spec("rowptr=arange(0, 2, n=5)"), spec("col=repeat(0, 1, 2, 3, 1, 2, 3, 0, n=8)")];
    let r = common::ok(&cuda(CSR, "32", data, &["rows=4"]));
    assert_eq!(
        issues(&r),
        [
            ("rowptr[row + 1]".to_string(), 3, 3),
            ("rowptr[row]".to_string(), 1, 1),
            ("val[j]".to_string(), 2, 2),
            ("col[j]".to_string(), 2, 2),
            ("x[col[j]]".to_string(), 2, 2),
            ("y[row]".to_string(), 1, 1),
        ]
    );
    // No assumption about the loop: its bound is known.
    assert!(r.notes.iter().all(|n| n.id != "data-branch-assumed"));
}

/// A read past the end of a given array is an error naming the array, the element and the thread.
#[test]
fn a_read_past_a_given_array_names_it() {
    let e = cuda(CSR, "32", vec![spec("rowptr=const(0, n=1)")], &["rows=4"]).run().expect_err("refused");
    assert_eq!(
        e.to_string().lines().next(),
        Some("pattern 5:22: thread (1, 0, 0) of block (0, 0, 0) reads `rowptr` at element 1, past its end: it was given 1 element (const(0, n=1))")
    );
}

/// A store into a given array is refused: what the kernel writes is not followed yet.
#[test]
fn a_store_into_a_given_array_is_refused() {
    let text = "__global__ void k(int *a) {\n    a[threadIdx.x] = 1;\n}\n";
    let e = cuda(text, "32", vec![spec("a=arange(n=32)")], &[]).run().expect_err("refused");
    assert!(
        e.to_string().starts_with(
            "pattern 2:5: thread (0, 0, 0) of block (0, 0, 0) writes `a` (element 0), which was given as data"
        ),
        "{e}"
    );
}

/// An embedding lookup, `wte[idx[b] * C + c]`, with token ids that repeat: the warp of row b reads row idx[b] of
/// the table, 32 floats (128 bytes, 4 sectors) at row * 4 * C bytes. With ids 3, 0 (C = 32) the two warps read
/// rows 3 and 0; the id load of each warp is one address (1 sector).
#[test]
fn an_embedding_lookup_reads_the_rows_the_ids_name() {
    let text = "__global__ void embed(const int *idx, const float *wte, float *out, int C) {
    int b = blockIdx.x;
    int c = threadIdx.x;
    out[b * C + c] = wte[idx[b] * C + c];
}
";
    let mut sc = cuda(text, "32", vec![spec("idx=repeat(3, 0, n=2)")], &["C=32"]);
    sc.grid = Dim3::linear(2);
    let r = common::ok(&sc);
    assert_eq!(
        issues(&r),
        [("idx[b]".to_string(), 2, 2), ("wte[idx[b] * C + c]".to_string(), 2, 8), ("out[b * C + c]".to_string(), 2, 8),]
    );
    // Block 1 reads row 0, block 0 row 3: the blocks are not translations of one another, and both ran.
    assert_eq!((r.blocks.total, r.blocks.executed), (2, 2));
    let why = r.blocks.why_executed.as_deref().expect("said");
    assert!(why.contains("values the blocks load from given data decide addresses"), "{why}");
}

/// A grid on data gives the figures of running every block on its own.
#[test]
fn a_grid_on_data_is_every_block_run() {
    let text: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let mut sc = cuda(HIST, "256", vec![file("data", "bytes.bin:uint8", &text)], &["n=4096"]);
    sc.grid = Dim3::linear(16);
    let a = common::ok(&sc);
    sc.every_block = true;
    let b = common::ok(&sc);
    assert_eq!(a.instructions[1].atomic, b.instructions[1].atomic);
    assert_eq!(common::metrics(&a), common::metrics(&b));
    assert_eq!(a.blocks.executed, 16);
}

/// A `.npy` file (version 1.0, `<i4`, shape (4,)) gives the ids 5, 1, 5, 2.
#[test]
fn a_npy_file_gives_its_elements() {
    let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }";
    let mut h = header.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&(h.len() as u16).to_le_bytes());
    npy.extend_from_slice(h.as_bytes());
    for v in [5i32, 1, 5, 2] {
        npy.extend_from_slice(&v.to_le_bytes());
    }
    let text = "__global__ void k(const int *ids, int *bins) {\n    atomicAdd(&bins[ids[threadIdx.x]], 1);\n}\n";
    let r = common::ok(&cuda(text, "4", vec![file("ids", "ids.npy", &npy)], &[]));
    // Bins 5, 1, 5, 2: bin 5 twice in series; bytes 4-20, one sector.
    let a = r.instructions[1].atomic.expect("atomic");
    assert_eq!((a.ops, a.serial), (4, 2));
    assert_eq!(r.instructions[1].memory.as_ref().map(|m| m.sectors), Some(1));
    // A file of another type than the pointer's is converted, and the result says so.
    let e = cuda(text, "4", vec![file("ids", "ids.npy", &npy[..npy.len() - 1])], &[]).run().expect_err("short");
    assert!(e.to_string().starts_with("data the data for `ids` (ids.npy):"), "{e}");
}

/// Generators: the same sequence for the same seed, within their ranges; errors name what to fix.
#[test]
fn generators_are_seeded_and_checked() {
    let text = "__global__ void k(const int *ids, int *bins) {\n    atomicAdd(&bins[ids[threadIdx.x]], 1);\n}\n";
    let run = |src: &str| common::ok(&cuda(text, "32", vec![spec(&format!("ids={src}"))], &[]));
    let a = run("uniform(0, 64, n=32, seed=9)").instructions[1].atomic;
    assert_eq!(a, run("uniform(0, 64, n=32, seed=9)").instructions[1].atomic);
    // zipf(2, 8): ids 1..=8, the bins' bytes 4-32: at most 2 sectors.
    let z = run("zipf(2, 8, n=32, seed=1)");
    assert!(z.instructions[1].memory.as_ref().is_some_and(|m| m.sectors <= 2));
    // A permutation of 0..32: every lane its own bin, no two in series; 32 bins of 4 bytes, 4 sectors.
    let p = run("perm(n=32, seed=4)");
    assert_eq!(p.instructions[1].atomic.map(|a| a.serial), Some(1));
    assert_eq!(p.instructions[1].memory.as_ref().map(|m| m.sectors), Some(4));
    let fail = |src: &str| cuda(text, "32", vec![spec(&format!("ids={src}"))], &[]).run().expect_err(src).to_string();
    assert_eq!(fail("uniform(0, 64)"), "data `uniform(0, 64)`: give its length with n=, e.g. uniform(..., n=1024)");
    assert_eq!(
        fail("const(3000000000, n=2)"),
        "data the data for `ids` (const(3000000000, n=2)): element 0 is 3000000000, which int32 cannot hold"
    );
    assert!(fail("gauss(0, 1, n=4)").starts_with("data `gauss` is not a generator"));
    let e = cuda(text, "32", vec![spec("idz=arange(n=32)")], &[]).run().expect_err("name").to_string();
    assert_eq!(
        e,
        "data data for `idz`, which the kernel does not name as a pointer or global array; it has: ids, bins"
    );
}

/// The public text the published kernels count: the first 64 KB of tinyshakespeare (tests/data/published/data).
fn shakespeare() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/published/data/tinyshakespeare-64k.txt"))
        .expect("the text")
}

/// A published kernel file as a scenario, with the headers it includes from beside it.
fn published(file: &str, block: &str, data: Vec<DataSpec>, sets: &[&str]) -> Scenario {
    let path = format!("{}/tests/data/published/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("kernel");
    let mut sc = cuda(&text, block, data, sets);
    sc.headers = warpscope::cli::headers(&text, Some(&path), &[]).expect("headers");
    sc
}

/// NVIDIA cuda-samples' histogram256 (verbatim, BSD-3-Clause), launched as its host code launches it (192 threads,
/// 240 blocks, 16,384 words), on the text packed four bytes to a `uint`. Each of `addWord`'s four `addByte`
/// atomics issues once per warp of words (512), one read-modify-write per lane; lanes whose byte is the same
/// share an address in their warp's sub-histogram and go in series. The expected `serial` is counted here from
/// the text: per warp, the most lanes with the same byte, summed (docs/model.md#atomics).
#[test]
fn histogram256_counts_the_bytes_of_a_public_text() {
    let text = shakespeare();
    let mut sc = published(
        "NVIDIA__cuda-samples/histogram256.cu",
        "192",
        vec![file("d_Data", "tinyshakespeare-64k.txt:uint32", &text)],
        &["dataCount=16384"],
    );
    sc.kernel = Some("histogram256Kernel".into());
    sc.grid = Dim3::linear(240);
    let r = common::ok(&sc);
    let atomics: Vec<_> = r.instructions.iter().filter_map(|i| i.atomic.map(|a| (i.warps, a.ops, a.serial))).collect();
    let expected: Vec<_> = (0..4)
        .map(|k| {
            let serial: u64 = text
                .chunks(128)
                .map(|warp| {
                    let mut count = [0u64; 256];
                    for word in warp.chunks(4) {
                        count[word[k] as usize] += 1;
                    }
                    count.into_iter().max().unwrap_or(0)
                })
                .sum();
            (512, 16384, serial)
        })
        .collect();
    assert_eq!(atomics, expected);
    // Blocks 0-85 read words; their addresses come from the text, so every block ran.
    assert_eq!(r.blocks.executed, 240);
}

/// cuda-samples' histogram64 (verbatim) reads the text as `uint4`s and counts each byte's top six bits in
/// byte-sized per-thread counters (`s_ThreadBase[64 * bin]++`), laid out so that "each group of 16 threads
/// accesses consecutive shared memory banks". The text's bins decide the banks: the expected wavefronts of each
/// counter load are computed here from the text with the kernel's `threadPos`, as docs/model.md#shared-memory
/// counts 1-byte accesses (per bank, the distinct 4-byte words its lanes touch; the most over the banks).
#[test]
fn histogram64_counts_the_bytes_of_a_public_text_in_its_banks() {
    let text = shakespeare();
    let mut sc = published(
        "NVIDIA__cuda-samples/histogram64.cu",
        "64",
        vec![file("d_Data", "tinyshakespeare-64k.txt:uint32", &text)],
        &["dataCount=4096"],
    );
    sc.kernel = Some("histogram64Kernel".into());
    sc.grid = Dim3::linear(5);
    let r = common::ok(&sc);
    let word = |i: usize| u32::from_le_bytes([text[4 * i], text[4 * i + 1], text[4 * i + 2], text[4 * i + 3]]);
    let thread_pos = |t: u32| (t & !63) | ((t & 15) << 2) | ((t & 48) >> 4);
    // Sites in the order of the source: component c (x, y, z, w), then byte k; a load and a store each.
    let mut expected = Vec::new();
    for c in 0..4 {
        for k in 0..4 {
            let mut wavefronts = 0u64;
            for block in 0..5u32 {
                for warp in 0..2u32 {
                    let mut pos = (block * 64 + warp * 32) as usize;
                    while pos < 4096 {
                        let mut words: std::collections::BTreeSet<(u32, u32)> = Default::default();
                        for lane in 0..32u32 {
                            let p = pos + lane as usize;
                            if p >= 4096 {
                                continue;
                            }
                            let bin = (word(4 * p + c) >> (2 + 8 * k)) & 63;
                            let w = (thread_pos(warp * 32 + lane) + 64 * bin) / 4;
                            words.insert((w % 32, w));
                        }
                        let per_bank = (0..32).map(|b| words.iter().filter(|(bank, _)| *bank == b).count());
                        wavefronts += per_bank.max().unwrap_or(0) as u64;
                        pos += 320;
                    }
                }
            }
            expected.push(wavefronts);
        }
    }
    let counters: Vec<u64> = r
        .instructions
        .iter()
        .filter(|i| i.op == "LDS.U8" && i.access.starts_with("s_ThreadBase"))
        .map(|i| i.banks.as_ref().map_or(0, |b| b.wavefronts))
        .collect();
    assert_eq!(counters, expected);
    // Each thread reads 16-byte words: 128 warp issues of 512 bytes, 16 sectors each.
    let load = r.instructions.iter().find(|i| i.op == "LDG.E.128").expect("the uint4 load");
    assert_eq!((load.warps, load.memory.as_ref().map(|m| m.sectors)), (128, Some(2048)));
}

/// llm.c's encoder_forward_kernel1 (verbatim, MIT): one thread per (b, t) walks its token's row of `wte`, C = 256
/// bf16 values. Token ids: the first B * T = 128 characters of the text, each its index in the sorted set of the
/// excerpt's characters (character-level ids, as nanoGPT's shakespeare_char numbers them). Each of the loop's 256
/// issues per warp reads element i of the rows of its 32 tokens: rows are 512 bytes apart, so one sector per
/// distinct token in the warp (docs/model.md#global-memory).
#[test]
fn encoder_forward_gathers_the_rows_of_real_token_ids() {
    let text = shakespeare();
    let mut vocab: Vec<u8> = text.clone();
    vocab.sort_unstable();
    vocab.dedup();
    let ids: Vec<u8> = text[..128]
        .iter()
        .flat_map(|c| (vocab.binary_search(c).expect("in the vocabulary") as i32).to_le_bytes())
        .collect();
    let mut sc = published(
        "karpathy__llm.c/encoder_forward.cu",
        "128",
        vec![file("inp", "ids.bin:int32", &ids)],
        &["B=2", "T=64", "C=256"],
    );
    sc.kernel = Some("encoder_forward_kernel1".into());
    let r = common::ok(&sc);
    let wte = r.instructions.iter().find(|i| i.access == "wte_ix[i]").expect("the gather");
    let distinct: u64 =
        text[..128].chunks(32).map(|w| w.iter().collect::<std::collections::BTreeSet<_>>().len() as u64).sum();
    assert_eq!((wte.warps, wte.memory.as_ref().map(|m| m.sectors)), (4 * 256, Some(256 * distinct)));
}

/// The entries of a Matrix Market file, read here on their own: (row, column) from 0, both triangles of a
/// symmetric matrix, by row and then column.
fn matrix_market(text: &str) -> (usize, Vec<(usize, usize)>) {
    let symmetric = text.lines().next().is_some_and(|l| l.contains("symmetric"));
    let mut lines = text.lines().filter(|l| !l.starts_with('%') && !l.trim().is_empty());
    let rows: usize = lines.next().and_then(|l| l.split_whitespace().next()?.parse().ok()).expect("size");
    let mut e: Vec<(usize, usize)> = Vec::new();
    for l in lines {
        let mut w = l.split_whitespace().map(|x| x.parse::<usize>().unwrap_or(0));
        let (r, c) = (w.next().expect("row") - 1, w.next().expect("column") - 1);
        e.push((r, c));
        if symmetric && r != c {
            e.push((c, r));
        }
    }
    e.sort_unstable();
    (rows, e)
}

/// Distinct 32-byte sectors of 4-byte elements at these indices of one array (docs/model.md#global-memory).
fn sectors(idx: impl Iterator<Item = usize>) -> u64 {
    idx.map(|i| i * 4 / 32).collect::<std::collections::BTreeSet<_>>().len() as u64
}

/// SuiteSparse's HB/1138_bus (as the Ginkgo project ships it, BSD-3-Clause; tests/data/published/data), a
/// symmetric 1138 x 1138 matrix, given from its Matrix Market file as CSR to the textbook kernel and as ELL
/// (column-major, padded with column 0) to the ELL kernel. The gather `x[col[...]]` is counted here from the file:
/// per warp and pass, the distinct sectors of the columns of the lanes that have an entry (CSR: the lanes whose row
/// has a j-th entry; ELL: every lane of a row below `rows`, padding included).
#[test]
fn a_suitesparse_matrix_from_its_matrix_market_file_as_csr_and_ell() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/published/data/1138_bus.mtx");
    let bytes = std::fs::read(path).expect("matrix");
    let (rows, entries) = matrix_market(std::str::from_utf8(&bytes).expect("text"));
    let mut by_row = vec![Vec::new(); rows];
    for &(r, c) in &entries {
        by_row[r].push(c);
    }
    let width = by_row.iter().map(Vec::len).max().unwrap_or(0);
    let (mut csr_issues, mut csr_sectors, mut ell_sectors) = (0u64, 0u64, 0u64);
    for w in (0..rows).step_by(32) {
        let lanes = w..(w + 32).min(rows);
        for p in 0..width {
            let cols: Vec<usize> = lanes.clone().filter_map(|r| by_row[r].get(p).copied()).collect();
            if !cols.is_empty() {
                csr_issues += 1;
                csr_sectors += sectors(cols.into_iter());
            }
            ell_sectors += sectors(lanes.clone().map(|r| by_row[r].get(p).copied().unwrap_or(0)));
        }
    }
    let spmv = |text: &str, names: &str, sets: &[&str]| {
        let mut sc = cuda(text, "256", vec![file(names, "1138_bus.mtx", &bytes)], sets);
        sc.grid = Dim3::linear(5);
        common::ok(&sc)
    };
    let r = spmv(CSR, "rowptr,col,val", &["rows=1138"]);
    let x = r.instructions.iter().find(|i| i.access == "x[col[j]]").expect("the gather");
    assert_eq!((x.warps, x.memory.as_ref().map(|m| m.sectors)), (csr_issues, Some(csr_sectors)));
    let note = r.notes.iter().filter(|n| n.id == "data-given").map(|n| n.text.as_str()).collect::<Vec<_>>().join(" ");
    assert!(note.contains("a 1138 x 1138 matrix with 4054 entries"), "{note}");
    let ell =
        "__global__ void spmv_ell(int rows, int width, const int *col, const float *val, const float *x, float *y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (int k = 0; k < width; k++)
            sum += val[k * rows + row] * x[col[k * rows + row]];
        y[row] = sum;
    }
}
";
    let width_set = format!("width={width}");
    let r = spmv(ell, "ell:col,val", &["rows=1138", &width_set]);
    let x = r.instructions.iter().find(|i| i.access == "x[col[k * rows + row]]").expect("the gather");
    assert_eq!((x.warps, x.memory.as_ref().map(|m| m.sectors)), (36 * width as u64, Some(ell_sectors)));
}

/// Sources pass through f64: an int64 past 2^53 could come out as a neighbouring integer (2^53 + 1 rounds to
/// 2^53), so a conversion past it is refused; a raw file of the array's own type keeps its bytes exactly.
#[test]
fn an_integer_past_2_to_the_53_is_not_rounded_into_another() {
    let text =
        "__global__ void k(const long long *ids, int *bins) {\n    atomicAdd(&bins[ids[threadIdx.x] & 7], 1);\n}\n";
    let big: Vec<u8> = (0..32u64).flat_map(|i| ((1u64 << 53) + 1 + i).to_le_bytes()).collect();
    let e = cuda(text, "32", vec![file("ids", "ids.bin:uint64", &big)], &[]).run().expect_err("refused").to_string();
    assert!(e.contains("element 0 is 2^53 or beyond"), "{e}");
    // As int64, its own type: exact. Ids 2^53 + 1 + i: bins (1 + i) & 7, four lanes on each of the 8 bins.
    let r = common::ok(&cuda(text, "32", vec![file("ids", "ids.bin:int64", &big)], &[]));
    assert_eq!(r.instructions[1].atomic.map(|a| (a.ops, a.serial)), Some((32, 4)));
}

/// PTX reads given data too: an `extern "C"` kernel's name carries no parameter types, so the source says the
/// element type (`:uint32`), and a vector load's second element is read at its offset. Lane l's pair of
/// indices is (0, 8 l): the first gather reads x[0] in every lane (1 sector), the second x[8 l], 32 bytes apart
/// (32 sectors; docs/model.md#global-memory).
#[test]
fn ptx_loads_read_given_data_with_the_type_the_source_says() {
    let ptx = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry gather(.param .u64 gather_param_0, .param .u64 gather_param_1)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<12>;\n.reg .f32 %f<2>;\nld.param.u64 %rd1, [gather_param_0];\nld.param.u64 %rd2, [gather_param_1];\ncvta.to.global.u64 %rd3, %rd1;\ncvta.to.global.u64 %rd4, %rd2;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd5, %r1, 8;\nadd.s64 %rd6, %rd3, %rd5;\nld.global.v2.u32 {%r2, %r3}, [%rd6];\nmul.wide.u32 %rd7, %r2, 4;\nadd.s64 %rd8, %rd4, %rd7;\nld.global.f32 %f1, [%rd8];\nmul.wide.u32 %rd9, %r3, 4;\nadd.s64 %rd10, %rd4, %rd9;\nld.global.f32 %f1, [%rd10];\nret;\n}\n";
    let pairs: Vec<u8> = (0..32u32).flat_map(|l| [0, 8 * l]).flat_map(u32::to_le_bytes).collect();
    let run = |data: DataSpec| {
        let mut sc = common::scenario(Lang::Ptx, ptx, "32", None);
        sc.data = vec![data];
        sc.run()
    };
    let r = run(file("param_0", "pairs.bin:uint32", &pairs)).expect("runs");
    let sectors: Vec<u64> = r.instructions.iter().map(|i| i.memory.as_ref().map_or(0, |m| m.sectors)).collect();
    // The pairs (256 bytes: 8 sectors), then the two gathers.
    assert_eq!(sectors, [8, 1, 32]);
    // A generator without a type: the kernel does not say it, so the error asks for it.
    let e = run(spec("param_0=uniform(0, 4, n=64)")).expect_err("no type").error;
    assert!(e.message.contains("the kernel does not say the type of `param_0`'s elements"), "{}", e.message);
    assert!(e.message.contains("param_0=uniform(0, 256, n=1024):uint8"), "{}", e.message);
    // With one, every lane's pair is in [0, 4): both gathers read the first 16 bytes, 1 sector each.
    let r = run(spec("param_0=uniform(0, 4, n=64):uint32")).expect("runs");
    let sectors: Vec<u64> = r.instructions.iter().map(|i| i.memory.as_ref().map_or(0, |m| m.sectors)).collect();
    assert_eq!(sectors, [8, 1, 1]);
}

/// What a pointer parameter points to, from the type a demangler spells (cpp_demangle's spellings of
/// `_Z1kPKhP5uint4PPfPv`: `unsigned char const*`, `uint4*`, `float**`, `void*`).
#[test]
fn a_pointer_parameters_element_type_comes_from_its_c_type() {
    use warpscope::program::memory::Elem;
    let of = Elem::of_pointer;
    assert_eq!(of("unsigned char const*"), Some(Elem::Int { bytes: 1, signed: false }));
    assert_eq!(of("int const* restrict"), Some(Elem::Int { bytes: 4, signed: true }));
    assert_eq!(of("uint4*"), Some(Elem::Int { bytes: 4, signed: false }));
    assert_eq!(of("long*"), Some(Elem::Int { bytes: 8, signed: true }));
    assert_eq!(of("__nv_bfloat16 const*"), Some(Elem::Float { bytes: 2 }));
    assert_eq!(of("float**"), Some(Elem::Ptr));
    assert_eq!(of("void*"), None);
    assert_eq!(of("unsigned int"), None);
}

/// MoE routing as it is often written: one thread takes the token's slot in its expert with `atomicAdd` and
/// shares it through shared memory. The slot is a value the kernel wrote, not data that can be given, so the
/// refusal says that, and does not ask for data (docs/model.md#kernels-on-data).
#[test]
fn a_value_the_kernel_stored_in_shared_memory_is_named_as_such() {
    let moe = "__global__ void moe_permute(const float* in, float* out, const int* expert_of, int* expert_count,\n                            const int* expert_offset, int n_tokens, int d) {\n    int t = blockIdx.x;\n    if (t >= n_tokens) return;\n    int e = expert_of[t];\n    __shared__ int slot;\n    if (threadIdx.x == 0) slot = atomicAdd(&expert_count[e], 1);\n    __syncthreads();\n    int row = expert_offset[e] + slot;\n    for (int c = threadIdx.x; c < d; c += blockDim.x)\n        out[row * d + c] = in[t * d + c];\n}\n";
    let mut sc = cuda(
        moe,
        "64",
        vec![spec("expert_of=uniform(0, 4, n=8)"), spec("expert_offset=arange(0, 2, n=4)")],
        &["n_tokens=8", "d=64"],
    );
    sc.grid = Dim3::linear(8);
    let e = sc.run().expect_err("the slot is not followed").error;
    assert_eq!((e.line, e.column), (11, 13));
    assert!(
        e.message.contains("a value read from shared memory at 9:34, which the kernel wrote there"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("--data"), "{}", e.message);
}
