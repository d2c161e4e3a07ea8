//! ldmatrix, stmatrix and cp.async in every input language: SASS (`LDSM`, `STSM`, `LDGSTS`), PTX and CUDA
//! (inline PTX, `__pipeline_memcpy_async`, per-thread `cuda::memcpy_async`), the CC each needs, and a small
//! kernel compiled by real compilers (tests/data/async/, see its README) that gives the same counts from its
//! CUDA, its PTX and its SASS, line by line. Expected numbers cite docs/model.md#ldmatrix-and-stmatrix (ldmatrix: one phase per
//! matrix, rows 128 bytes apart 8-way, x4 = 32 wavefronts, the 128-byte swizzle 4) and G (cp.async: a global
//! load's sectors and a shared store's wavefronts).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::process::Command;
use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::model::arch::Cc;
use warpscope::scenario::Scenario;
use warpscope::Instr;

mod common;

fn scenario(lang: Lang, text: &str, kernel: Option<&str>, cc: &str) -> Scenario {
    Scenario { cc: Cc::parse(cc).expect("cc"), ..common::scenario(lang, text, "32", kernel) }
}

/// Each instruction's text and one metric of it.
fn metric(r: &ProgramResult, name: &str) -> Vec<(String, u64)> {
    r.instructions.iter().filter_map(|i| i.ncu.get(name).map(|v| (i.op.clone(), *v))).collect()
}

fn err(lang: Lang, text: &str, cc: &str) -> String {
    match scenario(lang, text, None, cc).run() {
        Ok(_) => panic!("expected an error for {text}"),
        Err(e) => e.to_string(),
    }
}

const LDSM_WAVES: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum";
const STSM_WAVES: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum";
const LDGSTS_WAVES: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum";
const LDGSTS_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum";

fn pairs(v: &[(&str, u64)]) -> Vec<(String, u64)> {
    v.iter().map(|(s, n)| (s.to_string(), *n)).collect()
}

#[test]
fn sass_ldsm_and_stsm_forms_count_one_phase_per_matrix() {
    // R2 = tid * 128: each lane's row is 128 bytes after the last, all in bank group 0 (docs/model.md#ldmatrix-and-stmatrix: 8-way).
    // x4 = 4 phases of 8 = 32; .2 (threads 0-15) = 16; one matrix (threads 0-7) = 8; STSM the same as LDSM.
    // R6 = R2 ^ ((tid & 7) << 4): the 128-byte swizzle x ^ ((x >> 3) & 0x70) for x = 128 * tid, since
    // (128 * tid >> 3) & 0x70 = 16 * (tid & 7): 8 different 16-byte groups per phase, 1 each, 4 in all.
    let sass = "S2R R0, SR_TID.X ;
IMAD.SHL.U32 R2, R0, 0x80, RZ ;
LDSM.16.M88.4 R4, [R2] ;
LDSM.16.MT88.2 R8, [R2+0x100] ;
LDSM.16.M88 R8, [R2] ;
STSM.16.M88.4 [R2], R4 ;
LOP3.LUT R3, R0, 0x7, RZ, 0xc0, !PT ;
IMAD.SHL.U32 R3, R3, 0x10, RZ ;
LOP3.LUT R6, R2, R3, RZ, 0x3c, !PT ;
LDSM.16.M88.4 R8, [R6+UR4+0x0] ;
EXIT ;";
    let mut sc = scenario(Lang::Sass, sass, None, "9.0");
    sc.sets.push("UR4=0".into());
    let r = common::ok(&sc);
    assert_eq!(
        metric(&r, LDSM_WAVES),
        pairs(&[("LDSM.16.M88.4", 32), ("LDSM.16.MT88.2", 16), ("LDSM.16.M88", 8), ("LDSM.16.M88.4", 4)])
    );
    assert_eq!(metric(&r, STSM_WAVES), pairs(&[("STSM.16.M88.4", 32)]));
}

