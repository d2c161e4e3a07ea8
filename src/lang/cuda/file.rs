//! A whole `.cu` file: its top level read as a compiler's front end sees it. Kernels, `__device__`
//! functions and templates are indexed by their tokens and parsed when chosen (a template once per set of
//! arguments); host functions are skipped, but their launches (`k<<<grid, block, smem>>>(args)`) and the
//! `dim3` and integer values those use are read.
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.

use super::items::{FnItem, FnKind, HostLaunch, SharedView};
use super::pre::host_value;
use super::{CudaParser, Stmt};
use crate::lang::cexpr::{Parser, E};
use crate::lang::lex::{Tok, Token};
use crate::lang::{InputError, Span};
use crate::program::launch::Dim3;
use std::collections::HashMap;

use super::syntax::TParam;

impl<'a> CudaParser<'a> {
    #[cold]
    fn tok(&self, i: usize) -> &Tok {
        &self.p.toks[i.min(self.p.toks.len() - 1)].tok
    }

    /// The index just past the bracket that closes the one at `i` (`(`, `[`, `{` or template `<`).
    #[cold]
    fn matching(&self, i: usize) -> Result<usize, InputError> {
        let (open, close) = match self.tok(i) {
            Tok::Punct("(") => ("(", ")"),
            Tok::Punct("[") => ("[", "]"),
            Tok::Punct("{") => ("{", "}"),
            Tok::Punct("<") => ("<", ">"),
            _ => return Ok(i + 1),
        };
        let mut depth = 0i32;
        let mut k = i;
        while k < self.p.toks.len() {
            match self.tok(k) {
                Tok::Punct(p) if *p == open => depth += 1,
                Tok::Punct(p) if *p == close => depth -= 1,
                Tok::Punct(">>") if open == "<" => depth -= 2,
                Tok::End => break,
                _ => {}
            }
            k += 1;
            if depth <= 0 {
                return Ok(k);
            }
        }
        Err(InputError::at(self.p.src, self.p.toks[i].span, format!("this `{open}` has no matching `{close}`")))
    }

    /// `template <class T, int N = 32>`: the parameters (the parser is after `template`).
    #[cold]
    fn template_params(&mut self) -> Result<Vec<TParam>, InputError> {
        self.p.expect("<", "after `template`")?;
        let mut out = Vec::new();
        if self.p.eat(">") {
            return Ok(out);
        }
        loop {
            let is_type = self.p.at_word("class") || self.p.at_word("typename");
            let mut ty = Vec::new();
            if is_type {
                self.p.bump();
            } else {
                let tn = self.p.type_name()?;
                if tn.base != "int" || tn.pointers > 0 {
                    ty.extend(tn.base.split(' ').map(|w| Tok::Ident(w.to_string())));
                    ty.extend((0..tn.pointers).map(|_| Tok::Punct("*")));
                }
            }
            // A parameter pack (`class... Args`): read as one parameter.
            while self.p.at(".") {
                self.p.bump();
            }
            let name = self.p.ident("a template parameter name")?;
            let default = if self.p.eat("=") {
                let start = self.p.pos;
                while !(self.p.at(",") || self.p.at(">")) {
                    if matches!(self.p.peek(), Tok::End) {
                        return Err(self.p.err("expected `>` to close the template parameters"));
                    }
                    let next = self.matching(self.p.pos)?;
                    self.p.pos = next;
                }
                Some(self.p.toks[start..self.p.pos].to_vec())
            } else {
                None
            };
            out.push(TParam { name, is_type, default, ty });
            if self.p.eat(">") {
                return Ok(out);
            }
            self.p.expect(",", "between template parameters")?;
        }
    }

