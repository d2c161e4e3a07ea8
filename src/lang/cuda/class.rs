//! Classes: structs with member functions and struct templates, as published CUDA uses them (llm.c's
//! `Packed128<T>` with its constructors, `operator[]`, `static constexpr` size and `get_bits()`). A class is
//! made a type when it is first named (`Packed128<float>`, through a `typedef`, a declaration, a cast): its
//! template arguments are put in place, its fields laid out (with `alignas`), its `static constexpr` members
//! evaluated, and its member functions kept as tokens, parsed when called (`lower.rs` inlines them with the
//! object they are called on).
//!
//! May import: `syntax`, `file` (template parameters), `parse` (the statement parser), `lang::{cexpr, lex}`.
//!
//! Its functions are `#[cold]`: they run once per analysis (see `lower.rs`).

use super::parse::CudaParser;
use super::syntax::{wrap_ptr, ClassTemplate, Method, StructDef, Ty, Types};
use crate::lang::cexpr::{BinOp, Ex, Parser, UnOp, E};
use crate::lang::lex::{lex, Tok, Token};
use crate::lang::{InputError, Span};
use std::rc::Rc;

/// C's spelling of a type, as template arguments are written in a class's name (`Packed128<float>`).
#[cold]
pub(super) fn spelling(t: &Types, ty: &Ty) -> String {
    match ty {
        Ty::Int { bytes, signed } => {
            let base = match bytes {
                1 => "char",
                2 => "short",
                4 => "int",
                _ => "long long",
            };
            match (bytes, signed) {
                (4, false) => "unsigned int".into(),
                (_, false) => format!("unsigned {base}"),
                _ => base.into(),
            }
        }
        Ty::Float { bytes: 8 } => "double".into(),
        Ty::Float { bytes: 2 } => "half".into(),
        Ty::Float { bytes: 1 } => "__nv_fp8_e4m3".into(),
        Ty::Float { .. } => "float".into(),
        Ty::Ptr(e) => format!("{}*", spelling(t, e)),
        other => t.name(other),
    }
}

