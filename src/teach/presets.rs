//! The named examples shared by the CLI (`warpscope presets`), the page's preset menu and the tests: each is
//! a complete scenario with an explanation a student can read. One test runs them all against a golden
//! snapshot, so adding a preset adds a test case.

use crate::lang::Lang;
use crate::model::arch::{BankMode, Cc, L1Choice, SharedModel};
use crate::model::cost::Config;
use crate::program::launch::Dim3;
use crate::scenario::Scenario;

/// A named example.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    /// Stable identifier (CLI, URLs).
    pub name: &'static str,
    /// A short title for menus.
    pub title: &'static str,
    /// What it shows and why, in two or three sentences.
    pub explanation: &'static str,
    /// The compute capability.
    pub cc: Cc,
    /// The input language.
    pub lang: Lang,
    /// The pattern.
    pub text: &'static str,
    /// The instruction for `expr` and `addresses`.
    pub op: &'static str,
    /// blockDim as `X[xY[xZ]]`.
    pub block: Dim3,
    /// `NAME=VALUE` settings.
    pub sets: &'static [&'static str],
    /// L1 choice.
    pub l1: L1Choice,
    /// Kepler bank mode.
    pub bank_mode: BankMode,
    /// How 64/128-bit shared accesses whose lanes share addresses count on CC 7.0+.
    pub shared_model: SharedModel,
    /// gridDim (one block unless the example is about the grid).
    pub grid: Dim3,
    /// Whether the modelled memory system (L1, L2 and DRAM across the grid's warps and blocks) is on.
    pub caches: bool,
}

impl Preset {
    /// The scenario this preset opens.
    pub fn scenario(&self) -> Scenario {
        Scenario {
            cc: self.cc,
            lang: self.lang,
            text: self.text.to_string(),
            op: self.op.to_string(),
            block: self.block,
            grid: self.grid,
            caches: self.caches.then(crate::analysis::caches::CacheSettings::default),
            sets: self.sets.iter().map(|s| s.to_string()).collect(),
            config: Config {
                l1: self.l1,
                bank_mode: self.bank_mode,
                shared_model: self.shared_model,
                ..Config::default()
            },
            lane_mask: crate::model::access::LaneSet::ALL,
            ..Scenario::default()
        }
    }
}

/// Finds a preset by name.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

const fn expr(
    name: &'static str,
    title: &'static str,
    explanation: &'static str,
    cc: Cc,
    op: &'static str,
    text: &'static str,
) -> Preset {
    Preset {
        name,
        title,
        explanation,
        cc,
        lang: Lang::Expr,
        text,
        op,
        block: Dim3::linear(32),
        sets: &[],
        l1: L1Choice::Default,
        bank_mode: BankMode::FourByte,
        shared_model: SharedModel::Measured,
        grid: Dim3::linear(1),
        caches: false,
    }
}

const fn code(
    name: &'static str,
    title: &'static str,
    explanation: &'static str,
    lang: Lang,
    block: Dim3,
    text: &'static str,
) -> Preset {
    Preset {
        name,
        title,
        explanation,
        cc: Cc::new(8, 0),
        lang,
        text,
        op: "LDG.E.32",
        block,
        sets: &[],
        l1: L1Choice::Default,
        bank_mode: BankMode::FourByte,
        shared_model: SharedModel::Measured,
        grid: Dim3::linear(1),
        caches: false,
    }
}

const A100: Cc = Cc::new(8, 0);
const ONE_WARP: Dim3 = Dim3::linear(32);
const TILE_BLOCK: Dim3 = Dim3 { x: 32, y: 8, z: 1 };

