//! Swizzles and CuTe layouts, the address functions of shared-memory tiles (docs/model.md#swizzles).
//!
//! A [`Swizzle`] is CuTe's `Swizzle<B,M,S>` (cute/swizzle.hpp): `x ^ ((x >> S) & (((1 << B) - 1) << M))`,
//! the B bits from bit M+S XORed into the B bits from bit M. The TMA modes on byte addresses are `sw128` =
//! `Swizzle<3,4,3>`, `sw64` = `Swizzle<2,4,3>`, `sw32` = `Swizzle<1,4,3>`.
//!
//! [`Layouts`] are named CuTe layouts the expression language calls like functions:
//!
//! ```text
//! L = Swizzle<3,3,3> o (8,64):(64,1)     // 8 rows of 64 halves, 16-byte chunks swizzled
//! T = ((2,4),8):((1,16),2); V = 8:1      // nested modes; `;` or a new line between layouts
//! ```
//!
//! As in CuTe, `L(i, j)` takes one coordinate per top-level mode, each decomposed colexicographically (the
//! leftmost entry fastest) over that mode's nested shape; `L(k)` on a layout of rank > 1 decomposes the 1-D
//! index k over the whole shape. The offset is the sum of coordinate times stride, in elements; the swizzle,
//! if any, applies to that element offset; the result is the offset times `elem_bytes`, a byte address. A
//! coordinate outside its mode is an error, never a wrap.
//!
//! May import: `lang::{cexpr, lex}` (its text is read with the C tokens), `program::launch` (the built-in
//! names a layout may not take).

use super::cexpr::Parser;
use super::lex::{lex_skippable, Tok};
use super::{InputError, Span};

/// CuTe's `Swizzle<B,M,S>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swizzle {
    /// B: how many bits are XORed.
    pub b: u32,
    /// M: the lowest bit that changes.
    pub m: u32,
    /// S: how far above M the bits XORed in start (negative: below, as CuTe allows).
    pub s: i32,
}

/// The named swizzles of the expression language: the TMA modes (`CUtensorMapSwizzle`) on byte addresses.
pub const NAMED_SWIZZLES: [(&str, Swizzle); 3] = [
    ("sw128", Swizzle { b: 3, m: 4, s: 3 }),
    ("sw64", Swizzle { b: 2, m: 4, s: 3 }),
    ("sw32", Swizzle { b: 1, m: 4, s: 3 }),
];

/// The expression language's functions, for messages and to keep layout names apart from them.
pub const FUNCTIONS: [&str; 7] = ["min", "max", "abs", "sw128", "sw64", "sw32", "swizzle"];

impl Swizzle {
    /// `sw128`, `sw64` or `sw32`.
    pub fn named(name: &str) -> Option<Swizzle> {
        NAMED_SWIZZLES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
    }

    /// `Swizzle<B,M,S>`, checked as cute/swizzle.hpp's `static_assert`s do (`MBase` and `BBits` at least 0,
    /// `abs(SShift) >= BBits`), and within 62 bits so that it stays an address function.
    #[cold]
    #[inline(never)]
    pub fn new(b: i128, m: i128, s: i128) -> Result<Swizzle, String> {
        let what = format!("Swizzle<{b},{m},{s}>");
        let why = if b < 0 {
            "B, the number of bits, must be at least 0"
        } else if m < 0 {
            "M, the lowest bit swizzled, must be at least 0"
        } else if s.unsigned_abs() < b.unsigned_abs() {
            "|S| must be at least B, or the bits would overlap"
        } else if b.unsigned_abs().saturating_add(m.unsigned_abs()).saturating_add(s.unsigned_abs()) > 62 {
            "B + M + |S| must be at most 62"
        } else {
            return Ok(Swizzle { b: b as u32, m: m as u32, s: s as i32 });
        };
        Err(format!("{what}: {why} (as cute/swizzle.hpp requires)"))
    }

    /// The bits read (CuTe's `yyy_msk`).
    pub fn source_mask(self) -> i128 {
        ((1i128 << self.b) - 1) << (self.m as i32 + self.s.max(0))
    }

    /// The swizzled offset: `x ^ shiftr(x & yyy_msk, S)`, as CuTe computes it.
    pub fn apply(self, x: i128) -> i128 {
        let y = x & self.source_mask();
        x ^ if self.s >= 0 { y >> self.s } else { y << -self.s }
    }
}

/// A shape or a stride: an integer or a tuple of them, nested.
#[derive(Clone, Debug, PartialEq)]
enum Tree {
    Int(i128),
    Tup(Vec<Tree>),
}

impl Tree {
    #[cold]
    fn leaves(&self, out: &mut Vec<i128>) {
        match self {
            Tree::Int(v) => out.push(*v),
            Tree::Tup(v) => v.iter().for_each(|t| t.leaves(out)),
        }
    }