impl CudaParser<'_> {
    /// The type `name` names: a known type, or a class made a type now (`Packed128<float>`, `SumMax`).
    #[cold]
    pub(super) fn class_type(&self, name: &str, at: Span) -> Result<Option<Ty>, InputError> {
        if let Some(t) = self.types.lookup(name) {
            return Ok(Some(t));
        }
        let (base, args) = match name.find('<') {
            Some(i) if name.ends_with('>') => (&name[..i], Some(&name[i + 1..name.len() - 1])),
            _ => (name, None),
        };
        // libcu++'s and the standard library's handles that hold no data warpscope follows: `cuda::barrier<...>`
        // (an mbarrier word in shared memory), `cuda::pipeline<...>`, `std::bool_constant<...>`.
        const OPAQUE: [(&str, u64); 7] = [
            ("barrier<", 8),
            ("pipeline<", 1),
            ("pipeline_shared_state<", 8),
            ("bool_constant<", 1),
            ("integral_constant<", 1),
            ("true_type", 1),
            ("false_type", 1),
        ];
        if let Some(&(_, size)) = OPAQUE.iter().find(|(p, _)| name.starts_with(p)) {
            let index =
                self.types.push(StructDef { name: name.to_string(), size, align: size, ..StructDef::default() });
            return Ok(Some(Ty::Struct(index)));
        }
        let classes = self.types.classes();
        let Some(class) = classes
            .iter()
            .find(|c| c.spec.as_deref() == Some(name))
            .or_else(|| classes.iter().find(|c| c.name == base && c.spec.is_none()))
            .cloned()
        else {
            return Ok(None);
        };
        // The arguments, each a type (canonical spelling) or a constant.
        let mut values: Vec<Vec<Token>> = Vec::new();
        if let (Some(args), true) = (args, class.spec.is_none()) {
            let toks = lex(args).map_err(|e| InputError::at(self.p.src, at, format!("in `{name}`: {}", e.message)))?;
            let mut depth = 0;
            let mut cur = Vec::new();
            for t in toks {
                match t.tok {
                    Tok::End => break,
                    Tok::Punct("<" | "(") => depth += 1,
                    Tok::Punct(">" | ")") => depth -= 1,
                    Tok::Punct(",") if depth == 0 => {
                        values.push(std::mem::take(&mut cur));
                        continue;
                    }
                    _ => {}
                }
                cur.push(t);
            }
            if !cur.is_empty() {
                values.push(cur);
            }
        }
        let mut canon: Vec<String> = Vec::new();
        let mut subst: Vec<(String, Vec<Tok>)> = Vec::new();
        for (k, p) in class.params.iter().enumerate() {
            let given: Vec<Token> = match values.get(k) {
                Some(v) => v.clone(),
                None => match &p.default {
                    Some(d) => d.clone(),
                    None => {
                        return Err(InputError::at(
                            self.p.src,
                            at,
                            format!("`{}` needs {} template argument(s)", class.name, class.params.len()),
                        ))
                    }
                },
            };
            let text = if p.is_type {
                let mut sub = Parser::new(self.p.src, with_end(given.clone()));
                sub.types = self.p.types.clone();
                sub.templates = self.p.templates.clone();
                let tn = sub.type_name()?;
                let ty = match self.class_type(&tn.base, at)? {
                    Some(t) => wrap_ptr(t, tn.pointers),
                    None => {
                        return Err(InputError::at(self.p.src, at, format!("unknown type `{}` in `{name}`", tn.base)))
                    }
                };
                spelling(&self.types, &ty)
            } else {
                let mut sub = Parser::new(self.p.src, with_end(given.clone()));
                let e = sub.ternary()?;
                let statics = Vec::new();
                let v = self.constant(&e, &statics).ok_or_else(|| {
                    InputError::at(self.p.src, at, format!("`{name}`: a template value must be a constant here"))
                })?;
                v.to_string()
            };
            let toks = lex(&text).map_err(|e| InputError::at(self.p.src, at, e.message))?;
            subst.push((p.name.clone(), toks.into_iter().map(|t| t.tok).filter(|t| !matches!(t, Tok::End)).collect()));
            canon.push(text);
        }
        let full = if class.params.is_empty() {
            class.spec.clone().unwrap_or_else(|| class.name.clone())
        } else {
            format!("{}<{}>", class.name, canon.join(", "))
        };
        if let Some(t) = self.types.lookup(&full) {
            return Ok(Some(t));
        }
        // The body with the arguments in place, and the class's own name meaning this instance.
        let mut body: Vec<Token> = Vec::with_capacity(class.body.len() + 1);
        let toks = &class.body;
        for (k, t) in toks.iter().enumerate() {
            if let Tok::Ident(w) = &t.tok {
                if let Some((_, v)) = subst.iter().find(|(n, _)| n == w) {
                    body.extend(v.iter().map(|tok| Token { tok: tok.clone(), span: t.span }));
                    continue;
                }
                if *w == class.name && !matches!(toks.get(k + 1).map(|t| &t.tok), Some(Tok::Punct("<"))) {
                    body.push(Token { tok: Tok::Ident(full.clone()), span: t.span });
                    continue;
                }
            }
            body.push(t.clone());
        }
        // A placeholder first, so that the class can name itself (`static Packed128 zeros()`).
        let index = self.types.push(StructDef { name: full.clone(), align: 1, ..StructDef::default() });
        let def = self.members(&full, &class, with_end(body))?;
        self.types.set(index, def);
        Ok(Some(Ty::Struct(index)))
    }

    /// The members of class `full` from its substituted body.
    #[cold]
    fn members(&self, full: &str, class: &ClassTemplate, body: Vec<Token>) -> Result<StructDef, InputError> {
        let mut p = Parser::new(self.p.src, body);
        p.types = self.p.types.clone();
        p.types.insert(full.to_string());
        p.templates = self.p.templates.clone();
        let mut cp = CudaParser {
            p,
            types: self.types.clone(),
            depth: 0,
            files: Default::default(),
            deferred: None,
            constants: Default::default(),
            macros: Rc::clone(&self.macros),
        };
        let mut def = StructDef { name: full.to_string(), align: 1, ..StructDef::default() };
        let mut off = 0u64;
        let tok = |cp: &CudaParser, k: usize| cp.p.toks[k.min(cp.p.toks.len() - 1)].tok.clone();
        loop {
            match cp.p.peek().clone() {
                Tok::End | Tok::Punct("}") => break,
                Tok::Punct(";") => {
                    cp.p.bump();
                    continue;
                }
                Tok::Ident(w) if matches!(w.as_str(), "public" | "private" | "protected") => {
                    cp.p.bump();
                    cp.p.eat(":");
                    continue;
                }
                Tok::Ident(w)
                    if matches!(w.as_str(), "static_assert" | "friend" | "template" | "using" | "typedef") =>
                {
                    if w == "using" || w == "typedef" {
                        cp.type_alias()?;
                    } else {
                        skip_member(&mut cp);
                    }
                    continue;
                }
                Tok::Hash(_) => {
                    cp.p.bump();
                    continue;
                }
                _ => {}
            }
            // A member function: a `(` at depth 0 before any `;`, `=` or `{`.
            let start = cp.p.pos;
            let mut k = start;
            let mut paren = None;
            loop {
                match tok(&cp, k) {
                    Tok::Punct("(") => {
                        paren = Some(k);
                        break;
                    }
                    Tok::Punct(";" | "=" | "{" | "}") | Tok::End => break,
                    Tok::Punct("<") => k = matching(&cp, k),
                    _ => k += 1,
                }
            }
            if let Some(open) = paren {
                let name = match (tok(&cp, open.saturating_sub(1)), tok(&cp, open.saturating_sub(3))) {
                    (Tok::Punct("]"), Tok::Ident(o)) if o == "operator" => "operator[]".to_string(),
                    (Tok::Ident(n), _) => n,
                    _ => String::new(),
                };
                let words: Vec<Tok> = cp.p.toks[start..open].iter().map(|t| t.tok.clone()).collect();
                let is_static = words.iter().any(|t| matches!(t, Tok::Ident(w) if w == "static"));
                let destructor = words.iter().any(|t| matches!(t, Tok::Punct("~")));
                // To the body's end, or the declaration's `;` (`Packed128() = default;`).
                let close = matching(&cp, open);
                let mut e = close;
                while !matches!(tok(&cp, e), Tok::Punct("{" | ";") | Tok::End) {
                    e += 1;
                }
                let end = if matches!(tok(&cp, e), Tok::Punct("{")) { matching(&cp, e) } else { e + 1 };
                if matches!(tok(&cp, e), Tok::Punct("{")) && !destructor && !name.is_empty() {
                    let toks: Vec<Token> = cp.p.toks[start..end].to_vec();
                    def.methods.push(Method { name, is_static, toks: toks.into() });
                }
                cp.p.pos = end;
                continue;
            }
            // A data member: `static constexpr` ones are constants; the others are fields.
            let mut is_static = false;
            while let Tok::Ident(w) = cp.p.peek().clone() {
                match w.as_str() {
                    "static" => is_static = true,
                    "constexpr" | "const" | "inline" | "__device__" | "__host__" | "mutable" | "volatile" => {}
                    _ => break,
                }
                cp.p.bump();
            }
            let tn = cp.p.type_name()?;
            let base = match cp.class_type(&tn.base, cp.p.prev_span())? {
                Some(t) => t,
                None => return Err(cp.p.err(format!("unknown type `{}` in class `{full}`", tn.base))),
            };
            let mut first = true;
            loop {
                let mut pointers = if first { tn.pointers } else { 0 };
                first = false;
                while cp.p.eat("*") {
                    pointers += 1;
                }
                let name = cp.p.ident("a member name")?;
                let mut dims = Vec::new();
                while cp.p.eat("[") {
                    let e = cp.p.ternary()?;
                    let n = cp
                        .constant(&e, &def.statics)
                        .ok_or_else(|| InputError::at(cp.p.src, e.span, "a member array's size must be a constant"))?;
                    dims.push(n.max(0) as u64);
                    cp.p.expect("]", "to close the array size")?;
                }
                if cp.p.eat("=") || cp.p.at("{") {
                    let e = if cp.p.at("{") { cp.p.init_list()? } else { cp.p.ternary()? };
                    if is_static {
                        if let Some(v) = cp.constant(&e, &def.statics) {
                            def.statics.push((name.clone(), v));
                        }
                    }
                }
                if !is_static {
                    let mut ty = wrap_ptr(base.clone(), pointers);
                    for &d in dims.iter().rev() {
                        ty = Ty::Array(Rc::new(ty), d);
                    }
                    let a = cp.types.align(&ty).max(1);
                    off = off.div_ceil(a) * a;
                    def.align = def.align.max(a);
                    def.fields.push((name, ty.clone(), off));
                    off += cp.types.size(&ty);
                }
                if !cp.p.eat(",") {
                    break;
                }
            }
            cp.p.expect(";", "after the member")?;
        }
        if !class.align.is_empty() {
            let mut sub = Parser::new(self.p.src, with_end(class.align.clone()));
            let e = sub.ternary()?;
            let a = self.constant(&e, &def.statics).filter(|a| *a > 0 && (*a as u64).is_power_of_two());
            let a = a.ok_or_else(|| InputError::at(self.p.src, class.span, "alignas takes a power of two"))?;
            def.align = def.align.max(a as u64);
        }
        def.size = off.div_ceil(def.align) * def.align;
        Ok(def)
    }

    /// The value of a constant expression in a class: numbers, `sizeof`, its `static constexpr` members and
    /// C's integer arithmetic.
    #[cold]
    pub(super) fn constant(&self, e: &Ex, statics: &[(String, i128)]) -> Option<i128> {
        let v = |x: &Ex| self.constant(x, statics);
        Some(match &e.kind {
            E::Int(n) => *n,
            E::Name(n) => statics.iter().find(|(s, _)| s == n).map(|(_, v)| *v)?,
            E::SizeofType(tn) => {
                let t = self.class_type(&tn.base, e.span).ok()??;
                self.types.size(&wrap_ptr(t, tn.pointers)) as i128
            }
            E::Cast(_, a) => v(a)?,
            E::Unary(UnOp::Neg, a) => -v(a)?,
            E::Unary(UnOp::Plus, a) => v(a)?,
            E::Binary(op, a, b) => {
                let (x, y) = (v(a)?, v(b)?);
                match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div if y != 0 => x / y,
                    BinOp::Rem if y != 0 => x % y,
                    BinOp::Shl => x << (y & 63),
                    BinOp::Shr => x >> (y & 63),
                    _ => return None,
                }
            }
            _ => return None,
        })
    }
}