    /// Reads the file's top level: declarations become statements (`out`), functions are indexed.
    #[cold]
    pub(super) fn top_level(&mut self, out: &mut Vec<Stmt>) -> Result<(), InputError> {
        let mut open_blocks = 0u32;
        while !matches!(self.p.peek(), Tok::End) {
            if let Tok::Hash(line) = self.p.peek().clone() {
                let span = self.p.span();
                self.p.bump();
                if let Some(d) = self.define(&line, span)? {
                    out.push(d);
                }
                continue;
            }
            // `namespace cg = cooperative_groups;`, `using namespace std;`
            let using_alias = self.p.at_word("using") && matches!(self.tok(self.p.pos + 2), Tok::Punct("="));
            if self.p.at_word("using") && !using_alias
                || (self.p.at_word("namespace")
                    && matches!(self.p.peek2(), Tok::Ident(_))
                    && matches!(self.tok(self.p.pos + 2), Tok::Punct("=")))
            {
                while !self.p.eat(";") {
                    if matches!(self.p.peek(), Tok::End) {
                        return Err(self.p.err("expected `;`"));
                    }
                    self.p.bump();
                }
                continue;
            }
            // `namespace X {` and `extern "C" {`: their contents are top level too.
            if self.p.at_word("namespace")
                || (self.p.at_word("extern")
                    && matches!(self.p.peek2(), Tok::Str(_))
                    && matches!(self.tok(self.p.pos + 2), Tok::Punct("{")))
            {
                while !self.p.eat("{") {
                    if matches!(self.p.peek(), Tok::End | Tok::Punct(";")) {
                        return Err(self.p.err("expected `{` to open the namespace"));
                    }
                    self.p.bump();
                }
                open_blocks += 1;
                continue;
            }
            if self.p.at_word("extern") && matches!(self.p.peek2(), Tok::Str(_)) {
                self.p.bump();
                self.p.bump();
            }
            if open_blocks > 0 && self.p.at("}") {
                self.p.bump();
                open_blocks -= 1;
                continue;
            }
            if self.p.at_word("template") {
                self.template_item()?;
                continue;
            }
            // `enum E { A, B };` and `typedef enum { A, B } Name;`: its enumerators are constants, and a
            // typedef's name is an integer type.
            if self.p.at_word("enum")
                || (self.p.at_word("typedef") && matches!(self.p.peek2(), Tok::Ident(w) if w == "enum"))
            {
                let typedef = self.p.at_word("typedef");
                let open = (self.p.pos..self.p.toks.len())
                    .find(|&k| matches!(self.tok(k), Tok::Punct("{" | ";")))
                    .unwrap_or(self.p.pos);
                let end = if matches!(self.tok(open), Tok::Punct("{")) { self.matching(open)? } else { open };
                let span = self.p.span();
                for (name, value) in self.enumerators(open, end) {
                    let init = crate::lang::cexpr::Ex { kind: E::Int(value), span, op_span: span };
                    out.push(Stmt::Decl(vec![super::Decl {
                        name: name.into(),
                        base: super::Ty::Int { bytes: 4, signed: true },
                        pointers: 0,
                        dims: Vec::new(),
                        storage: super::Storage::Const,
                        init: Some(init),
                        span,
                        auto: false,
                        reference: false,
                        const_restrict: false,
                        restrict: false,
                    }]));
                }
                self.p.pos = end;
                if typedef {
                    if let Tok::Ident(name) = self.tok(self.p.pos).clone() {
                        self.p.bump();
                        self.types.alias(name.clone(), super::Ty::Int { bytes: 4, signed: true });
                        self.p.types.insert(name);
                    }
                }
                self.p.eat(";");
                continue;
            }
            // `typedef unsigned int uint;` and `using real = float;`: another name for a type.
            let alias = self.p.at_word("typedef") && !matches!(self.p.peek2(), Tok::Ident(w) if w == "struct")
                || self.p.at_word("using") && matches!(self.tok(self.p.pos + 2), Tok::Punct("="));
            if alias {
                self.type_alias()?;
                continue;
            }
            if self.p.at_word("typedef")
                || (self.p.at_word("struct") || self.p.at_word("class")) && self.struct_definition_ahead()
            {
                if self.struct_with_methods() {
                    self.view_struct(Vec::new(), None)?;
                } else {
                    self.struct_def()?;
                }
                continue;
            }
            if let Some(kind) = self.function_ahead() {
                self.function_item(kind, Vec::new(), false)?;
                continue;
            }
            // A statement at the top level: a fragment's, or in a file with kernels a global declaration. Host
            // globals of types warpscope does not know (`thrust::host_vector<int> v;`) may not parse: the
            // first such error is kept, and reported only if the file turns out to have no kernel.
            let at = self.p.pos;
            match self.statement(true) {
                Ok(s) => {
                    // `const int TILE_DIM = 32;`: a constant host code can use in a launch too.
                    if let Stmt::Decl(ds) = &s {
                        for d in ds.iter().filter(|d| d.storage == super::Storage::Const) {
                            let known = |n: &str| self.constants.get(n).copied();
                            if let Some(v) =
                                d.init.as_ref().and_then(|e| super::pre::const_eval(self.p.src, e, &known).ok())
                            {
                                self.constants.insert(d.name.to_string(), v);
                            }
                        }
                    }
                    // A host string (`const char *sSDKsample = "transpose";`) never reaches a kernel.
                    let host_string = matches!(&s, Stmt::Decl(ds) if ds.iter().any(|d| matches!(d.init.as_ref().map(|e| &e.kind), Some(E::Str(_)))));
                    if !host_string {
                        out.push(s);
                    }
                }
                Err(e) => {
                    self.deferred.get_or_insert(e);
                    self.p.pos = at;
                    while !matches!(self.p.peek(), Tok::End) && !self.p.eat(";") {
                        let next = self.matching(self.p.pos)?;
                        self.p.pos = next;
                    }
                }
            }
        }
        if open_blocks > 0 {
            return Err(self.p.err("expected `}` to close the namespace"));
        }
        Ok(())
    }

