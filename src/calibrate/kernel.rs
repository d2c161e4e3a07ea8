//! The probe kernels, written as CUDA text: per probe one kernel that issues its one measured load or store
//! as inline PTX ([`ptx_op`]), the lane tables of every probe, and a host `main` that runs each kernel once
//! and writes what it did as JSON ([`cuda_source`]). Nothing here runs CUDA: `hw/calibrate.sh` compiles the
//! text with nvcc, `hw/check-offline.sh` with clang and ptxas.

use super::probes::{plan, Plan, Probe};
use super::MAX_ISSUES;
use crate::model::access::{CacheOp, Instr, Space, WARP_LANES};
use std::fmt::Write as _;

/// The PTX mnemonic for an instruction: `ld`/`st`, the state space (none for generic), the cache operator
/// (global only), and the width as `u8`, `u16`, `u32` or a vector of them.
pub fn ptx_op(instr: &Instr) -> String {
    let store = instr.is_store();
    let space = match instr.base.fixed_space() {
        Some(Space::Global) => ".global",
        Some(Space::Shared) => ".shared",
        Some(Space::Local) => ".local",
        None => "",
    };
    let cop = if instr.base.fixed_space() != Some(Space::Global) {
        ""
    } else if store {
        match instr.cop {
            CacheOp::Cg => ".cg",
            CacheOp::Cs => ".cs",
            CacheOp::Wt => ".wt",
            _ => "",
        }
    } else {
        match instr.cop {
            CacheOp::Cg => ".cg",
            CacheOp::Cs => ".cs",
            CacheOp::Lu => ".lu",
            CacheOp::Cv => ".cv",
            CacheOp::Ci => ".nc",
            _ => "",
        }
    };
    let ty = match instr.size_bytes {
        1 => ".u8",
        2 => ".u16",
        4 => ".u32",
        8 => ".v2.u32",
        _ => ".v4.u32",
    };
    format!("{}{space}{cop}{ty}", if store { "st" } else { "ld" })
}

fn registers(size: u32) -> usize {
    match size {
        8 => 2,
        16 => 4,
        _ => 1,
    }
}

/// The kernel of one probe.
fn kernel(out: &mut String, p: &Probe, plan: &Plan) {
    let instr = p.instr();
    let op = ptx_op(instr);
    let regs = registers(instr.size_bytes);
    let fixed = instr.base.fixed_space();
    let _ = writeln!(out, "// {}: {}", p.id, p.title.replace('\n', " "));
    let _ = writeln!(
        out,
        "extern \"C\" __global__ void __launch_bounds__(1024) {}(char* gbase, unsigned n, unsigned key) {{",
        p.kernel_name()
    );
    if plan.local_bytes > 0 {
        let _ = writeln!(out, "  __align__(16) unsigned char ws_local[{}];", plan.local_bytes.div_ceil(16) * 16);
    }
    out.push_str("  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n");
    out.push_str("  if (t >= n) return;\n");
    out.push_str("  unsigned long long e = ws_lanes[t];\n");
    out.push_str("  if (e == WS_INACTIVE) return;\n");
    out.push_str("  unsigned long long off = e & WS_OFFSET_MASK;\n");
    // The address operand: a window address for LDS/LDL/STS/STL (converted from the generic pointer inside
    // the asm), a generic pointer otherwise.
    let (ptr, cvta) = match fixed {
        Some(Space::Global) => ("gbase + off", None),
        Some(Space::Shared) => ("ws_smem + off", Some("shared")),
        Some(Space::Local) => ("ws_local + off", Some("local")),
        None => {
            out.push_str("  unsigned sp = (unsigned)(e >> 62);\n");
            let local = if plan.local_bytes > 0 { "ws_local + off" } else { "gbase + off" };
            let _ =
                writeln!(out, "  char* p = sp == 1 ? (char*)ws_smem + off : sp == 2 ? (char*)({local}) : gbase + off;");
            ("p", None)
        }
    };
    let vec = |first: usize| -> String {
        if regs == 1 {
            format!("%{first}")
        } else {
            let r: Vec<String> = (first..first + regs).map(|i| format!("%{i}")).collect();
            format!("{{{}}}", r.join(", "))
        }
    };
    let (asm, operands) = if instr.is_store() {
        // Operands: %0 address, %1.. values.
        let addr = if let Some(space) = cvta {
            format!("{{ .reg .u64 a; cvta.to.{space}.u64 a, %0; {op} [a], {}; }}", vec(1))
        } else {
            format!("{op} [%0], {};", vec(1))
        };
        let values: Vec<String> = (0..regs).map(|i| format!("\"r\"(t + {i}u)")).collect();
        (addr, format!(": : \"l\"({ptr}), {} : \"memory\"", values.join(", ")))
    } else {
        // Operands: %0.. values, then the address.
        let addr = if let Some(space) = cvta {
            format!("{{ .reg .u64 a; cvta.to.{space}.u64 a, %{regs}; {op} {}, [a]; }}", vec(0))
        } else {
            format!("{op} {}, [%{regs}];", vec(0))
        };
        let outs: Vec<String> = (0..regs).map(|i| format!("\"=r\"(r{i})")).collect();
        (addr, format!(": {} : \"l\"({ptr}) : \"memory\"", outs.join(", ")))
    };
    if !instr.is_store() {
        let decl: Vec<String> = (0..regs).map(|i| format!("r{i}")).collect();
        let _ = writeln!(out, "  unsigned {};", decl.join(", "));
    }
    let _ = writeln!(out, "  asm volatile(\"{asm}\" {operands});");
    if !instr.is_store() {
        let sum: Vec<String> = (0..regs).map(|i| format!("r{i}")).collect();
        let _ = writeln!(out, "  ws_use({}, key);", sum.join(" ^ "));
    }
    out.push_str("}\n\n");
}