#[test]
fn sass_ldgsts_costs_its_global_source_and_its_shared_destination() {
    // Lane i copies 16 bytes from global 16 * i (R2.64) to shared 16 * i (R5): 512 contiguous bytes are
    // 16 sectors (docs/model.md#asynchronous-copies: the global side as a 16-byte load) and 4 wavefronts (a 16-byte store: 4 phases
    // of 8 lanes, each 128 contiguous bytes). Adding 0x10 to the source straddles one more sector: 17; the
    // shared side does not change. desc[UR6] is a memory descriptor, not part of the address.
    let sass = "S2R R0, SR_TID.X ;
IMAD.SHL.U32 R5, R0, 0x10, RZ ;
IMAD.WIDE.U32 R2, R0, 0x10, RZ ;
LDGSTS.E.BYPASS.LTC128B.128 [R5+0x200], desc[UR6][R2.64+0x10] ;
LDGSTS.E.BYPASS.LTC128B.128 [R5], [R2.64] ;
LDGDEPBAR ;
DEPBAR.LE SB0, 0x0 ;
ARRIVES.LDGSTSBAR.64.ARRIVEALL [URZ+0x800] ;
EXIT ;";
    let r = common::ok(&scenario(Lang::Sass, sass, None, "8.0"));
    let t = "LDGSTS.E.BYPASS.LTC128B.128";
    assert_eq!(metric(&r, LDGSTS_SECTORS), pairs(&[(t, 17), (t, 16)]));
    assert_eq!(metric(&r, LDGSTS_WAVES), pairs(&[(t, 4), (t, 4)]));
}

#[test]
fn ptx_forms_become_their_sass_instructions() {
    // %r2 = 128 * tid as above (docs/model.md#ldmatrix-and-stmatrix): x4 32, x2 16, x1 8 wavefronts; stmatrix x4 32. cp.async.ca of
    // 4 and 8 bytes from 4 * tid and 8 * tid: 128 bytes = 4 sectors, 1 wavefront; 256 bytes = 8 sectors,
    // 2 wavefronts; .cg of 16 bytes: 16 sectors, 4 wavefronts (docs/model.md#asynchronous-copies). The commits and waits move nothing.
    let ptx = ".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 g)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [g];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 7;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r3, %r4, %r5, %r6}, [%r2];
    ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%r3, %r4}, [%r2];
    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r3}, [%r2];
    stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r2], {%r3, %r4, %r5, %r6};
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    shl.b32 %r7, %r1, 2;
    cp.async.ca.shared.global [%r7], [%rd4], 4;
    mul.wide.u32 %rd5, %r1, 8;
    add.s64 %rd6, %rd2, %rd5;
    shl.b32 %r8, %r1, 3;
    cp.async.ca.shared.global.L2::128B [%r8], [%rd6], 8;
    mul.wide.u32 %rd7, %r1, 16;
    add.s64 %rd8, %rd2, %rd7;
    shl.b32 %r9, %r1, 4;
    cp.async.cg.shared.global [%r9], [%rd8], 16, 16;
    cp.async.commit_group;
    cp.async.wait_group 0;
    cp.async.wait_all;
    ret;
}";
    let mut sc = scenario(Lang::Ptx, ptx, None, "9.0");
    sc.sets.push("g=0x10000000".into());
    let r = common::ok(&sc);
    assert_eq!(metric(&r, LDSM_WAVES), pairs(&[("LDSM.16.M88.4", 32), ("LDSM.16.MT88.2", 16), ("LDSM.16.M88", 8)]));
    assert_eq!(metric(&r, STSM_WAVES), pairs(&[("STSM.16.M88.4", 32)]));
    let copies = [("LDGSTS.E.32", 4), ("LDGSTS.E.LTC128B.64", 8), ("LDGSTS.E.BYPASS.128", 16)];
    assert_eq!(metric(&r, LDGSTS_SECTORS), pairs(&copies));
    assert_eq!(metric(&r, LDGSTS_WAVES), pairs(&[(copies[0].0, 1), (copies[1].0, 2), (copies[2].0, 4)]));
    // cp.async.cg copies 16 bytes only (PTX ISA, "cp.async").
    let bad = ptx.replace("[%rd8], 16, 16;", "[%rd8], 8;");
    let e = err(Lang::Ptx, &bad, "9.0");
    assert!(e.contains("27:5: cp.async.cg copies 16 bytes per thread, not 8"), "{e}");
}