    /// The enumerators between `open` (`{`) and `end`: each a constant (`A = 2`, or one more than the last).
    #[cold]
    fn enumerators(&mut self, open: usize, end: usize) -> Vec<(String, i128)> {
        let mut out = Vec::new();
        let mut next: i128 = 0;
        let mut k = open + 1;
        while k + 1 < end {
            let Tok::Ident(name) = self.tok(k).clone() else {
                k += 1;
                continue;
            };
            let mut value = next;
            let mut j = k + 1;
            if matches!(self.tok(j), Tok::Punct("=")) {
                let from = j + 1;
                j = from;
                while j + 1 < end && !matches!(self.tok(j), Tok::Punct(",")) {
                    j += 1;
                }
                let mut toks = self.p.toks[from..j].to_vec();
                toks.push(Token { tok: Tok::End, span: self.p.toks[j.min(self.p.toks.len() - 1)].span });
                let mut sub = Parser::new(self.p.src, toks);
                let known = |n: &str| self.constants.get(n).copied();
                if let Ok(e) = sub.ternary() {
                    if let Ok(v) = super::pre::const_eval(self.p.src, &e, &known) {
                        value = v;
                    }
                }
            }
            self.constants.insert(name.clone(), value);
            out.push((name, value));
            next = value + 1;
            while j + 1 < end && !matches!(self.tok(j), Tok::Punct(",")) {
                j += 1;
            }
            k = j + 1;
        }
        out
    }

    /// `typedef TYPE NAME;` or `using NAME = TYPE;`.
    pub(super) fn type_alias(&mut self) -> Result<(), InputError> {
        let using = self.p.at_word("using");
        self.p.bump();
        let (name, tn) = if using {
            let name = self.p.ident("the alias's name")?;
            self.p.expect("=", "after the alias's name")?;
            let tn = self.p.type_name()?;
            // `using reduction_func_t = float (*) (float);`: a pointer to a function (a template parameter of
            // this type takes a function's name).
            if self.p.at("(") && matches!(self.p.peek2(), Tok::Punct("*")) {
                for _ in 0..2 {
                    let close = self.matching(self.p.pos)?;
                    self.p.pos = close;
                }
                self.p.expect(";", "after the type alias")?;
                self.types.alias(name.clone(), super::Ty::Ptr(std::rc::Rc::new(super::Ty::Void)));
                self.p.types.insert(name);
                return Ok(());
            }
            (name, tn)
        } else {
            let tn = self.p.type_name()?;
            (self.p.ident("the typedef's name")?, tn)
        };
        let ty = super::wrap_ptr(self.resolve(&tn)?, tn.pointers);
        self.p.expect(";", "after the type alias")?;
        self.types.alias(name.clone(), ty);
        self.p.types.insert(name);
        Ok(())
    }