/// The whole CUDA program for `probes`: one kernel each, their lane tables, and a `main` that runs every
/// kernel once and writes the device's description as JSON to the path in `argv[1]`.
pub fn cuda_source(probes: &[Probe]) -> String {
    // probes() returns only probes that plan; any other is left out here.
    let (probes, plans): (Vec<&Probe>, Vec<Plan>) =
        probes.iter().filter_map(|p| plan(p).ok().map(|pl| (p, pl))).unzip();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Generated by `warpscope calibrate emit` ({} probes). Do not edit: change warpscope's presets or\n\
         // src/calibrate/ and emit again. Each kernel issues exactly one measured memory instruction per warp;\n\
         // hw/calibrate.sh compiles this with nvcc and profiles it with Nsight Compute.\n",
        probes.len()
    );
    out.push_str(
        "#ifndef __CUDA_ARCH__\n#include <cstdio>\n#include <cstdlib>\n#include <cuda_runtime.h>\n#endif\n\n\
         #define WS_INACTIVE 0xFFFFFFFFFFFFFFFFull\n#define WS_OFFSET_MASK 0x3FFFFFFFFFFFFFFFull\n",
    );
    let _ = writeln!(out, "#define WS_MAX_LANES {}\n", MAX_ISSUES * WARP_LANES);
    out.push_str("// Per thread: space << 62 | offset (global offsets from the probe's base), read with LDC.\n");
    out.push_str("__constant__ unsigned long long ws_lanes[WS_MAX_LANES];\n");
    out.push_str("extern __shared__ __align__(128) unsigned char ws_smem[];\n\n");
    out.push_str(USE);
    out.push_str(
        "// The shared-window address of dynamic shared memory: banks follow it, so it must be 128-byte aligned.\n\
         extern \"C\" __global__ void wsx_shared_base(unsigned long long* out) {\n\
         \x20 unsigned long long a;\n\
         \x20 asm volatile(\"cvta.to.shared.u64 %0, %1;\" : \"=l\"(a) : \"l\"(ws_smem));\n\
         \x20 *out = a;\n}\n\n",
    );
    for (p, plan) in probes.iter().zip(&plans) {
        kernel(&mut out, p, plan);
    }
    // The host side: nvcc compiles it once; device passes (and hw/check-sass.sh) skip it.
    out.push_str("#ifndef __CUDA_ARCH__\n");
    for (i, plan) in plans.iter().enumerate() {
        let _ = write!(out, "static const unsigned long long ws_t{i}[] = {{");
        for (w, row) in plan.lanes.iter().enumerate() {
            out.push_str(if w == 0 { "\n  " } else { ",\n  " });
            let cells: Vec<String> = row.iter().map(|&v| format!("0x{v:x}ull")).collect();
            out.push_str(&cells.join(","));
        }
        out.push_str("\n};\n");
    }
    out.push_str(
        "\ntypedef void (*WsKernel)(char*, unsigned, unsigned);\n\
         struct WsProbe { const char* id; const char* kernel; WsKernel k; const unsigned long long* lanes;\n\
         \x20 unsigned warps; unsigned long long global_span; unsigned shared_bytes; };\n\
         static const WsProbe ws_probes[] = {\n",
    );
    for (i, (p, plan)) in probes.iter().zip(&plans).enumerate() {
        let _ = writeln!(
            out,
            "  {{\"{}\", \"{}\", {}, ws_t{i}, {}, {}ull, {}}},",
            p.id,
            p.kernel_name(),
            p.kernel_name(),
            plan.lanes.len(),
            plan.global_span,
            plan.shared_bytes
        );
    }
    out.push_str("};\n\n");
    out.push_str(MAIN);
    out
}