const CUDA: &str = r#"#include <cuda_pipeline.h>
__global__ void k(const float4 *g, const float2 *h) {
    __shared__ unsigned short tile[32 * 64];
    __shared__ float4 buf[32];
    __shared__ float2 half[32];
    unsigned a, b, c, d;
    unsigned row = static_cast<unsigned>(__cvta_generic_to_shared(&tile[threadIdx.x * 64]));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(a), "=r"(b) : "r"(row));
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(row), "r"(a));
    uint32_t s = (uint32_t)__cvta_generic_to_shared(&buf[threadIdx.x]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(s), "l"(g + threadIdx.x));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group %0;" :: "n"(0));
    asm volatile("cp.async.wait_all;" ::: "memory");
    __pipeline_memcpy_async(&half[threadIdx.x], &h[threadIdx.x], sizeof(float2));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    cuda::memcpy_async(&buf[threadIdx.x], &g[threadIdx.x + 1], cuda::aligned_size_t<16>(16), pipe);
}
"#;

#[test]
fn cuda_inline_ptx_and_copy_calls_become_their_sass_instructions() {
    // tile rows are 64 halves = 128 bytes: docs/model.md#ldmatrix-and-stmatrix, x4 = 32, x2 = 16, x1 = 8. The copies (docs/model.md#asynchronous-copies):
    // 16 bytes per lane from g + tid: 16 sectors, 4 wavefronts; __pipeline_memcpy_async of 8 bytes is
    // cp.async.ca of 8 (cuda_pipeline_helpers.h): 8 sectors, 2 wavefronts; cuda::memcpy_async of
    // aligned_size_t<16>(16) from g + tid + 1 starts 16 bytes into a sector: 17 sectors, 4 wavefronts.
    let mut sc = scenario(Lang::Cuda, CUDA, None, "9.0");
    sc.sets.push("pipe=0".into());
    let r = common::ok(&sc);
    assert_eq!(metric(&r, LDSM_WAVES), pairs(&[("LDSM.16.M88.4", 32), ("LDSM.16.MT88.2", 16)]));
    assert_eq!(metric(&r, STSM_WAVES), pairs(&[("STSM.16.M88", 8)]));
    let copies = [("LDGSTS.E.BYPASS.128", 16), ("LDGSTS.E.64", 8), ("LDGSTS.E.BYPASS.128", 17)];
    assert_eq!(metric(&r, LDGSTS_SECTORS), pairs(&copies));
    assert_eq!(metric(&r, LDGSTS_WAVES), pairs(&[(copies[0].0, 4), (copies[1].0, 2), (copies[2].0, 4)]));
}