    /// Whether a function definition or prototype starts here: qualifiers or a type, then a name and `(`.
    #[cold]
    fn function_ahead(&self) -> Option<FnKind> {
        let mut k = self.p.pos;
        let mut kind = FnKind::Host;
        let mut words = 0;
        loop {
            match self.tok(k) {
                Tok::Ident(w) if w == "__global__" => kind = FnKind::Kernel,
                Tok::Ident(w) if w == "__device__" && kind == FnKind::Host => kind = FnKind::Device,
                Tok::Ident(w) if w == "__launch_bounds__" => {
                    k = self.matching(k + 1).ok()?;
                    continue;
                }
                Tok::Ident(w) if w == "operator" => return None,
                Tok::Ident(_) => {
                    if matches!(self.tok(k + 1), Tok::Punct("(")) {
                        return (words > 0).then_some(kind);
                    }
                    // `name<int>(`: an explicit specialization's name.
                    if matches!(self.tok(k + 1), Tok::Punct("<")) && words > 0 {
                        let after = self.matching(k + 1).ok()?;
                        if matches!(self.tok(after), Tok::Punct("(")) {
                            return Some(kind);
                        }
                    }
                    words += 1;
                }
                Tok::Punct("*" | "&") if words > 0 => {}
                Tok::Punct("<") if words > 0 => {
                    k = self.matching(k).ok()?;
                    continue;
                }
                _ => return None,
            }
            k += 1;
        }
    }

    /// A function at the top level: indexed (its body is parsed when it runs). `spec`: an explicit
    /// specialization's arguments.
    #[cold]
    fn function_item(&mut self, kind: FnKind, params: Vec<TParam>, is_template: bool) -> Result<(), InputError> {
        let start = self.p.pos;
        // To the name: the identifier before the parameter list's `(`.
        let mut k = start;
        let (name, name_span, spec) = loop {
            match self.tok(k).clone() {
                Tok::Ident(w) if w == "__launch_bounds__" => k = self.matching(k + 1)?,
                Tok::Ident(w) if matches!(self.tok(k + 1), Tok::Punct("(")) => break (w, self.p.toks[k].span, None),
                Tok::Ident(w) if matches!(self.tok(k + 1), Tok::Punct("<")) && k > start => {
                    let after = self.matching(k + 1)?;
                    if matches!(self.tok(after), Tok::Punct("(")) {
                        let save = self.p.pos;
                        self.p.pos = k + 1;
                        let args = self.p.template_args()?;
                        self.p.pos = save;
                        break (w.clone(), self.p.toks[k].span, Some(format!("{w}<{args}>")));
                    }
                    k = after;
                }
                Tok::Punct("<") => k = self.matching(k)?,
                _ => k += 1,
            }
        };
        let open = self.matching(k + 1)?;
        // After the parameters: `const`, `__launch_bounds__`... then the body or `;`.
        let mut b = open;
        while !matches!(self.tok(b), Tok::Punct("{" | ";") | Tok::End) {
            b += 1;
        }
        if !matches!(self.tok(b), Tok::Punct("{")) {
            // A prototype.
            self.p.pos = b + 1;
            return Ok(());
        }
        let end = self.matching(b)?;
        // A template host function's launches name its own parameters (`reduce<T><<<...>>>`): not instances.
        if kind == FnKind::Host && params.is_empty() {
            self.host_body(b, end)?;
        }
        if is_template || spec.is_some() {
            self.p.templates.insert(name.clone());
        }
        self.files.fns.push(FnItem { name, kind, params, is_template, spec, toks: start..end, span: name_span });
        self.p.pos = end;
        Ok(())
    }

    /// `template <...> declaration`, `template <> specialization` or `template instantiation;`.
    #[cold]
    fn template_item(&mut self) -> Result<(), InputError> {
        let span = self.p.span();
        self.p.bump();
        if !self.p.at("<") {
            // An explicit instantiation: `template __global__ void reduce0<int>(int *, int *, unsigned int);`
            let mut k = self.p.pos;
            let mut found = None;
            while !matches!(self.tok(k), Tok::Punct(";") | Tok::End) {
                if let (Tok::Ident(w), Tok::Punct("<")) = (self.tok(k).clone(), self.tok(k + 1)) {
                    let save = self.p.pos;
                    self.p.pos = k + 1;
                    let args = self.p.template_args()?;
                    let after = self.p.pos;
                    self.p.pos = save;
                    if matches!(self.tok(after), Tok::Punct("(")) && found.is_none() {
                        found = Some((format!("{w}<{args}>"), self.p.toks[k].span));
                    }
                    k = after;
                    continue;
                }
                k += 1;
            }
            let Some(found) = found else {
                return Err(InputError::at(
                    self.p.src,
                    span,
                    "expected an explicit instantiation such as `template __global__ void k<int>(int *);`",
                ));
            };
            self.files.instances.push(found);
            self.p.pos = k + 1;
            return Ok(());
        }
        let params = self.template_params()?;
        let specialization = params.is_empty();
        if (self.p.at_word("struct") || self.p.at_word("class")) && self.struct_definition_ahead()
            || self.struct_specialization_ahead()
        {
            return self.view_struct(params, Some(specialization));
        }
        match self.function_ahead() {
            Some(kind) => self.function_item(kind, params, !specialization),
            None => Err(self
                .p
                .err(format!("expected a function or struct after the template header, found {}", self.p.describe()))),
        }
    }