fn with_end(mut toks: Vec<Token>) -> Vec<Token> {
    let end = toks.last().map_or(Span { start: 0, end: 1 }, |t| t.span);
    toks.push(Token { tok: Tok::End, span: end });
    toks
}

/// The index past the bracket group opening at `k` (`(`, `[`, `{`, `<`).
#[cold]
fn matching(cp: &CudaParser, k: usize) -> usize {
    let toks = &cp.p.toks;
    let (open, close) = match toks.get(k).map(|t| &t.tok) {
        Some(Tok::Punct("(")) => ("(", ")"),
        Some(Tok::Punct("[")) => ("[", "]"),
        Some(Tok::Punct("{")) => ("{", "}"),
        Some(Tok::Punct("<")) => ("<", ">"),
        _ => return k + 1,
    };
    let mut depth = 0i32;
    let mut i = k;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Punct(p) if *p == open => depth += 1,
            Tok::Punct(p) if *p == close => depth -= 1,
            Tok::Punct(">>") if open == "<" => depth -= 2,
            Tok::End => return i,
            _ => {}
        }
        i += 1;
        if depth <= 0 {
            return i;
        }
    }
    i
}

/// Skips a member the class's layout and calls do not need: to its `;`, or past its body.
#[cold]
fn skip_member(cp: &mut CudaParser) {
    loop {
        match cp.p.peek() {
            Tok::End | Tok::Punct("}") => return,
            Tok::Punct(";") => {
                cp.p.bump();
                return;
            }
            Tok::Punct("{" | "(" | "[" | "<") => {
                let e = matching(cp, cp.p.pos);
                let was_brace = matches!(cp.p.peek(), Tok::Punct("{"));
                cp.p.pos = e;
                if was_brace {
                    cp.p.eat(";");
                    return;
                }
            }
            _ => cp.p.bump(),
        }
    }
}