#[test]
fn cuda_refuses_what_is_not_one_per_thread_copy_or_a_known_asm() {
    let kernel = |body: &str| {
        format!(
            "__global__ void k(const float4 *g) {{\n    __shared__ float4 buf[64];\n    unsigned x = 0;\n{body}\n}}\n"
        )
    };
    let group = kernel("    auto block = cooperative_groups::this_thread_block();\n    cooperative_groups::memcpy_async(block, buf, g, sizeof(float4) * 32);");
    let e = err(Lang::Cuda, &group, "8.0");
    assert!(e.contains("5:5: `memcpy_async` with a group copies one block of bytes"), "{e}");
    assert!(e.contains("does not document"), "{e}");
    let big = kernel("    __pipeline_memcpy_async(&buf[threadIdx.x], &g[threadIdx.x], 32);");
    let e = err(Lang::Cuda, &big, "8.0");
    assert!(e.contains("4:65: `__pipeline_memcpy_async` of 32 bytes is not one cp.async"), "{e}");
    // An instruction that moves no memory (`mov`, `mma`) runs, and its outputs are unknown: an index made of one
    // is an error that names the asm statement.
    let other = kernel(
        r#"    asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));
    buf[x] = g[0];"#,
    );
    let e = err(Lang::Cuda, &other, "8.0");
    assert!(e.contains("5:9: the index depends on the output of the asm statement at 4:18"), "{e}");
    // Memory through a generic address or a bulk copy is refused with the reason.
    let generic = kernel(r#"    asm volatile("ld.u32 %0, [%1];" : "=r"(x) : "l"(g));"#);
    let e = err(Lang::Cuda, &generic, "8.0");
    assert!(e.contains("4:18: asm: `ld.u32` reads through a generic address"), "{e}");
    let into_global = kernel(r#"    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(x), "l"(g));"#);
    assert!(common::ok(&scenario(Lang::Cuda, &into_global, None, "8.0")).instructions.len() == 1);
    let from_shared = kernel("    __pipeline_memcpy_async(&buf[threadIdx.x], &buf[0], 16);");
    let e = err(Lang::Cuda, &from_shared, "8.0");
    assert!(e.contains("4:48: `__pipeline_memcpy_async` copies from global memory"), "{e}");
    // Copies that read fewer bytes than they write (zero-fill) would be counted as full copies: refused, in
    // every form (PTX ISA cp.async src-size / ignore-src; cuda_pipeline's zfill; SASS LDGSTS.ZFILL).
    let zfill = kernel("    __pipeline_memcpy_async(&buf[threadIdx.x], &g[threadIdx.x], 16, 4);");
    assert!(err(Lang::Cuda, &zfill, "8.0").contains("is not modelled"));
    let none = kernel("    __pipeline_memcpy_async(&buf[threadIdx.x], &g[threadIdx.x], 16, 0);");
    assert!(common::ok(&scenario(Lang::Cuda, &none, None, "8.0")).instructions.len() == 1);
    let src_size = kernel(r#"    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 8;" :: "r"(x), "l"(g));"#);
    assert!(err(Lang::Cuda, &src_size, "8.0").contains("asm: a cp.async that reads fewer bytes"));
    let e = Instr::parse("LDGSTS.E.BYPASS.128.ZFILL").unwrap_err();
    assert!(e.message.starts_with("LDGSTS.ZFILL reads fewer bytes than it copies"), "{}", e.message);
}

/// The CLI refuses each instruction before the CC that has it, with exit code 2 and the first CC that does
/// (PTX ISA target notes: ldmatrix sm_75, cp.async sm_80, stmatrix sm_90).
#[test]
fn each_instruction_is_refused_before_its_first_cc() {
    let dir = std::env::temp_dir().join(format!("warpscope-async-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "ldsm.sass",
            "--sass",
            "LDSM.16.M88.4 R4, [R2] ;\n",
            "7.0",
            "1:1: `LDSM.16.M88.4` (ldmatrix) needs CC 7.5 or later",
        ),
        (
            "cp.sass",
            "--sass",
            "LDGSTS.E.128 [R5], [R2.64] ;\n",
            "7.5",
            "1:1: `LDGSTS.E.128` (cp.async) needs CC 8.0 or later",
        ),
        (
            "stsm.sass",
            "--sass",
            "STSM.16.M88.4 [R2], R4 ;\n",
            "8.9",
            "1:1: `STSM.16.M88.4` (stmatrix) needs CC 9.0 or later",
        ),
    ];
    for (file, flag, text, cc, want) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
            .args([
                "analyze",
                flag,
                path.to_str().unwrap(),
                "--cc",
                cc,
                "--set",
                "R2=0",
                "--set",
                "R3=0",
                "--set",
                "R5=0",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(stderr.contains(want), "{file}: {stderr}");
    }
    // The same refusal from PTX and CUDA, at the instruction's line.
    let e = err(Lang::Cuda, CUDA, "7.0");
    assert!(e.contains("8:19: `LDSM.16.M88.4` (ldmatrix) needs CC 7.5 or later"), "{e}");
    let e = err(Lang::Cuda, CUDA, "8.0");
    assert!(e.contains("10:19: `STSM.16.M88` (stmatrix) needs CC 9.0 or later"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Metrics summed per line of async_copy.cu: the CUDA analysis's own line, the compiler's line information
/// for PTX and SASS. `__pipeline_memcpy_async`'s cp.async carries the line of cuda_pipeline_helpers.h where
/// its asm is; it is counted on the call's line (line 32).
fn by_line(r: &ProgramResult, lang: Lang) -> BTreeMap<u32, BTreeMap<String, u64>> {
    let mut out: BTreeMap<u32, BTreeMap<String, u64>> = BTreeMap::new();
    for i in &r.instructions {
        let line = match (lang, &i.source) {
            (Lang::Cuda, _) => i.line as u32,
            (_, Some(s)) if s.file.ends_with("async_copy.cu") => s.line,
            (_, Some(s)) if s.file.ends_with("cuda_pipeline_helpers.h") => 32,
            _ => panic!("`{}` has no line of async_copy.cu", i.text),
        };
        let sums = out.entry(line).or_default();
        for (k, v) in &i.ncu {
            *sums.entry(k.clone()).or_insert(0) += v;
        }
    }
    out
}

#[test]
fn a_compiled_kernel_costs_the_same_from_cuda_ptx_and_sass_line_by_line() {
    let data =
        |f: &str| std::fs::read_to_string(format!("{}/tests/data/async/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let cu = data("async_copy.cu");
    // clang's PTX and the SASS ptxas made from it, for sm_80 and sm_90 (tests/data/async/README.md).
    for (cc, ptx, sass) in [("8.0", "sm_80.ptx", "sm_80.sass"), ("9.0", "sm_80.ptx", "sm_90.sass")] {
        for kernel in ["tile_plain", "tile_swizzled"] {
            let c = by_line(&common::ok(&scenario(Lang::Cuda, &cu, Some(kernel), cc)), Lang::Cuda);
            let p = by_line(&common::ok(&scenario(Lang::Ptx, &data(ptx), Some(kernel), cc)), Lang::Ptx);
            let s = by_line(&common::ok(&scenario(Lang::Sass, &data(sass), Some(kernel), cc)), Lang::Sass);
            assert_eq!(c, p, "{kernel} {ptx}: CUDA and PTX, line by line");
            assert_eq!(c, s, "{kernel} {sass}: CUDA and SASS, line by line");
            // The copy loop runs 2048 / 8 / 32 = 8 times, each 512 contiguous bytes: 16 sectors and 4
            // wavefronts (docs/model.md#asynchronous-copies), 128 and 32 in all; the swizzle permutes 16-byte chunks within each
            // 128-byte row, so the copy costs the same. ldmatrix.x4 on rows 128 bytes apart: 32 wavefronts,
            // swizzled 4 (docs/model.md#ldmatrix-and-stmatrix).
            let (copy, ldsm) = if kernel == "tile_plain" { (14, 21) } else { (32, 41) };
            assert_eq!(c[&copy][LDGSTS_SECTORS], 128, "{kernel}");
            assert_eq!(c[&copy][LDGSTS_WAVES], 32, "{kernel}");
            assert_eq!(c[&ldsm][LDSM_WAVES], if kernel == "tile_plain" { 32 } else { 4 }, "{kernel}");
        }
    }
    // NVRTC's line information puts the ldmatrix asm on its last line (23, not 21): compared kernel by kernel.
    for kernel in ["tile_plain", "tile_swizzled"] {
        let c = common::totals(&common::ok(&scenario(Lang::Cuda, &cu, Some(kernel), "9.0")));
        let p = common::totals(&common::ok(&scenario(Lang::Ptx, &data("nvrtc_sm_90.ptx"), Some(kernel), "9.0")));
        let s = common::totals(&common::ok(&scenario(Lang::Sass, &data("nvrtc_sm_90.sass"), Some(kernel), "9.0")));
        assert_eq!(c, p, "{kernel}: CUDA and NVRTC's PTX");
        assert_eq!(c, s, "{kernel}: CUDA and the SASS of NVRTC's PTX");
    }
}