    #[cold]
    fn same_form(&self, other: &Tree) -> bool {
        match (self, other) {
            (Tree::Int(_), Tree::Int(_)) => true,
            (Tree::Tup(a), Tree::Tup(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_form(y)),
            _ => false,
        }
    }

    #[cold]
    fn show(&self) -> String {
        match self {
            Tree::Int(v) => v.to_string(),
            Tree::Tup(v) => format!("({})", v.iter().map(Tree::show).collect::<Vec<_>>().join(",")),
        }
    }

    /// CuTe's default (compact, colexicographic) strides for this shape, from `next`.
    #[cold]
    fn compact(&self, next: &mut i128) -> Tree {
        match self {
            Tree::Int(v) => {
                let t = Tree::Int(*next);
                *next = next.saturating_mul(*v);
                t
            }
            Tree::Tup(v) => Tree::Tup(v.iter().map(|t| t.compact(next)).collect()),
        }
    }
}

/// One top-level mode: its shape as written, and its (shape, stride) leaves, leftmost first.
#[derive(Clone, Debug, PartialEq)]
struct Mode {
    shape: String,
    leaves: Vec<(i128, i128)>,
    size: i128,
}

/// One named layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Its name.
    pub name: String,
    swizzle: Option<Swizzle>,
    modes: Vec<Mode>,
    shape: String,
    size: i128,
}

/// The largest layout size accepted (a shape's product).
const MAX_SIZE: i128 = 1 << 40;

impl Layout {
    /// The number of top-level modes.
    pub fn rank(&self) -> usize {
        self.modes.len()
    }

    /// The element offset of `coords` (one per mode, or one 1-D index), swizzled; an error names the layout,
    /// the mode and the value when a coordinate is outside its mode, with that coordinate's place in `coords`.
    #[inline(never)]
    pub fn offset(&self, coords: &[i128]) -> Result<i128, (usize, String)> {
        let mut cs = coords.to_vec();
        if let ([k], true) = (coords, self.rank() > 1) {
            // A 1-D index over the whole shape is, colexicographically, one coordinate per mode.
            if !(0..self.size).contains(k) {
                let (name, shape, size) = (&self.name, &self.shape, self.size);
                return Err((0, format!("`{name}` = {shape}: index {k} is outside the layout (size {size})")));
            }
            let mut rest = *k;
            cs = self.modes.iter().map(|m| (rest % m.size, rest /= m.size).0).collect();
        }
        let mut sum = 0i128;
        for ((i, m), &c) in self.modes.iter().enumerate().zip(&cs) {
            if !(0..m.size).contains(&c) {
                return Err((
                    i,
                    format!(
                        "`{}` = {}: coordinate {c} is outside mode {i} (shape {}, so 0..{})",
                        self.name,
                        self.shape,
                        m.shape,
                        m.size - 1
                    ),
                ));
            }
            let mut rest = c;
            for &(shape, stride) in &m.leaves {
                let term = (rest % shape).checked_mul(stride);
                sum = term.and_then(|v| sum.checked_add(v)).ok_or((i, format!("overflow in `{}`", self.name)))?;
                rest /= shape;
            }
        }
        Ok(self.swizzle.map_or(sum, |s| s.apply(sum)))
    }
}

/// The named layouts of a scenario, and the size of their elements.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Layouts {
    list: Vec<Layout>,
    /// Bytes per element: a layout's value is its element offset times this.
    pub elem_bytes: i128,
}

impl Layouts {
    /// No layouts.
    pub const NONE: Layouts = Layouts { list: Vec::new(), elem_bytes: 1 };

    /// The layout named `name`.
    pub fn get(&self, name: &str) -> Option<&Layout> {
        self.list.iter().find(|l| l.name == name)
    }