/// Every preset, in the order the menu shows them.
pub const PRESETS: [Preset; 40] = [
    expr(
        "coalesced",
        "Coalesced 4-byte loads",
        "Lane i reads the i-th float: the warp touches 128 contiguous bytes, one line of four 32-byte sectors. This is the ideal global access (Best Practices Guide 9.2.1.1).",
        A100,
        "LDG.E.32",
        "4*lane",
    ),
    expr(
        "misaligned",
        "Misaligned by one word",
        "The same loads shifted by 4 bytes straddle two lines and need a fifth sector; efficiency drops to 80% (Best Practices Guide 9.2.1.2).",
        A100,
        "LDG.E.32",
        "4*lane + 4",
    ),
    expr(
        "strided",
        "Stride of two floats",
        "Every other float: 128 useful bytes spread over 256, so 8 sectors move for 4 sectors of data, 50% efficiency (Best Practices Guide 9.2.1.3).",
        A100,
        "LDG.E.32",
        "8*lane",
    ),
    expr(
        "scattered",
        "Uncoalesced: every lane in its own line",
        "A stride of 128 bytes puts each lane in a different line: 32 sectors for 128 useful bytes, 12.5% efficiency.",
        A100,
        "LDG.E.32",
        "128*lane",
    ),
    expr(
        "broadcast",
        "All lanes read one word",
        "Every lane loads the same address: one sector serves the whole warp. In shared memory the same pattern is a broadcast with no conflict.",
        A100,
        "LDG.E.32",
        "0x1000",
    ),
    code(
        "aos-vs-soa",
        "Array of structs vs struct of arrays",
        "Reading one field of a 12-byte struct leaves 8 of every 12 bytes unused (12 sectors); the same values stored as a separate array take 4 sectors.",
        Lang::Cuda,
        ONE_WARP,
        "struct Particle { float x, y, z; };\nParticle *aos;\nfloat *soa_x;\nint i = blockIdx.x * blockDim.x + threadIdx.x;\nfloat a = aos[i].x;    // AoS: lanes 12 bytes apart\nfloat b = soa_x[i];    // SoA: lanes 4 bytes apart\n",
    ),
    code(
        "matrix-row-vs-column",
        "Matrix row vs column",
        "In a row-major 1024x1024 matrix a warp reading a row touches 4 sectors; reading a column, its lanes are 4 KB apart and touch 32 lines.",
        Lang::Cuda,
        ONE_WARP,
        "const int N = 1024;\nfloat *m;\nfloat row = m[blockIdx.y * N + threadIdx.x];   // along a row\nfloat col = m[threadIdx.x * N + blockIdx.x];   // down a column\n",
    ),
    code(
        "transpose-naive",
        "Transpose through shared memory (naive)",
        "The tile is written by rows and read by columns: a column of a 32x32 float tile lies in one bank, so every read is a 32-way conflict (Best Practices Guide 9.2.3.3).",
        Lang::Cuda,
        TILE_BLOCK,
        "#define TILE 32\n#define ROWS 8\n__shared__ float tile[TILE][TILE];\nfloat *in, *out;\nconst int width = 1024;\nint x = blockIdx.x * TILE + threadIdx.x;\nint y = blockIdx.y * TILE + threadIdx.y;\nfor (int j = 0; j < TILE; j += ROWS)\n    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];\n__syncthreads();\nx = blockIdx.y * TILE + threadIdx.x;\ny = blockIdx.x * TILE + threadIdx.y;\nfor (int j = 0; j < TILE; j += ROWS)\n    out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];\n",
    ),
    code(
        "transpose-padded",
        "Transpose with a padded tile",
        "One extra column ([32][33]) shifts each row by one bank, so a column read touches 32 different banks: no conflicts (Best Practices Guide 9.2.3.3).",
        Lang::Cuda,
        TILE_BLOCK,
        "#define TILE 32\n#define ROWS 8\n__shared__ float tile[TILE][TILE + 1];\nfloat *in, *out;\nconst int width = 1024;\nint x = blockIdx.x * TILE + threadIdx.x;\nint y = blockIdx.y * TILE + threadIdx.y;\nfor (int j = 0; j < TILE; j += ROWS)\n    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];\n__syncthreads();\nx = blockIdx.y * TILE + threadIdx.x;\ny = blockIdx.x * TILE + threadIdx.y;\nfor (int j = 0; j < TILE; j += ROWS)\n    out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];\n",
    ),
    code(
        "transpose-swizzle",
        "Transpose with an XOR swizzle",
        "Storing element (r, c) at column c ^ r spreads every row and every column over all 32 banks without padding: conflict-free both ways.",
        Lang::Cuda,
        TILE_BLOCK,
        "#define TILE 32\n#define ROWS 8\n__shared__ float tile[TILE][TILE];\nfloat *in, *out;\nconst int width = 1024;\nint x = blockIdx.x * TILE + threadIdx.x;\nint y = blockIdx.y * TILE + threadIdx.y;\nfor (int j = 0; j < TILE; j += ROWS)\n    tile[threadIdx.y + j][threadIdx.x ^ (threadIdx.y + j)] = in[(y + j) * width + x];\n__syncthreads();\nx = blockIdx.y * TILE + threadIdx.x;\ny = blockIdx.x * TILE + threadIdx.y;\nfor (int j = 0; j < TILE; j += ROWS)\n    out[(y + j) * width + x] = tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x];\n",
    ),
    Preset {
        sets: &["N=1024"],
        ..code(
            "sgemm-tiled",
            "Tiled SGEMM (TILE 32, N = 1024)",
            "The textbook shared-memory matrix multiply: each warp loads a row of an A tile and of a B tile (coalesced, 4 sectors), then As[ty][j] is one word for the whole warp (a broadcast, 1 wavefront) and Bs[j][tx] a row (conflict-free). The inner loop runs N / TILE x TILE = 1024 times per warp.",
            Lang::Cuda,
            Dim3 { x: 32, y: 32, z: 1 },
            "#define TILE 32\n__global__ void sgemm(const float *A, const float *B, float *C, int N) {\n    __shared__ float As[TILE][TILE];\n    __shared__ float Bs[TILE][TILE];\n    int tx = threadIdx.x, ty = threadIdx.y;\n    int row = blockIdx.y * TILE + ty;\n    int col = blockIdx.x * TILE + tx;\n    float acc = 0.0f;\n    for (int k = 0; k < N / TILE; k++) {\n        As[ty][tx] = A[row * N + k * TILE + tx];\n        Bs[ty][tx] = B[(k * TILE + ty) * N + col];\n        __syncthreads();\n        for (int j = 0; j < TILE; j++)\n            acc += As[ty][j] * Bs[j][tx];\n        __syncthreads();\n    }\n    C[row * N + col] = acc;\n}\n",
        )
    },
    code(
        "float2-load",
        "float2 vector loads",
        "Each lane loads 8 bytes with one LDG.E.64: 256 contiguous bytes, 8 sectors, all of them used. On CC 2.x/3.x the warp is split into two half-warp requests.",
        Lang::Cuda,
        ONE_WARP,
        "float2 *in;\nint i = blockIdx.x * blockDim.x + threadIdx.x;\nfloat2 v = in[i];   // one 8-byte load per lane\n",
    ),
    code(
        "float4-load",
        "float4 vector loads",
        "Reinterpreting a float array as float4 gives one 16-byte load per lane: 512 bytes, 16 sectors, 100% efficiency with a quarter of the instructions.",
        Lang::Cuda,
        ONE_WARP,
        "const float *in;\nint i = blockIdx.x * blockDim.x + threadIdx.x;\nfloat4 v = reinterpret_cast<const float4*>(in)[i];   // one 16-byte load per lane\n",
    ),
    expr(
        "lds64-conflicts",
        "LDS.64 with a 16-byte stride",
        "8-byte shared loads are served by half-warps. With lanes 16 bytes apart, lanes i and i+8 of each half-warp share banks: 2-way conflicts, 4 wavefronts instead of 2.",
        A100,
        "LDS.64",
        "16*lane",
    ),
    expr(
        "lds128-conflicts",
        "LDS.128 with a 32-byte stride",
        "16-byte shared loads are served by quarter-warps. With lanes 32 bytes apart, lanes i and i+4 of each quarter share banks: 8 wavefronts instead of 4.",
        A100,
        "LDS.128",
        "32*lane",
    ),
    Preset {
        bank_mode: BankMode::EightByte,
        ..expr(
            "kepler-8byte-banks",
            "Kepler 8-byte bank mode",
            "In Kepler's 8-byte mode successive 64-bit words sit in successive banks, so a warp of 8-byte loads is served in one pass (CUDA Programming Guide 11 K.3.3).",
            Cc::new(3, 5),
            "LDS.64",
            "8*lane",
        )
    },
    expr(
        "kepler-4byte-stride2",
        "Kepler 4-byte mode, stride 2",
        "Kepler's banks deliver 64 bits: words i and i+32 of a 256-byte segment share a bank without conflict, so a stride of two words is conflict-free on 3.x but 2-way on 2.x and 5.x+.",
        Cc::new(3, 5),
        "LDS.32",
        "8*lane",
    ),
    code(
        "local-spill",
        "A local array indexed at run time",
        "An array indexed with a run-time value lives in local memory. Local memory interleaves threads word by word, so lanes using different indices land in different lines.",
        Lang::Cuda,
        ONE_WARP,
        "float *out;\nfloat a[8];                       // indexed at run time: local memory\nint k = threadIdx.x % 8;\na[k] = 1.0f;\nout[threadIdx.x] = a[(k + 1) % 8];\n",
    ),
    code(
        "generic-shared",
        "A generic pointer into shared memory",
        "LD with a 64-bit generic address: lanes 0-15 point into the shared window (shared memory, banks), lanes 16-31 into global memory. One instruction, two memories.",
        Lang::Sass,
        ONE_WARP,
        "S2R R0, SR_TID.X ;\nSHL R2, R0, 0x2 ;               // byte offset 4*tid\nMOV R3, 0x7f00 ;                // high half of the shared window 0x7f00_0000_0000\nISETP.GE.AND P0, PT, R0, 0x10, PT ;\n@P0 MOV R3, 0x7000 ;            // lanes 16-31 point into global memory instead\nLD.E.32 R4, [R2] ;\n",
    ),
    Preset {
        sets: &["R4=0xffffff80", "R5=0x7000"],
        ..code(
            "lea-double-index",
            "LEA: &A[i+10] for doubles, 64-bit i",
            "The first LEA example of the LEA page: LEA.LO computes the low half with a carry, LEA.HI.X the high half and the shared-window predicate P0. The base sits just below a 4 GB boundary, so lanes 16-31 need the carry.",
            Lang::Sass,
            ONE_WARP,
            "S2R R2, SR_TID.X ;                       // i = thread index\nMOV R3, RZ ;                             // i is 64-bit: high half 0\nLEA.LO        R0.CC, R2, R4, 3            ?WAIT6  ; // R0 = ( R2 << 3 )     + R4\nLEA.HI.X  P0, R1,    R2, R5, R3, 3        ?WAIT13 ; // R1 = ({R3,R2} >> 29) + R5 + CC.CF\nLD.E.64       R6, [R0 + 80], P0     &wr0  ?WAIT1  ;\n",
        )
    },
    Preset {
        sets: &["R4=0x00001000", "R5=0x7000"],
        ..code(
            "lea-negative-index",
            "LEA: &A[100-i], signed i",
            "The second LEA example: the offset is negated (-R2) and sign-extended with BFE.S32 first, so the warp walks the array backwards; the 256 bytes are still contiguous.",
            Lang::Sass,
            ONE_WARP,
            "S2R R2, SR_TID.X ;                         // i = thread index\nBFE.S32       R3,     R2, 0x011f           ?WAIT1  ; // sign extend R2 into R3\nLEA.LO        R0.CC, -R2, R4, 3            ?WAIT6  ; // R0 = ( -R2 << 3 )     + R4\nLEA.HI.X  P0, R1,    -R2, R5, R3, 3        ?WAIT13 ; // R1 = (-{R3,R2} >> 29) + R5 + CC.CF\nLD.E.64       R6, [R0 + 800], P0     &wr0  ?WAIT1  ;\n",
        )
    },
    Preset {
        sets: &["c[0x0][0x0]=0x0", "c[0x0][0x4]=0x7000"],
        ..code(
            "lea-struct-field",
            "LEA: &B[i].field in 128-byte structs",
            "The third LEA example: the base comes from the constant bank, the scale is 7 (128-byte structs). Each lane reads 4 bytes from its own struct, so every lane needs its own line.",
            Lang::Sass,
            ONE_WARP,
            "S2R R2, SR_TID.X ;                         // i = thread index\nLEA.LO        R0.CC, R2, c[0][0], 7            ?WAIT6  ; // R0 = ( R2 << 7 )     + c[0][0]\nLEA.HI.X  P0, R1,    R2, c[0][4], 7            ?WAIT13 ; // R1 = ({RZ,R2} >> 25) + c[0][4] + CC.CF\nLD.E.32       R6, [R0 + 20], P0          &wr0  ?WAIT1  ;\n",
        )
    },
    Preset {
        sets: &["R2=0x1000"],
        ..code(
            "lea-32bit-bytes",
            "LEA: 32-bit &B[i-2] for bytes",
            "The 32-bit LEA example: scale 0, P1 set for the generic load. 32 one-byte loads starting 2 bytes below a sector boundary touch two sectors in two lines.",
            Lang::Sass,
            ONE_WARP,
            "S2R R12, SR_TID.X ;                 // i = thread index\nLEA.LO  P1, R10, R12, R2             ?WAIT13 ;  // R10 = ( R12 << 0 ) + R2\nLD.U8       R6, [R10 - 2], P1  &wr0  ?WAIT1  ;\n",
        )
    },
    code(
        "ptx-transpose-naive",
        "PTX: the naive transpose as NVIDIA's compiler writes it",
        "PTX straight from the compiler: transposeNaive from the CUDA samples, as NVRTC (nvcc's device compiler) emits it. No values needed: the pointers get their own bases and width and height the launch's thread count. The loads walk a row (4 sectors per request); the stores walk a column, one sector per lane, and each ld/st shows the SASS instruction it becomes.",
        Lang::Ptx,
        Dim3 { x: 32, y: 16, z: 1 },
        "// transposeNaive from NVIDIA's cuda-samples (BSD-3-Clause), compiled by NVRTC 12.9 for compute_80\n.version 8.8\n.target sm_80\n.address_size 64\n\n.visible .entry _Z14transposeNaivePfS_ii(\n\t.param .u64 _Z14transposeNaivePfS_ii_param_0,\n\t.param .u64 _Z14transposeNaivePfS_ii_param_1,\n\t.param .u32 _Z14transposeNaivePfS_ii_param_2,\n\t.param .u32 _Z14transposeNaivePfS_ii_param_3\n)\n{\n\t.reg .f32 \t%f<3>;\n\t.reg .b32 \t%r<15>;\n\t.reg .b64 \t%rd<11>;\n\n\n\tld.param.u64 \t%rd1, [_Z14transposeNaivePfS_ii_param_0];\n\tld.param.u64 \t%rd2, [_Z14transposeNaivePfS_ii_param_1];\n\tld.param.u32 \t%r1, [_Z14transposeNaivePfS_ii_param_2];\n\tld.param.u32 \t%r2, [_Z14transposeNaivePfS_ii_param_3];\n\tcvta.to.global.u64 \t%rd3, %rd1;\n\tcvta.to.global.u64 \t%rd4, %rd2;\n\tmov.u32 \t%r3, %ctaid.x;\n\tshl.b32 \t%r4, %r3, 5;\n\tmov.u32 \t%r5, %tid.x;\n\tadd.s32 \t%r6, %r4, %r5;\n\tmov.u32 \t%r7, %ctaid.y;\n\tshl.b32 \t%r8, %r7, 5;\n\tmov.u32 \t%r9, %tid.y;\n\tadd.s32 \t%r10, %r8, %r9;\n\tmad.lo.s32 \t%r11, %r6, %r2, %r10;\n\tmad.lo.s32 \t%r12, %r10, %r1, %r6;\n\tmul.wide.s32 \t%rd5, %r12, 4;\n\tadd.s64 \t%rd6, %rd4, %rd5;\n\tld.global.f32 \t%f1, [%rd6];\n\tmul.wide.s32 \t%rd7, %r11, 4;\n\tadd.s64 \t%rd8, %rd3, %rd7;\n\tst.global.f32 \t[%rd8], %f1;\n\tshl.b32 \t%r13, %r1, 4;\n\tadd.s32 \t%r14, %r12, %r13;\n\tmul.wide.s32 \t%rd9, %r14, 4;\n\tadd.s64 \t%rd10, %rd4, %rd9;\n\tld.global.f32 \t%f2, [%rd10];\n\tst.global.f32 \t[%rd8+64], %f2;\n\tret;\n\n}\n",
    ),
    Preset {
        block: Dim3::linear(48),
        ..expr(
            "tail-warp",
            "A partial tail warp",
            "A block of 48 threads has two warps; the second has only 16 active lanes, so it moves 2 sectors instead of 4.",
            A100,
            "LDG.E.32",
            "4*tid",
        )
    },
    expr(
        "fermi-quarter-warps",
        "Fermi: 16-byte loads by quarter-warp",
        "On CC 2.x a 16-byte access is split into four quarter-warp requests, each served by its own 128-byte L1 transaction (CUDA Programming Guide 5.0 F.4.2).",
        Cc::new(2, 0),
        "LD.E.128",
        "16*lane",
    ),
    Preset {
        l1: L1Choice::On,
        ..expr(
            "kepler-l1-opt-in",
            "Kepler with L1 caching of globals",
            "With -Xptxas -dlcm=ca a 3.5 device moves whole 128-byte lines: a scattered warp moves 4 KB for 128 useful bytes, four times the L2-only path.",
            Cc::new(3, 5),
            "LD.E.32",
            "128*lane",
        )
    },
    expr(
        "lds128-broadcast-measured",
        "Broadcast LDS.128: measured",
        "Every lane reads the same 16 bytes. The documented phase model splits a 128-bit access into four quarter-warps (4 wavefronts); measured on V100, A100 and with Nsight Compute on 8.6 and 9.0 it costs 2: lanes that share addresses in pairs merge the quarter-warps. The note gives both figures.",
        A100,
        "LDS.128",
        "0",
    ),
    Preset {
        shared_model: SharedModel::Documented,
        ..expr(
            "lds128-broadcast-documented",
            "Broadcast LDS.128: documented",
            "The same broadcast counted by the documented phase model (Programming Guide, Best Practices Guide): four quarter-warp phases of one wavefront each. Switch the shared model to measured to see the hardware's 2.",
            A100,
            "LDS.128",
            "0",
        )
    },
    expr(
        "ldmatrix-unswizzled",
        "ldmatrix on an unswizzled tile",
        "ldmatrix.x4 reads four 8x8 matrices of halves from a tile with 64 halves (128 bytes) per row: the 8 rows of each matrix start 128 bytes apart, all in banks 0-3. One phase per matrix, 8-way: 32 wavefronts instead of 4.",
        A100,
        "LDSM.16.M88.4",
        "128*(lane % 8) + 16*(lane / 8)",
    ),
    expr(
        "ldmatrix-swizzled",
        "ldmatrix on a 128B-swizzled tile",
        "The same reads through the 128-byte swizzle (CuTe Swizzle<3,4,3>, TMA's SWIZZLE_128B): each row's 16-byte chunk index is XORed with the row number, so the 8 rows of a matrix land in 8 different bank groups. 4 wavefronts, conflict-free. This is also how ldmatrix reads a tile a TMA copy wrote with the 128B swizzle.",
        A100,
        "LDSM.16.M88.4",
        "sw128(128*(lane % 8) + 16*(lane / 8))",
    ),
    expr(
        "tma-tile-ldmatrix",
        "A TMA 128B-swizzled tile read by ldmatrix",
        "A TMA copy with CU_TENSOR_MAP_SWIZZLE_128B wrote a 64x16 box of halves (128-byte rows; `warpscope tma --box 64x16` shows where each chunk went). ldmatrix.x4.trans reads a 16x16 fragment of it: lanes 0-15 give rows 0-15 of the first 8 columns, lanes 16-31 the next 8. Read through the same swizzle, each matrix's 8 rows sit in 8 bank groups: 4 wavefronts (32 without it).",
        A100,
        "LDSM.16.MT88.4",
        "sw128(128*(lane % 16) + 16*(lane / 16))",
    ),
    Preset {
        block: Dim3::linear(128),
        ..expr(
            "cp-async-tile",
            "cp.async copies a tile",
            "128 threads copy a 32x64-half tile with cp.async.cg, 16 bytes each: thread t copies chunk t%8 of row t/8 from a global matrix with 2048-byte rows into a swizzled shared tile. One instruction costs both sides: 16 sectors of global reads and 4 wavefronts of shared writes per warp.",
            A100,
            "LDGSTS.E.BYPASS.128",
            "sw128(16*tid) from 0x100000 + 2048*(tid / 8) + 16*(tid % 8)",
        )
    },
    expr(
        "predicated-tail",
        "A predicate masks lanes",
        "Only lanes 0-19 load (the `if` makes the active mask): 80 bytes touch 3 sectors.",
        A100,
        "LDG.E.32",
        "4*lane if lane < 20",
    ),
    code(
        "atomics-global",
        "Global atomics: 8 bins against one counter",
        "Each warp's atomicAdd(&bins[i % 8], 1) is one request to one sector, but 32 read-modify-writes: 4 lanes on each bin, done one after another in L2 (4 in series). atomicAdd(total, 1) has every lane on one address with one value, so nvcc aggregates it: one lane adds for the whole warp, 1 read-modify-write (an assumption about the compiler, stated in its note; the PTX or SASS shows what it did). docs/model.md#atomics",
        Lang::Cuda,
        Dim3::linear(256),
        "__global__ void histogram8(int *bins, int *total) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    atomicAdd(&bins[i % 8], 1);   // 8 bins: 4 lanes of each warp on each bin\n    atomicAdd(total, 1);          // one counter: aggregated by the compiler\n}\n",
    ),
    code(
        "atomics-shared",
        "Shared atomics: 4 bins against 32",
        "An atomic's lanes on one shared word each do their own read-modify-write, where a load's would share one broadcast: with 4 bins, 8 lanes queue on each word, 8 wavefronts; with 32 bins every lane has a bank of its own, 1 wavefront. The shared-atomic rule is a model not yet measured on a device, and the page labels it so. docs/model.md#atomics",
        Lang::Cuda,
        ONE_WARP,
        "__global__ void histogram_shared(const int *in, int *bins) {\n    __shared__ int s_bins[32];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    atomicAdd(&s_bins[threadIdx.x % 4], in[i]);    // 4 bins: 8 lanes on each word\n    atomicAdd(&s_bins[threadIdx.x % 32], in[i]);   // 32 bins: one lane per bank\n}\n",
    ),
    code(
        "constant-memory",
        "Constant memory: one address against 32",
        "The constant cache serves one address per pass: coeff[0], the same for every lane, takes 1 pass; coeff[threadIdx.x] takes 32 passes, one after another, where a global load of the same 128 bytes is 4 sectors in one request. Constant memory is for values every lane reads alike. docs/model.md#constant-memory",
        Lang::Cuda,
        ONE_WARP,
        "__constant__ float coeff[32];\n__global__ void scale(const float *in, float *out) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    float a = coeff[0];             // one address: 1 pass\n    float b = coeff[threadIdx.x];   // 32 addresses: 32 passes\n    out[i] = a * in[i] + b;\n}\n",
    ),
    Preset {
        cc: Cc::new(5, 2),
        grid: Dim3::linear(16),
        caches: true,
        ..code(
            "read-only-path",
            "The read-only path on 5.2 (memory system on)",
            "On CC 5.2 ordinary global loads skip L1; loads through the read-only path are cached there. `in` is a const float * __restrict__, which nvcc reads with ld.global.nc (LDG.E.CONSTANT), as it does __ldg: with the memory system on, the three reads of each point's neighbours find 1,264 of their 1,792 sectors in L1 (70.5 %). Take const __restrict__ away and none does. From 7.0 every global load is cached in L1. docs/model.md#the-read-only-path",
            Lang::Cuda,
            Dim3::linear(256),
            "__global__ void blur(const float * __restrict__ in, float *out) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;\n    out[i] = in[i - 1] + in[i] + in[i + 1];\n}\n",
        )
    },
    Preset {
        sets: &["M=256", "N=256", "K=256"],
        grid: Dim3 { x: 8, y: 8, z: 1 },
        caches: true,
        ..code(
            "sgemm-naive-memory",
            "Naive SGEMM through the memory system (N = 256)",
            "The lecture's first matrix multiply with L1, L2 and DRAM modelled across all 64 blocks: a warp's sector of A serves its next 7 iterations and B's 4 sectors serve the block's other 31 warps, so L1 serves 95 % of the load sectors, L2 87.5 % of the rest, and DRAM reads A and B once (512 KiB). At N = 1024 (values M=1024, N=1024, K=1024 and grid 32x32) L2 serves 96.875 %. docs/model.md#canonical-figures",
            Lang::Cuda,
            Dim3 { x: 32, y: 32, z: 1 },
            "__global__ void sgemm(const float *A, const float *B, float *C, int M, int N, int K) {\n    int r = blockIdx.y * blockDim.y + threadIdx.y;\n    int c = blockIdx.x * blockDim.x + threadIdx.x;\n    float sum = 0.0f;\n    for (int k = 0; k < K; k++)\n        sum += A[r * K + k] * B[k * N + c];\n    C[r * N + c] = sum;\n}\n",
        )
    },
    code(
        "address-list",
        "Addresses from a trace",
        "Raw addresses, 32 per warp, `-` for an inactive lane: here every other word, with the last 8 lanes inactive.",
        Lang::Addresses,
        ONE_WARP,
        "LDG.E.32\n0x1000 0x1008 0x1010 0x1018 0x1020 0x1028 0x1030 0x1038\n0x1040 0x1048 0x1050 0x1058 0x1060 0x1068 0x1070 0x1078\n0x1080 0x1088 0x1090 0x1098 0x10a0 0x10a8 0x10b0 0x10b8\n- - - - - - - -\n",
    ),
];
