//! Swizzles and CuTe layouts, the address functions of shared-memory tiles (MODEL.md H).
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
//! May import: `text` (spans and errors through `lang`); nothing else.

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
    fn leaves(&self, out: &mut Vec<i128>) {
        match self {
            Tree::Int(v) => out.push(*v),
            Tree::Tup(v) => v.iter().for_each(|t| t.leaves(out)),
        }
    }

    fn same_form(&self, other: &Tree) -> bool {
        match (self, other) {
            (Tree::Int(_), Tree::Int(_)) => true,
            (Tree::Tup(a), Tree::Tup(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_form(y)),
            _ => false,
        }
    }

    fn show(&self) -> String {
        match self {
            Tree::Int(v) => v.to_string(),
            Tree::Tup(v) => format!("({})", v.iter().map(Tree::show).collect::<Vec<_>>().join(",")),
        }
    }

    /// CuTe's default (compact, colexicographic) strides for this shape, from `next`.
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
    pub fn offset(&self, coords: &[i128]) -> Result<i128, (usize, String)> {
        let whole;
        let modes: &[Mode] = if coords.len() == 1 && self.rank() > 1 {
            let leaves = self.modes.iter().flat_map(|m| m.leaves.iter().copied()).collect();
            whole = [Mode { shape: String::new(), leaves, size: self.size }];
            &whole
        } else {
            &self.modes
        };
        let mut sum = 0i128;
        for ((i, m), &c) in modes.iter().enumerate().zip(coords) {
            if !(0..m.size).contains(&c) {
                let what = match m.shape.as_str() {
                    "" => format!("index {c} is outside the layout (size {}", m.size),
                    s => format!("coordinate {c} is outside mode {i} (shape {s}"),
                };
                return Err((i, format!("`{}` = {}: {what}, so 0..{})", self.name, self.shape, m.size - 1)));
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
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|l| l.name.as_str()).collect()
    }

    /// `L(coords)` as a byte address: the swizzled element offset times `elem_bytes`.
    pub fn call(&self, layout: &Layout, coords: &[i128]) -> Result<i128, (usize, String)> {
        layout.offset(coords)?.checked_mul(self.elem_bytes).ok_or_else(|| (0, format!("overflow in `{}`", layout.name)))
    }

    /// Parses layout definitions separated by `;` or new lines; `elem_bytes` is the element size.
    pub fn parse(src: &str, elem_bytes: i128) -> Result<Layouts, InputError> {
        let mut p = P { src, pos: 0 };
        let mut list: Vec<Layout> = Vec::new();
        loop {
            while {
                p.ws(true);
                p.eat(';')
            } {}
            if p.pos >= src.len() {
                break;
            }
            let at = p.pos;
            let name = p.ident();
            if name.is_empty() {
                return Err(p.err("expected a layout name, as in `L = (8,64):(64,1)`"));
            }
            let span = Span { start: at, end: p.pos };
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
                return Err(InputError::at(src, span, format!("`{name}` is {taken}: give the layout another name")));
            }
            p.ws(false);
            p.expect('=', "after the layout's name")?;
            p.ws(false);
            let swizzle = if p.src[p.pos..].starts_with("Swizzle") {
                let start = p.pos;
                p.pos += "Swizzle".len();
                p.ws(false);
                p.expect('<', "after Swizzle")?;
                let mut v = [0i128; 3];
                for (k, slot) in v.iter_mut().enumerate() {
                    p.ws(true);
                    *slot = p.int()?.0;
                    p.ws(true);
                    p.expect(if k < 2 { ',' } else { '>' }, "in Swizzle<B,M,S>")?;
                }
                let s =
                    Swizzle::new(v[0], v[1], v[2]).map_err(|m| InputError::at(src, Span { start, end: p.pos }, m))?;
                p.ws(false);
                if !(p.eat('o') || p.eat('∘')) {
                    return Err(p.err(format!("expected `o` or `∘` after the swizzle, found {}", p.found())));
                }
                p.ws(true);
                Some(s)
            } else {
                None
            };
            let (shape, shape_span) = p.tree(0)?;
            let mut leaves = Vec::new();
            shape.leaves(&mut leaves);
            if let Some(bad) = leaves.iter().find(|&&v| v < 1) {
                return Err(InputError::at(src, shape_span, format!("a shape's entries are at least 1, not {bad}")));
            }
            p.ws(false);
            let stride = if p.eat(':') {
                p.ws(true);
                let (stride, stride_span) = p.tree(0)?;
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
            p.ws(false);
            if !(p.pos >= src.len() || p.eat(';') || p.eat('\n')) {
                return Err(p.err(format!("expected `;` or a new line after the layout, found {}", p.found())));
            }
        }
        Ok(Layouts { list, elem_bytes })
    }
}

/// A character-level parser over layout text.
struct P<'a> {
    src: &'a str,
    pos: usize,
}

impl P<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    /// Skips blanks, `//` comments and (with `lines`) new lines.
    fn ws(&mut self, lines: bool) {
        loop {
            let r = self.rest();
            if r.starts_with("//") {
                self.pos += r.find('\n').unwrap_or(r.len());
            } else if r.starts_with([' ', '\t', '\r']) || (lines && r.starts_with('\n')) {
                self.pos += 1;
            } else {
                return;
            }
        }
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.rest().starts_with(c);
        if hit {
            self.pos += c.len_utf8();
        }
        hit
    }

    fn found(&self) -> String {
        match self.rest().chars().next() {
            None => "the end of the text".into(),
            Some('\n') => "the end of the line".into(),
            Some(c) => format!("`{c}`"),
        }
    }

    fn err(&self, message: impl Into<String>) -> InputError {
        let len = self.rest().chars().next().map_or(1, char::len_utf8);
        InputError::at(self.src, Span { start: self.pos, end: self.pos + len }, message)
    }

    fn expect(&mut self, c: char, context: &str) -> Result<(), InputError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected `{c}` {context}, found {}", self.found())))
        }
    }

    fn ident(&mut self) -> String {
        let r = self.rest();
        let n = r
            .char_indices()
            .find(|&(i, c)| !(c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())))
            .map_or(r.len(), |(i, _)| i);
        let name = r[..n].to_string();
        self.pos += n;
        name
    }

    /// An integer, possibly negative, of at most 2^40 in size.
    fn int(&mut self) -> Result<(i128, Span), InputError> {
        let start = self.pos;
        self.eat('-');
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            self.pos = start;
            return Err(self.err(format!("expected a number, found {}", self.found())));
        }
        self.pos += digits;
        let span = Span { start, end: self.pos };
        let v = self.src[start..self.pos]
            .parse::<i128>()
            .ok()
            .filter(|v| v.abs() <= MAX_SIZE)
            .ok_or_else(|| InputError::at(self.src, span, format!("numbers in a layout are at most {MAX_SIZE}")))?;
        Ok((v, span))
    }

    /// An integer or a parenthesised tuple of them, nested.
    fn tree(&mut self, depth: u32) -> Result<(Tree, Span), InputError> {
        let start = self.pos;
        if !self.eat('(') {
            return self.int().map(|(v, s)| (Tree::Int(v), s));
        }
        if depth >= 32 {
            return Err(InputError::at(self.src, Span { start, end: start + 1 }, "a layout nested more than 32 deep"));
        }
        let mut items = Vec::new();
        loop {
            self.ws(true);
            items.push(self.tree(depth + 1)?.0);
            self.ws(true);
            if self.eat(')') {
                break;
            }
            self.expect(',', "or `)` in the tuple")?;
        }
        Ok((Tree::Tup(items), Span { start, end: self.pos }))
    }
}