    /// The layouts' names, in order.
    #[cold]
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|l| l.name.as_str()).collect()
    }

    /// `L(coords)` as a byte address: the swizzled element offset times `elem_bytes`.
    pub fn call(&self, layout: &Layout, coords: &[i128]) -> Result<i128, (usize, String)> {
        layout.offset(coords)?.checked_mul(self.elem_bytes).ok_or_else(|| (0, format!("overflow in `{}`", layout.name)))
    }

    /// Parses layout definitions separated by `;` or new lines; `elem_bytes` is the element size.
    #[cold]
    pub fn parse(src: &str, elem_bytes: i128) -> Result<Layouts, InputError> {
        let mut p = Parser::new(src, lex_skippable(src)?);
        let mut list: Vec<Layout> = Vec::new();
        loop {
            while p.eat(";") {}
            if matches!(p.peek(), Tok::End) {
                break;
            }
            let at = p.span();
            let name = p.ident("a layout name (`L = (8,64):(64,1)`)")?;
            let taken = if FUNCTIONS.contains(&name.as_str()) {
                "a function"
            } else if crate::program::launch::BUILTIN_NAMES.iter().any(|b| b.split('.').next() == Some(&name)) {
                "a built-in variable"
            } else if list.iter().any(|l| l.name == name) {
                "a layout defined before"
            } else {
                ""
            };
            if !taken.is_empty() {
                return Err(InputError::at(src, at, format!("`{name}` is {taken}: give the layout another name")));
            }
            p.expect("=", "after the layout's name")?;
            let swizzle = if p.at_word("Swizzle") {
                let start = p.span();
                p.bump();
                p.expect("<", "after Swizzle")?;
                let b = int(&mut p)?;
                p.expect(",", "in Swizzle<B,M,S>")?;
                let m = int(&mut p)?;
                p.expect(",", "in Swizzle<B,M,S>")?;
                let s = int(&mut p)?;
                p.expect(">", "in Swizzle<B,M,S>")?;
                let span = Span { start: start.start, end: p.prev_span().end };
                let sw = Swizzle::new(b, m, s).map_err(|m| InputError::at(src, span, m))?;
                let compose = p.span();
                if !(p.at_word("o")
                    || matches!(p.peek(), Tok::Bad(_)) && src.get(compose.start..compose.end) == Some("∘"))
                {
                    return Err(p.err(format!("expected `o` or `∘` after the swizzle, found {}", p.describe())));
                }
                p.bump();
                Some(sw)
            } else {
                None
            };
            let (shape, shape_span) = tree(&mut p, 0)?;
            let mut leaves = Vec::new();
            shape.leaves(&mut leaves);
            if let Some(bad) = leaves.iter().find(|&&v| v < 1) {
                return Err(InputError::at(src, shape_span, format!("a shape's entries are at least 1, not {bad}")));
            }
            let stride = if p.eat(":") {
                let (stride, stride_span) = tree(&mut p, 0)?;
                if !stride.same_form(&shape) {
                    return Err(InputError::at(
                        src,
                        stride_span,
                        format!(
                            "the stride {} does not have the form of the shape {}: one stride per shape entry, nested alike",
                            stride.show(),
                            shape.show()
                        ),
                    ));
                }
                stride
            } else {
                shape.compact(&mut 1)
            };
            let tops = match (&shape, &stride) {
                (Tree::Tup(a), Tree::Tup(b)) => a.iter().zip(b).collect(),
                _ => vec![(&shape, &stride)],
            };
            let mut modes = Vec::new();
            let mut size = 1i128;
            for (sh, st) in tops {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                sh.leaves(&mut a);
                st.leaves(&mut b);
                let n = a.iter().try_fold(1i128, |n, &v| n.checked_mul(v).filter(|n| *n <= MAX_SIZE));
                size = n.and_then(|n| size.checked_mul(n)).filter(|n| *n <= MAX_SIZE).ok_or_else(|| {
                    InputError::at(src, shape_span, format!("the layout has more than {MAX_SIZE} elements"))
                })?;
                modes.push(Mode { shape: sh.show(), leaves: a.into_iter().zip(b).collect(), size: n.unwrap_or(1) });
            }
            list.push(Layout { name, swizzle, modes, shape: format!("{}:{}", shape.show(), stride.show()), size });
            // The next layout starts after `;` or on a new line.
            let gap = src.get(p.prev_span().end..p.span().start).unwrap_or("");
            if !(p.eat(";") || gap.contains('\n') || matches!(p.peek(), Tok::End)) {
                return Err(p.err(format!("expected `;` or a new line after the layout, found {}", p.describe())));
            }
        }
        Ok(Layouts { list, elem_bytes })
    }
}

/// An integer of at most 2^40 in size, possibly negative.
#[cold]
fn int(p: &mut Parser) -> Result<i128, InputError> {
    let neg = p.eat("-");
    match *p.peek() {
        Tok::Int(n) if n <= MAX_SIZE => {
            p.bump();
            Ok(if neg { -n } else { n })
        }
        _ => Err(p.err(format!("expected a number of at most {MAX_SIZE}, found {}", p.describe()))),
    }
}

/// An integer or a parenthesised tuple of them, nested.
#[cold]
fn tree(p: &mut Parser, depth: u32) -> Result<(Tree, Span), InputError> {
    let start = p.span();
    if !p.eat("(") {
        let v = int(p)?;
        return Ok((Tree::Int(v), Span { start: start.start, end: p.prev_span().end }));
    }
    if depth >= 32 {
        return Err(InputError::at(p.src, start, "a layout nested more than 32 deep"));
    }
    let mut items = vec![tree(p, depth + 1)?.0];
    while p.eat(",") {
        items.push(tree(p, depth + 1)?.0);
    }
    p.expect(")", "or `,` in the tuple")?;
    Ok((Tree::Tup(items), Span { start: start.start, end: p.prev_span().end }))
}