/// Keeps a loaded value live without another memory instruction. A value used only under a run-time condition
/// lets ptxas sink the load into that branch (so that it would never run), and a comparison with a constant
/// that a narrow load cannot reach is folded away with the load; here the value is compared with `key`, a
/// kernel argument (0x9E3779B9, which no buffer holds), and the outcome feeds a sleep of 0 or 1 ns
/// (`nanosleep`, CC 7.0+) or, before Volta, a trap.
const USE: &str = "__device__ __forceinline__ void ws_use(unsigned v, unsigned key) {\n\
#if __CUDA_ARCH__ >= 700\n\
\x20 asm volatile(\"{ .reg .pred q; .reg .u32 d; setp.eq.u32 q, %0, %1; selp.u32 d, 1, 0, q; nanosleep.u32 d; }\" : : \"r\"(v), \"r\"(key));\n\
#else\n\
\x20 if (v == key) asm volatile(\"trap;\");\n\
#endif\n\
}\n\n";

const MAIN: &str = r#"#define WS_CHECK(call) do { cudaError_t err_ = (call); if (err_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); exit(2); } } while (0)

static void json_string(FILE* f, const char* s) {
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if ((unsigned char)*s >= 0x20) fputc(*s, f);
  }
  fputc('"', f);
}

int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s DEVICE_JSON\n", argv[0]); return 2; }
  const unsigned count = sizeof(ws_probes) / sizeof(ws_probes[0]);
  int dev = 0;
  WS_CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  WS_CHECK(cudaGetDeviceProperties(&prop, dev));
  int driver = 0, runtime = 0;
  WS_CHECK(cudaDriverGetVersion(&driver));
  WS_CHECK(cudaRuntimeGetVersion(&runtime));
  unsigned long long span = 0;
  for (unsigned i = 0; i < count; ++i) if (ws_probes[i].global_span > span) span = ws_probes[i].global_span;
  char* raw = 0;
  WS_CHECK(cudaMalloc(&raw, span + 8192));
  WS_CHECK(cudaMemset(raw, 0, span + 8192));
  char* gbase = (char*)(((unsigned long long)raw + 4095) & ~4095ull);
  unsigned long long* shared_base = 0;
  WS_CHECK(cudaMalloc(&shared_base, sizeof(unsigned long long)));
  wsx_shared_base<<<1, 1, 16>>>(shared_base);
  WS_CHECK(cudaGetLastError());
  unsigned long long sbase = 0;
  WS_CHECK(cudaMemcpy(&sbase, shared_base, sizeof sbase, cudaMemcpyDeviceToHost));
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  fprintf(f, "{\n  \"gpu\": ");
  json_string(f, prop.name);
  fprintf(f, ",\n  \"cc\": \"%d.%d\",\n  \"cuda_driver\": %d,\n  \"cuda_runtime\": %d,\n  \"shared_base\": %llu,\n  \"probes\": [",
          prop.major, prop.minor, driver, runtime, sbase);
  // A failed probe is recorded in the file and the run goes on; after an error that loses the CUDA context
  // (an illegal address, say), the remaining probes are recorded as not run. The exit code is 0 once the
  // file is complete, so that ncu's results for the other probes are kept.
  unsigned failed = 0;
  const char* lost = 0;
  for (unsigned i = 0; i < count; ++i) {
    const WsProbe& p = ws_probes[i];
    char why[256] = "";
    cudaError_t err = cudaSuccess;
    if (lost) {
      snprintf(why, sizeof why, "not run: the CUDA context was lost at probe %s", lost);
    } else if (p.shared_bytes > prop.sharedMemPerBlockOptin) {
      snprintf(why, sizeof why, "needs %u bytes of shared memory; this GPU allows %zu per block", p.shared_bytes,
               prop.sharedMemPerBlockOptin);
    } else {
      err = cudaMemcpyToSymbol(ws_lanes, p.lanes, p.warps * 32 * sizeof(unsigned long long));
      if (err == cudaSuccess && p.shared_bytes > 48 * 1024)
        err = cudaFuncSetAttribute((const void*)p.k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.shared_bytes);
      if (err == cudaSuccess) {
        unsigned threads = p.warps * 32;
        unsigned block = threads < 1024 ? threads : 1024;
        p.k<<<(threads + block - 1) / block, block, p.shared_bytes>>>(gbase, threads, 0x9E3779B9u);
        err = cudaGetLastError();
        if (err == cudaSuccess) err = cudaDeviceSynchronize();
      }
      if (err != cudaSuccess) {
        snprintf(why, sizeof why, "%s", cudaGetErrorString(err));
        // A sticky error survives cudaGetLastError(): every later call fails too.
        cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess) lost = p.id;
      }
    }
    fprintf(f, "%s\n    {\"id\": ", i ? "," : "");
    json_string(f, p.id);
    fprintf(f, ", \"kernel\": \"%s\", \"warps\": %u, \"error\": ", p.kernel, p.warps);
    if (why[0]) { json_string(f, why); fprintf(f, "}"); ++failed; fprintf(stderr, "probe %s: %s\n", p.id, why); }
    else fprintf(f, "null}");
  }
  fprintf(f, "\n  ]\n}\n");
  fclose(f);
  printf("ran %u probes on %s (CC %d.%d), %u failed\n", count, prop.name, prop.major, prop.minor, failed);
  return 0;
}
#endif
"#;
