//! CUDA, from a snippet to a whole `.cu` file: declarations and accesses as a student writes them or a file as
//! it is (`pre` preprocesses it, `file` reads its top level), parsed (`parse`) into a syntax tree (`syntax`)
//! and lowered (`lower`) into the program every language shares.
//!
//! ```text
//! __shared__ float tile[32][33];
//! float *in;
//! int i = blockIdx.x * blockDim.x + threadIdx.x;
//! tile[threadIdx.y][threadIdx.x] = in[i];
//! ```
//!
//! Every read of memory becomes a load and every write a store, of the element's width (a `float4` is one
//! 16-byte access; a `float3` or a struct is one access per field, as nvcc emits them). Global pointers get
//! 256-byte aligned, cudaMalloc-like base addresses unless `--set NAME=ADDR` gives one; shared arrays are
//! laid out from offset 0 of the shared window; local arrays in local memory. Values loaded from memory are
//! data: warpscope follows addresses, so an address or a branch that depends on loaded data is an error
//! that says where the data came from.
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.
//!
//! The files, in the order the text goes through them:
//!
//! - `pre.rs`: the preprocessor (`#if` and its kin, `#define` macros expanded) and constant evaluation.
//! - `file.rs`: a file's top level: kernels, `__device__` functions and templates indexed by their tokens;
//!   host code's launches and the values they use.
//! - `syntax.rs`: the syntax tree: types, declarations, statements, a parsed function.
//! - `parse.rs`: tokens to the syntax tree: the kernel chosen, declarations, structs, functions and
//!   statements parsed, templates instantiated.
//! - `lower.rs`: the syntax tree lowered into the program.

mod class;
mod file;
mod items;
mod lower;
mod parse;
mod pre;
mod regs;
mod syntax;

pub use lower::{kernels, lower, Lowered, Options};
pub use parse::MAX_NESTING;

pub use super::params::{GLOBAL_BASE, GLOBAL_STRIDE};

// What the other files name as `super::NAME`.
use parse::{instantiate, parse, CudaParser, File, Program};
use syntax::{scalar, stmt_start, vector, walk, wrap_ptr, Decl, FnDef, Stmt, Storage, Ty, Types, VECTORS};
