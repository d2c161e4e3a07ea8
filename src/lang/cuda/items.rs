//! A file's index: its functions (`FnItem`), the struct templates used as views of dynamic shared memory
//! (`SharedView`), the launches its host code makes (`HostLaunch`), and the two name rules every reader of
//! the file shares: namespace qualifiers dropped (`strip_namespaces`) and a kernel's name with template
//! arguments written one way (`canonical`). `file` fills the index; `parse` chooses a kernel from it.
//!
//! May import: `syntax` (`TParam`), `lang::{lex, cexpr, Span}` and `program::launch::Dim3`.
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its size budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.

use super::syntax::TParam;
use crate::lang::cexpr::Parser;
use crate::lang::lex::{lex, Tok, Token};
use crate::lang::Span;
use crate::program::launch::Dim3;
use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FnKind {
    Kernel,
    Device,
    Host,
}

/// A function of the file.
#[derive(Clone, Debug)]
pub(super) struct FnItem {
    pub name: String,
    pub kind: FnKind,
    /// Its template parameters (empty for a non-template, or an explicit specialization).
    pub params: Vec<TParam>,
    pub is_template: bool,
    /// `warpReduceSum<int>` for an explicit specialization `template <> ... warpReduceSum<int>(...)`.
    pub spec: Option<String>,
    /// Its tokens, from the first word after the template header to the closing `}`.
    pub toks: Range<usize>,
    pub span: Span,
}

/// A struct template used as a view of dynamic shared memory, as cuda-samples' `SharedMemory<T>`: a
/// conversion `operator T *()` that returns an `extern __shared__` array.
#[derive(Clone, Debug)]
pub(super) struct SharedView {
    pub name: String,
    pub params: Vec<TParam>,
    pub spec: Option<String>,
    /// The conversion's target type (`T *`), as tokens.
    pub target: Vec<Token>,
}

/// A launch in host code.
#[derive(Clone, Debug)]
pub(super) struct HostLaunch {
    /// The kernel, with its template arguments as written (`reduce4<int, 256>`).
    pub kernel: String,
    pub grid: Option<Dim3>,
    pub block: Option<Dim3>,
    pub smem: Option<u64>,
    /// Each argument's value, where it is a constant.
    pub args: Vec<Option<i128>>,
    pub span: Span,
}

/// What the top level of a file holds besides its declarations.
#[derive(Default)]
pub(super) struct FileItems {
    pub fns: Vec<FnItem>,
    pub views: Vec<SharedView>,
    pub launches: Vec<HostLaunch>,
    /// `template __global__ void reduce0<int>(int *, int *, unsigned int);`
    pub instances: Vec<(String, Span)>,
}

/// CUDA's names in namespaces that warpscope knows: `cg::sync` is `sync`.
const NAMESPACES: [&str; 4] = ["cooperative_groups", "std", "cuda", "nvcuda"];

/// Drops namespace qualifiers (`cg::`, `cooperative_groups::`, `::`) before names, given the file's
/// namespace aliases. Another qualifier stays part of the name (`thrust::fill`).
#[cold]
pub(super) fn strip_namespaces(toks: Vec<Token>) -> Vec<Token> {
    let mut aliases: Vec<String> = NAMESPACES.iter().map(|s| s.to_string()).collect();
    // The file's own namespaces (`namespace wt { ... }`): their names are its names.
    for w in toks.windows(3) {
        if let (Tok::Ident(n), Tok::Ident(name), Tok::Punct("{")) = (&w[0].tok, &w[1].tok, &w[2].tok) {
            if n == "namespace" && !aliases.contains(name) {
                aliases.push(name.clone());
            }
        }
    }
    let mut out: Vec<Token> = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        // C++ attributes (`[[nodiscard]]`, `[[maybe_unused]]`) and GNU's `__attribute__((...))` say nothing
        // about memory: dropped.
        let attr =
            matches!(toks[i].tok, Tok::Punct("[")) && matches!(toks.get(i + 1).map(|t| &t.tok), Some(Tok::Punct("[")));
        let gnu = matches!(&toks[i].tok, Tok::Ident(w) if w == "__attribute__");
        if attr || gnu {
            let mut depth = 0i32;
            let mut k = i + usize::from(gnu);
            while k < toks.len() {
                match toks[k].tok {
                    Tok::Punct("[" | "(") => depth += 1,
                    Tok::Punct("]" | ")") => depth -= 1,
                    Tok::End => break,
                    _ => {}
                }
                k += 1;
                if depth <= 0 {
                    break;
                }
            }
            i = k;
            continue;
        }
        // `namespace cg = cooperative_groups;`
        if matches!(&toks[i].tok, Tok::Ident(w) if w == "namespace") {
            if let (Some(Tok::Ident(a)), Some(Tok::Punct("="))) =
                (toks.get(i + 1).map(|t| &t.tok), toks.get(i + 2).map(|t| &t.tok))
            {
                aliases.push(a.clone());
                out.extend_from_slice(&toks[i..(i + 3).min(toks.len())]);
                i += 3;
                continue;
            }
        }
        if matches!(toks[i].tok, Tok::Punct("::")) {
            let prev = out.last().map(|t| t.tok.clone());
            match prev {
                Some(Tok::Ident(ns)) if aliases.contains(&ns) => {
                    let first = out.pop().expect("a name").span;
                    if let Some(next) = toks.get(i + 1) {
                        out.push(Token {
                            tok: next.tok.clone(),
                            span: Span { start: first.start, end: next.span.end },
                        });
                    }
                    i += 2;
                    continue;
                }
                // Another namespace or class (`thrust::`, `std::chrono::`): one name, which host code may
                // use freely; device code that uses it gets an error naming it.
                Some(Tok::Ident(ns)) if !matches!(ns.as_str(), "namespace" | "using") => {
                    if let Some(Token { tok: Tok::Ident(next), span }) = toks.get(i + 1) {
                        let first = out.pop().expect("a name").span;
                        out.push(Token {
                            tok: Tok::Ident(format!("{ns}::{next}")),
                            span: Span { start: first.start, end: span.end },
                        });
                        i += 2;
                        continue;
                    }
                    i += 1;
                    continue;
                }
                // `asm("..." :: "r"(x))`: no outputs, kept for the asm statement's parser.
                Some(Tok::Str(_)) => {}
                // `Packed128<float>::constant`: a member of a template's instance, for the expression parser.
                Some(Tok::Punct(">")) => {}
                // `::threadIdx`: the global namespace.
                _ => {
                    i += 1;
                    continue;
                }
            }
        }
        out.push(toks[i].clone());
        i += 1;
    }
    out
}

/// Canonical text of a kernel name with template arguments, as the parser writes it.
#[cold]
pub(super) fn canonical(src_name: &str) -> String {
    let Ok(mut toks) = lex(src_name) else { return src_name.trim().to_string() };
    let mut p = Parser::new(src_name, std::mem::take(&mut toks));
    let Ok(name) = p.ident("a name") else { return src_name.trim().to_string() };
    if p.at("<") {
        match p.template_args() {
            Ok(a) => format!("{name}<{a}>"),
            Err(_) => src_name.trim().to_string(),
        }
    } else {
        name
    }
}