    #[cold]
    fn struct_specialization_ahead(&self) -> bool {
        (self.p.at_word("struct") || self.p.at_word("class"))
            && matches!(self.p.peek2(), Tok::Ident(_))
            && matches!(self.tok(self.p.pos + 2), Tok::Punct("<"))
    }

    /// Whether the struct ahead has member functions (then it is read as a view, not a data layout).
    #[cold]
    fn struct_with_methods(&self) -> bool {
        let Ok(end) = self.brace_after(self.p.pos) else { return false };
        (self.p.pos..end)
            .any(|k| matches!(self.tok(k), Tok::Ident(w) if w == "operator") || matches!(self.tok(k), Tok::Punct("(")))
    }

    #[cold]
    fn brace_after(&self, from: usize) -> Result<usize, InputError> {
        let mut k = from;
        while !matches!(self.tok(k), Tok::Punct("{") | Tok::End) {
            k += 1;
        }
        self.matching(k)
    }

    /// A struct with member functions. The one kind warpscope runs is cuda-samples' `SharedMemory<T>`:
    /// a conversion to a pointer into `extern __shared__` memory. Any other is an error when used.
    #[cold]
    fn view_struct(&mut self, params: Vec<TParam>, template: Option<bool>) -> Result<(), InputError> {
        let typedef = self.p.at_word("typedef");
        if typedef {
            self.p.bump();
        }
        let span = self.p.span();
        self.p.bump(); // struct
                       // `struct alignas(16) Name` / `struct __align__(16) Name`: the alignment's tokens.
        let mut align = Vec::new();
        if self.p.at_word("alignas") || self.p.at_word("__align__") {
            self.p.bump();
            let close = self.matching(self.p.pos)?;
            align = self.p.toks[self.p.pos + 1..close - 1].to_vec();
            self.p.pos = close;
        }
        if typedef {
            // `typedef struct { ... } Name;`: a struct with member functions, named after its body.
            let body_end = self.brace_after(self.p.pos)?;
            let open = self.p.pos;
            self.p.pos = body_end;
            let name = self.p.ident("the typedef's name")?;
            self.p.eat(";");
            self.class(name, params, None, open, body_end, align, span);
            return Ok(());
        }
        let name = self.p.ident("the struct's name")?;
        let spec = if self.p.at("<") {
            let args = self.p.template_args()?;
            Some(format!("{name}<{args}>"))
        } else {
            None
        };
        let body_end = self.brace_after(self.p.pos)?;
        let body_start = self.p.pos;
        let mut target = Vec::new();
        let mut shared = false;
        for k in body_start..body_end {
            if matches!(self.tok(k), Tok::Ident(w) if w == "operator") && target.is_empty() {
                let mut e = k + 1;
                while !matches!(self.tok(e), Tok::Punct("(") | Tok::End) {
                    e += 1;
                }
                target = self.p.toks[k + 1..e].to_vec();
            }
            if matches!(self.tok(k), Tok::Ident(w) if w == "__shared__") {
                shared = true;
            }
        }
        self.p.pos = body_end;
        self.p.eat(";");
        if shared && !target.is_empty() {
            self.files.views.push(SharedView { name: name.clone(), params, spec, target });
            if template.is_some() {
                self.p.templates.insert(name);
            }
            return Ok(());
        }
        let open = (body_start..body_end).find(|&k| matches!(self.tok(k), Tok::Punct("{"))).unwrap_or(body_start);
        let is_template = template.is_some_and(|spec| !spec) || !params.is_empty();
        if is_template || spec.is_some() {
            self.p.templates.insert(name.clone());
        }
        self.class(name, params, spec, open, body_end, align, span);
        Ok(())
    }

    /// Records a class whose body's `{` is at `open` and whose `}` ends before `end`.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn class(
        &mut self,
        name: String,
        params: Vec<TParam>,
        spec: Option<String>,
        open: usize,
        end: usize,
        align: Vec<Token>,
        span: Span,
    ) {
        self.p.types.insert(name.clone());
        let body = open + 1..end.saturating_sub(1).max(open + 1);
        self.types.add_class(super::syntax::ClassTemplate {
            name,
            params,
            spec,
            body: self.p.toks[body].to_vec().into(),
            align,
            span,
        });
    }

    /// Reads a host function's body for launches and the constants they use.
    #[cold]
    fn host_body(&mut self, open: usize, end: usize) -> Result<(), InputError> {
        let macros = std::rc::Rc::clone(&self.macros);
        let macros = &*macros;
        let mut known: HashMap<String, i128> = self.constants.clone();
        let mut dims: HashMap<String, Dim3> = HashMap::new();
        let src = self.p.src;
        let toks = self.p.toks[open + 1..end - 1].to_vec();
        // Statements: split on `;`, `{` and `}` at any depth (host control flow is not followed).
        let mut stmts: Vec<&[Token]> = Vec::new();
        let mut from = 0;
        for (k, t) in toks.iter().enumerate() {
            if matches!(t.tok, Tok::Punct(";" | "{" | "}")) {
                stmts.push(&toks[from..k]);
                from = k + 1;
            }
        }
        // Host control flow is not followed, so only a variable given a value exactly once is a constant
        // (`threads += 64`, `s <<= 5`, `i++`, `grid.x = …` or a second `=` make it unknown).
        let mut writes: HashMap<&str, u32> = HashMap::new();
        for (k, t) in toks.iter().enumerate() {
            let Tok::Ident(w) = &t.tok else { continue };
            let next = toks.get(k + 1).map(|t| &t.tok);
            let after_member = match (next, toks.get(k + 3).map(|t| &t.tok)) {
                (Some(Tok::Punct(".")), Some(Tok::Punct(op))) => Some(*op),
                _ => None,
            };
            let prev = k.checked_sub(1).and_then(|j| toks.get(j)).map(|t| &t.tok);
            let assigned = |op: &str| {
                matches!(op, "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>=" | "&=" | "|=" | "^=" | "++" | "--")
            };
            let written = matches!(next, Some(Tok::Punct(op)) if assigned(op))
                || after_member.is_some_and(assigned)
                || matches!(prev, Some(Tok::Punct("++" | "--")));
            if written {
                *writes.entry(w.as_str()).or_insert(0) += 1;
            }
        }
        let once = |name: &str| writes.get(name).copied().unwrap_or(0) <= 1;
        let value = |ts: &[Token], known: &HashMap<String, i128>| host_value(src, ts, macros, known);
        for s in stmts {
            // `dim3 name(a, b, c)` / `dim3 name = dim3(a, b)` / `int name = expr` / `name = expr`.
            let words: Vec<&Tok> = s.iter().map(|t| &t.tok).collect();
            let launch_at = (0..s.len().saturating_sub(2))
                .find(|&k| matches!(words[k], Tok::Punct("<<")) && matches!(words[k + 1], Tok::Punct("<")));
            if let Some(k) = launch_at {
                if let Some(l) = self.read_launch(s, k, &known, &dims) {
                    self.files.launches.push(l);
                }
                continue;
            }
            if let Some(Tok::Ident(first)) = words.first() {
                let eq = words.iter().position(|t| matches!(t, Tok::Punct("=")));
                if first == "dim3" {
                    if let Some(Tok::Ident(name)) = words.get(1) {
                        let args = match (words.get(2), eq) {
                            (Some(Tok::Punct("(")), _) => s.get(3..s.len().saturating_sub(1)),
                            (_, Some(e)) if matches!(words.get(e + 1), Some(Tok::Ident(w)) if w == "dim3") => {
                                s.get(e + 3..s.len().saturating_sub(1))
                            }
                            _ => None,
                        };
                        match args.and_then(|a| dim3_of(a, &|ts| value(ts, &known))).filter(|_| once(name)) {
                            Some(d) => {
                                dims.insert(name.clone(), d);
                            }
                            None => {
                                dims.remove(name);
                            }
                        }
                    }
                    continue;
                }
                if let Some(e) = eq {
                    if e >= 1 {
                        if let Tok::Ident(name) = words[e - 1] {
                            match value(&s[e + 1..], &known).filter(|_| once(name)) {
                                Some(v) => {
                                    known.insert(name.clone(), v);
                                }
                                None => {
                                    known.remove(name);
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    #[cold]
    fn read_launch(
        &self,
        s: &[Token],
        k: usize,
        known: &HashMap<String, i128>,
        dims: &HashMap<String, Dim3>,
    ) -> Option<HostLaunch> {
        // The kernel: the name (and template arguments) before `<<<`.
        let mut n = k;
        let mut name_toks: &[Token] = &[];
        if n > 0 && matches!(s[n - 1].tok, Tok::Punct(">")) {
            let mut depth = 0;
            while n > 0 {
                n -= 1;
                match s[n].tok {
                    Tok::Punct(">") => depth += 1,
                    Tok::Punct("<") => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        if n > 0 {
            name_toks = &s[n - 1..k];
        }
        let Some(Tok::Ident(_)) = name_toks.first().map(|t| &t.tok) else { return None };
        // The name as written (`reduce4<int, 256>`); `canonical` spells it as the kernel list does.
        let text: String = name_toks
            .iter()
            .map(|t| match &t.tok {
                Tok::Ident(w) => w.clone(),
                Tok::Int(v) => v.to_string(),
                Tok::Punct(",") => ", ".into(),
                Tok::Punct(x) => x.to_string(),
                _ => String::new(),
            })
            .collect();
        self.launch_config(s, k, text, known, dims)
    }

    #[cold]
    fn launch_config(
        &self,
        s: &[Token],
        k: usize,
        kernel: String,
        known: &HashMap<String, i128>,
        dims: &HashMap<String, Dim3>,
    ) -> Option<HostLaunch> {
        let src = self.p.src;
        let macros = &*self.macros;
        let close = (k..s.len().saturating_sub(1))
            .find(|&j| matches!(s[j].tok, Tok::Punct(">>")) && matches!(s[j + 1].tok, Tok::Punct(">")))?;
        let config = split_top(s.get(k + 2..close)?);
        let value = |ts: &[Token]| host_value(src, ts, macros, known);
        let dim = |ts: &[Token]| -> Option<Dim3> {
            if let [Token { tok: Tok::Ident(w), .. }] = ts {
                if let Some(d) = dims.get(w) {
                    return Some(*d);
                }
            }
            if let Some(Token { tok: Tok::Ident(w), .. }) = ts.first() {
                if w == "dim3" && ts.len() >= 3 {
                    return dim3_of(&ts[2..ts.len() - 1], &value);
                }
            }
            let v = value(ts)?;
            Some(Dim3 { x: u32::try_from(v).ok()?, y: 1, z: 1 })
        };
        let grid = config.first().and_then(|t| dim(t));
        let block = config.get(1).and_then(|t| dim(t));
        let smem = config.get(2).and_then(|t| value(t)).and_then(|v| u64::try_from(v).ok());
        let args_open = close + 2;
        let args = if matches!(s.get(args_open).map(|t| &t.tok), Some(Tok::Punct("("))) {
            split_top(s.get(args_open + 1..s.len().saturating_sub(1)).unwrap_or(&[])).iter().map(|a| value(a)).collect()
        } else {
            Vec::new()
        };
        let span = Span { start: s.first()?.span.start, end: s.last()?.span.end };
        Some(HostLaunch { kernel, grid, block, smem, args, span })
    }
}

/// Splits tokens on the commas outside brackets.
#[cold]
fn split_top(toks: &[Token]) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (k, t) in toks.iter().enumerate() {
        match t.tok {
            Tok::Punct("(" | "[" | "{") => depth += 1,
            Tok::Punct(")" | "]" | "}") => depth -= 1,
            Tok::Punct(",") if depth == 0 => {
                out.push(&toks[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    if from < toks.len() {
        out.push(&toks[from..]);
    }
    out
}

#[cold]
fn dim3_of(args: &[Token], value: &dyn Fn(&[Token]) -> Option<i128>) -> Option<Dim3> {
    let parts = split_top(args);
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut v = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        v[k] = u32::try_from(value(p)?).ok()?;
    }
    Some(Dim3 { x: v[0], y: v[1], z: v[2] })
}
