//! Kernels on data (docs/model.md#kernels-on-data): the contents of a kernel's arrays, given as a seeded
//! generator, a numpy `.npy` file or a raw binary file with its element type, and bound to the program's
//! pointers and global arrays so that its loads read them.
//!
//! A source is written the same way everywhere: `uniform(0, 256, n=65536, seed=1)`, `zipf(1.1, 50257, n=4096)`,
//! `const(7, n=32)`, `arange(n=1024)`, `perm(n=1024, seed=3)`, `repeat(1, 2, 3, n=30)`, `text("the cat", n=64)`,
//! `ids.npy`, `corpus.txt:uint8`. Generators give the same sequence on every platform: PCG-64 seeded from
//! `seed` (0 when not given), integer ranges drawn at 64 bits.

use crate::program::memory::Elem;
#[cfg(feature = "data")]
use crate::program::memory::{ArrayDecl, Given, GivenArray};
#[cfg(feature = "data")]
use crate::program::Program;
#[cfg(feature = "data")]
use rand::{RngExt, SeedableRng};

/// The largest array a source may make: 256 MB, the distance between two arrays' default bases.
pub const MAX_BYTES: u64 = 256 << 20;

/// Contents for one array: `name` = `source`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DataSpec {
    /// The pointer parameter or global array it fills.
    pub name: String,
    /// The source as written: a generator call, or a file's name (`ids.npy`, `corpus.txt:uint8`).
    pub source: String,
    /// A file's bytes, where the source names a file (not carried in a link).
    #[serde(skip)]
    pub file: Option<std::sync::Arc<[u8]>>,
}

impl DataSpec {
    /// `NAME=SOURCE`, as `--data` takes it.
    pub fn parse(text: &str) -> Result<DataSpec, String> {
        let (name, source) = text.split_once('=').ok_or_else(|| {
            format!("`{text}`: give data as NAME=SOURCE, e.g. idx=uniform(0, 1024, n=4096) or col=col.npy")
        })?;
        let name = name.trim();
        // A sparse matrix fills several arrays: `rowptr,col,val=m.mtx`, `coo:row,col,val=m.mtx`, `ell:col,val=m.mtx`.
        let names = match name.split_once(':') {
            Some(("csr" | "coo" | "ell", rest)) => rest,
            Some((format, _)) => {
                return Err(format!("`{format}:` is not a sparse format: csr:, coo: or ell: (a Matrix Market file)"))
            }
            None => name,
        };
        let ok = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !names.split(',').all(|n| ok(n.trim())) {
            return Err(format!("`{name}` is not an array's name (data is given as NAME=SOURCE)"));
        }
        Ok(DataSpec { name: name.to_string(), source: source.trim().to_string(), file: None })
    }

    /// For a Matrix Market source: the format (`csr`, `coo`, `ell`) and the arrays it fills, in order.
    pub fn matrix(&self) -> Option<(&str, Vec<&str>)> {
        if !self.source.ends_with(".mtx") {
            return None;
        }
        let (format, names) = self.name.split_once(':').unwrap_or(("csr", self.name.as_str()));
        Some((format, names.split(',').map(str::trim).collect()))
    }

    /// Whether the source names a file (rather than a generator).
    pub fn is_file(&self) -> bool {
        !self.source.contains('(')
    }

    /// A generator's call and the element type written after it (`uniform(0, 256, n=64):uint8`): the type
    /// an array gets where the kernel does not say it (a PTX or SASS kernel with an `extern "C"` name).
    pub fn generator(&self) -> (&str, Option<&str>) {
        match self.source.rsplit_once(':') {
            Some((call, t)) if call.trim_end().ends_with(')') && !t.contains(')') => (call.trim_end(), Some(t.trim())),
            _ => (self.source.as_str(), None),
        }
    }

    /// The file's path and the element type written after it (`corpus.txt:uint8`).
    pub fn file_path(&self) -> (&str, Option<&str>) {
        match self.source.rsplit_once(':') {
            Some((p, t)) if !t.contains('/') && !t.contains('\\') && !p.is_empty() => (p, Some(t)),
            _ => (self.source.as_str(), None),
        }
    }
}

/// A number of an element type, by numpy's name (`int32`, `uint8`, `float32`) or C's (`int`, `unsigned char`).
pub fn parse_elem(t: &str) -> Result<Elem, String> {
    let int = |bytes, signed| Ok(Elem::Int { bytes, signed });
    match t.trim() {
        "int8" | "i1" | "char" | "signed char" => int(1, true),
        "uint8" | "u1" | "unsigned char" | "byte" => int(1, false),
        "int16" | "i2" | "short" => int(2, true),
        "uint16" | "u2" | "unsigned short" => int(2, false),
        "int32" | "i4" | "int" => int(4, true),
        "uint32" | "u4" | "unsigned" | "unsigned int" => int(4, false),
        "int64" | "i8" | "long long" => int(8, true),
        "uint64" | "u8" | "unsigned long long" => int(8, false),
        "float16" | "f2" | "half" | "bfloat16" => Ok(Elem::Float { bytes: 2 }),
        "float32" | "f4" | "float" => Ok(Elem::Float { bytes: 4 }),
        "float64" | "f8" | "double" => Ok(Elem::Float { bytes: 8 }),
        other => Err(format!(
            "`{other}` is not an element type: int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, float32 or float64"
        )),
    }
}

#[cfg(feature = "data")]
/// A generator call: its name, positional numbers and keyword numbers (`n`, `seed`), or its text.
struct Call {
    name: String,
    args: Vec<f64>,
    n: Option<u64>,
    seed: u64,
    text: Option<String>,
}

#[cfg(feature = "data")]
fn parse_call(src: &str) -> Result<Call, String> {
    let open = src.find('(').ok_or_else(|| format!("`{src}` is not a generator call"))?;
    let name = src[..open].trim().to_string();
    let inner = src[open + 1..].trim_end();
    let inner = inner.strip_suffix(')').ok_or_else(|| format!("`{src}`: the generator's arguments end with `)`"))?;
    let mut call = Call { name, args: Vec::new(), n: None, seed: 0, text: None };
    let inner = inner.trim();
    // text("...") takes a quoted string first.
    let rest = if let Some(q) = inner.strip_prefix('"') {
        let end = q.find('"').ok_or_else(|| format!("`{src}`: the text has no closing quote"))?;
        call.text = Some(q[..end].to_string());
        q[end + 1..].trim_start().trim_start_matches(',')
    } else {
        inner
    };
    for a in rest.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let num = |v: &str| -> Result<f64, String> {
            v.trim().parse::<f64>().map_err(|_| format!("`{v}` in `{src}` is not a number"))
        };
        match a.split_once('=') {
            Some((k, v)) => {
                let x = num(v)?;
                let whole = (x >= 0.0 && x.fract() == 0.0 && x <= 2f64.powi(53)).then_some(x as u64);
                let whole = whole.ok_or_else(|| format!("`{a}` in `{src}`: {} takes a whole number", k.trim()))?;
                match k.trim() {
                    "n" => call.n = Some(whole),
                    "seed" => call.seed = whole,
                    other => return Err(format!("`{other}=` in `{src}`: a generator takes n= (its length) and seed=")),
                }
            }
            None => call.args.push(num(a)?),
        }
    }
    Ok(call)
}

#[cfg(feature = "data")]
/// The values of a generator, as numbers, `n` of them.
fn generate(spec: &str) -> Result<Vec<f64>, String> {
    let c = parse_call(spec)?;
    let arity = |k: std::ops::RangeInclusive<usize>, usage: &str| {
        if k.contains(&c.args.len()) {
            Ok(())
        } else {
            Err(format!("`{spec}`: write it as {usage}"))
        }
    };
    let n = match (&c.text, c.n) {
        (Some(t), None) => t.len() as u64,
        (_, Some(n)) => n,
        (None, None) => {
            return Err(format!("`{spec}`: give its length with n=, e.g. {}(..., n=1024)", c.name));
        }
    };
    if n > MAX_BYTES {
        return Err(format!("`{spec}`: {n} elements is more than an array may hold here"));
    }
    let n = n as usize;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(c.seed);
    let out = match c.name.as_str() {
        "uniform" => {
            arity(2..=2, "uniform(lo, hi, n=N): integers lo <= v < hi (numbers, for floating-point arrays)")?;
            let (lo, hi) = (c.args[0], c.args[1]);
            if hi <= lo {
                return Err(format!("`{spec}`: hi must be above lo"));
            }
            if lo.fract() == 0.0 && hi.fract() == 0.0 {
                let (lo, hi) = (lo as i64, hi as i64);
                (0..n).map(|_| rng.random_range(lo..hi) as f64).collect()
            } else {
                (0..n).map(|_| rng.random_range(lo..hi)).collect()
            }
        }
        "zipf" => {
            arity(2..=2, "zipf(s, k, n=N): integers 1..=k, P(v) proportional to v^-s")?;
            let z =
                rand_distr::Zipf::new(c.args[1], c.args[0]).map_err(|e| format!("`{spec}`: {e} (s >= 0, k >= 1)"))?;
            (0..n).map(|_| rng.sample(z)).collect()
        }
        "const" => {
            arity(1..=1, "const(v, n=N)")?;
            vec![c.args[0]; n]
        }
        "arange" => {
            arity(0..=2, "arange(n=N), arange(start, n=N) or arange(start, step, n=N)")?;
            let start = c.args.first().copied().unwrap_or(0.0);
            let step = c.args.get(1).copied().unwrap_or(1.0);
            (0..n).map(|i| start + step * i as f64).collect()
        }
        "perm" => {
            arity(0..=0, "perm(n=N, seed=S): 0..N-1 in a random order")?;
            let mut v: Vec<f64> = (0..n).map(|i| i as f64).collect();
            rand::seq::SliceRandom::shuffle(v.as_mut_slice(), &mut rng);
            v
        }
        "repeat" => {
            if c.args.is_empty() {
                return Err(format!("`{spec}`: write it as repeat(a, b, ..., n=N): the values over and over"));
            }
            (0..n).map(|i| c.args[i % c.args.len()]).collect()
        }
        "text" => {
            let t = c
                .text
                .as_deref()
                .ok_or_else(|| format!("`{spec}`: write it as text(\"...\", n=N): the text's bytes"))?;
            if t.is_empty() {
                return Err(format!("`{spec}`: the text is empty"));
            }
            let b = t.as_bytes();
            (0..n).map(|i| f64::from(b[i % b.len()])).collect()
        }
        other => {
            return Err(format!("`{other}` is not a generator: uniform, zipf, const, arange, perm, repeat or text"))
        }
    };
    Ok(out)
}

#[cfg(feature = "data")]
/// Numbers as little-endian elements of `elem`; a value the type cannot hold is an error.
fn encode(values: &[f64], elem: Elem, what: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(values.len() * elem.bytes().unwrap_or(1) as usize);
    match elem {
        Elem::Int { bytes, signed } => {
            let bits = 8 * u32::from(bytes);
            let (lo, hi) = if signed {
                (-(2f64.powi(bits as i32 - 1)), 2f64.powi(bits as i32 - 1) - 1.0)
            } else {
                (0.0, 2f64.powi(bits as i32) - 1.0)
            };
            // Values pass through f64: past 2^53 an integer may already be another one, so it is refused (a file of
            // the array's own type keeps its bytes as they are).
            let exact = 2f64.powi(53);
            for (i, &v) in values.iter().enumerate() {
                if v.abs() >= exact {
                    return Err(format!(
                        "{what}: element {i} is 2^53 or beyond, where converting it to {} may change it; give a file of that type",
                        elem.name()
                    ));
                }
                if v.fract() != 0.0 || v < lo || v > hi {
                    return Err(format!("{what}: element {i} is {v}, which {} cannot hold", elem.name()));
                }
                let x = if v < 0.0 { (v as i64) as u64 } else { v as u64 };
                out.extend_from_slice(&x.to_le_bytes()[..bytes as usize]);
            }
        }
        Elem::Float { bytes: 2 } => {
            values.iter().for_each(|&v| out.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()))
        }
        Elem::Float { bytes: 4 } => values.iter().for_each(|&v| out.extend_from_slice(&(v as f32).to_le_bytes())),
        Elem::Float { .. } => values.iter().for_each(|&v| out.extend_from_slice(&v.to_le_bytes())),
        Elem::Ptr => {
            for &v in values {
                out.extend_from_slice(&(v as u64).to_le_bytes());
            }
        }
        Elem::Other => return Err(format!("{what}: its elements are structs or vectors, which data cannot fill")),
    }
    Ok(out)
}

#[cfg(feature = "data")]
/// A `.npy` file's elements, as numbers, with its element type.
fn read_npy(bytes: &[u8], what: &str) -> Result<(Vec<f64>, Elem), String> {
    let npy = npyz::NpyFile::new(bytes).map_err(|e| format!("{what}: not a .npy file ({e})"))?;
    if npy.order() == npyz::Order::Fortran && npy.shape().iter().filter(|&&d| d > 1).count() > 1 {
        return Err(format!("{what}: the array is in Fortran order; save it in C order (np.ascontiguousarray)"));
    }
    let npyz::DType::Plain(t) = npy.dtype() else {
        return Err(format!("{what}: a structured array; give one array of numbers"));
    };
    let bytes = t.size_field();
    let fail = |e| format!("{what}: {e}");
    use npyz::TypeChar::{Float, Int, Uint};
    let (v, elem): (Vec<f64>, Elem) = match (t.type_char(), bytes) {
        (Int, 1) => (
            npy.into_vec::<i8>().map_err(fail)?.into_iter().map(f64::from).collect(),
            Elem::Int { bytes: 1, signed: true },
        ),
        (Int, 2) => (
            npy.into_vec::<i16>().map_err(fail)?.into_iter().map(f64::from).collect(),
            Elem::Int { bytes: 2, signed: true },
        ),
        (Int, 4) => (
            npy.into_vec::<i32>().map_err(fail)?.into_iter().map(f64::from).collect(),
            Elem::Int { bytes: 4, signed: true },
        ),
        (Int, 8) => (
            npy.into_vec::<i64>().map_err(fail)?.into_iter().map(|x| x as f64).collect(),
            Elem::Int { bytes: 8, signed: true },
        ),
        (Uint, 1) => (
            npy.into_vec::<u8>().map_err(fail)?.into_iter().map(f64::from).collect(),
            Elem::Int { bytes: 1, signed: false },
        ),
        (Uint, 2) => (
            npy.into_vec::<u16>().map_err(fail)?.into_iter().map(f64::from).collect(),
            Elem::Int { bytes: 2, signed: false },
        ),
        (Uint, 4) => (
            npy.into_vec::<u32>().map_err(fail)?.into_iter().map(f64::from).collect(),
            Elem::Int { bytes: 4, signed: false },
        ),
        (Uint, 8) => (
            npy.into_vec::<u64>().map_err(fail)?.into_iter().map(|x| x as f64).collect(),
            Elem::Int { bytes: 8, signed: false },
        ),
        (Float, 4) => {
            (npy.into_vec::<f32>().map_err(fail)?.into_iter().map(f64::from).collect(), Elem::Float { bytes: 4 })
        }
        (Float, 8) => (npy.into_vec::<f64>().map_err(fail)?, Elem::Float { bytes: 8 }),
        (Float, 2) => {
            (npy.into_vec::<half::f16>().map_err(fail)?.into_iter().map(f64::from).collect(), Elem::Float { bytes: 2 })
        }
        _ => return Err(format!("{what}: numpy type `{t}`; give int8-64, uint8-64, float16, float32 or float64")),
    };
    Ok((v, elem))
}

#[cfg(feature = "data")]
/// A raw file's elements of type `t`, little-endian.
fn read_raw(bytes: &[u8], t: Elem, what: &str) -> Result<Vec<f64>, String> {
    let eb = t.bytes().unwrap_or(1) as usize;
    if bytes.len() % eb != 0 {
        return Err(format!("{what}: {} bytes is not a whole number of {}-byte elements", bytes.len(), eb));
    }
    Ok(bytes
        .chunks_exact(eb)
        .map(|c| match t {
            Elem::Float { bytes: 2 } => f64::from(half::f16::from_le_bytes([c[0], c[1]])),
            Elem::Float { bytes: 4 } => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            Elem::Float { .. } => f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
            _ => match t.value(c) {
                Some(v) if matches!(t, Elem::Int { signed: true, .. }) => v as i64 as f64,
                Some(v) => v as f64,
                None => 0.0,
            },
        })
        .collect())
}

/// A Matrix Market file (SuiteSparse's form) as the arrays of `format` named `names`: CSR's row offsets, column
/// indices and values; COO's row indices, column indices and values; or ELL's column indices and values, column-major
/// (entry k of row r at k * rows + r), each row padded to the longest with column 0 and value 0. The values may be
/// left out (the last name). Returns each array's spec and numbers, and a sentence for the result.
#[cfg(feature = "data")]
#[allow(clippy::type_complexity)]
fn sparse(
    spec: &DataSpec,
    format: &str,
    names: &[&str],
) -> Result<(Vec<(DataSpec, Option<Vec<f64>>)>, String), String> {
    use nalgebra_sparse::io::load_coo_from_matrix_market_str as load;
    let what = format!("the matrix for `{}` ({})", spec.name, spec.source);
    let bytes = spec.file.as_ref().ok_or_else(|| format!("{what}: the file was not read"))?;
    let text = std::str::from_utf8(bytes).map_err(|e| format!("{what}: not text ({e})"))?;
    // Real, integer or pattern (every value 1).
    let coo = match load::<f64>(text) {
        Ok(m) => m,
        Err(e) => match load::<i64>(text) {
            Ok(m) => {
                let (rows, cols) = (m.nrows(), m.ncols());
                let (r, c, v) = m.disassemble();
                nalgebra_sparse::CooMatrix::try_from_triplets(
                    rows,
                    cols,
                    r,
                    c,
                    v.into_iter().map(|x| x as f64).collect(),
                )
                .map_err(|e| format!("{what}: {e}"))?
            }
            Err(_) => match load::<()>(text) {
                Ok(m) => {
                    let (rows, cols) = (m.nrows(), m.ncols());
                    let (r, c, v) = m.disassemble();
                    nalgebra_sparse::CooMatrix::try_from_triplets(rows, cols, r, c, vec![1.0; v.len()])
                        .map_err(|e| format!("{what}: {e}"))?
                }
                Err(_) => return Err(format!("{what}: {e}")),
            },
        },
    };
    let (rows, cols) = (coo.nrows(), coo.ncols());
    let csr = nalgebra_sparse::CsrMatrix::from(&coo);
    let width = csr.row_offsets().windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    let f = |v: &[usize]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    let arrays: Vec<Vec<f64>> = match (format, names.len()) {
        ("csr", 2 | 3) => vec![f(csr.row_offsets()), f(csr.col_indices()), csr.values().to_vec()],
        ("coo", 2 | 3) => {
            let mut r = Vec::with_capacity(csr.nnz());
            for (row, w) in csr.row_offsets().windows(2).enumerate() {
                r.extend(std::iter::repeat_n(row as f64, w[1] - w[0]));
            }
            vec![r, f(csr.col_indices()), csr.values().to_vec()]
        }
        ("ell", 1 | 2) => {
            let (mut c, mut v) = (vec![0.0; width * rows], vec![0.0; width * rows]);
            for (row, w) in csr.row_offsets().windows(2).enumerate() {
                for (k, j) in (w[0]..w[1]).enumerate() {
                    c[k * rows + row] = csr.col_indices()[j] as f64;
                    v[k * rows + row] = csr.values()[j];
                }
            }
            vec![c, v]
        }
        _ => {
            return Err(format!(
                "{what}: give csr's rowptr,col[,val], coo:'s row,col[,val] or ell:'s col[,val] names, not {}",
                names.len()
            ))
        }
    };
    let parts = names
        .iter()
        .zip(arrays)
        .map(|(n, v)| (DataSpec { name: n.to_string(), source: spec.source.clone(), file: None }, Some(v)))
        .collect();
    let form = match format {
        "ell" => format!("ELL, {width} entries a row, column-major, {} of them padding", width * rows - csr.nnz()),
        other => other.to_uppercase(),
    };
    Ok((
        parts,
        format!(
            "`{}`: a {rows} x {cols} matrix with {} entries (a symmetric file's both triangles), as {form}.",
            spec.source,
            csr.nnz()
        ),
    ))
}

#[cfg(feature = "data")]
/// Binds given data to the program's arrays: each source made or read as the array's element type. Returns
/// what the result says about it (which arrays, from what; conversions).
pub fn give(program: &mut Program, specs: &[DataSpec]) -> Result<Vec<String>, String> {
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    if program.arrays.is_empty() {
        return Err(
            "data is given, but this input names no arrays: data fills a kernel's pointer parameters (param_0, param_1 ... in PTX, and in SASS where the kernel's C++ name gives its parameters) and global arrays"
                .into(),
        );
    }
    let mut given = Given::default();
    let mut said = Vec::new();
    let mut expanded = Vec::new();
    for spec in specs {
        match spec.matrix() {
            Some((format, names)) => {
                let (parts, what) = sparse(spec, format, &names)?;
                said.push(what);
                expanded.extend(parts);
            }
            None => expanded.push((spec.clone(), None)),
        }
    }
    for (spec, numbers) in &expanded {
        let Some(decl) = program.arrays.iter().find(|a| a.name == spec.name) else {
            let names: Vec<&str> = program.arrays.iter().map(|a| a.name.as_str()).collect();
            return Err(format!(
                "data for `{}`, which the kernel does not name as a pointer or global array; it has: {}",
                spec.name,
                names.join(", ")
            ));
        };
        let ArrayDecl { name, base, elem } = decl.clone();
        let what = format!("the data for `{name}` ({})", spec.source);
        // The type written with the source: a raw file's, a generator's; a .npy file's own.
        let written = if spec.is_file() {
            let (path, ty) = spec.file_path();
            match ty.filter(|_| !path.ends_with(".npy")) {
                Some(t) => Some(parse_elem(t)?),
                None if path.ends_with(".npy") => match &spec.file {
                    Some(bytes) if elem == Elem::Other => Some(read_npy(bytes, &what)?.1),
                    _ => None,
                },
                None => None,
            }
        } else {
            spec.generator().1.map(parse_elem).transpose()?
        };
        // Where the kernel does not say what its pointer points to, the source says it.
        let elem = match (elem, written) {
            (Elem::Other, Some(t)) => t,
            (Elem::Other, None) => {
                return Err(format!(
                    "{what}: the kernel does not say the type of `{name}`'s elements (a PTX or SASS kernel's name carries its parameters' types only when it is a C++ name; a struct's fields are not filled one by one): write it after the source, e.g. {name}=uniform(0, 256, n=1024):uint8 or {name}=file.bin:int32, or give a .npy file"
                ))
            }
            (e, Some(t)) if !spec.is_file() && t != e => {
                return Err(format!(
                    "{what}: the kernel reads `{name}` as {}, not {}; leave the type out, or write {}",
                    e.name(),
                    t.name(),
                    e.name()
                ))
            }
            (e, _) => e,
        };
        let mut raw_as_is = None;
        let values = if let Some(v) = numbers {
            v.clone()
        } else if spec.is_file() {
            let bytes = spec.file.as_ref().ok_or_else(|| format!("{what}: the file was not read"))?;
            let (path, ty) = spec.file_path();
            if let Some(t) = ty.filter(|_| !path.ends_with(".npy")).map(parse_elem).transpose()? {
                // A raw file of the array's own type: its bytes as they are.
                if t == elem {
                    let eb = elem.bytes().unwrap_or(1) as usize;
                    if bytes.len() % eb != 0 {
                        return Err(format!(
                            "{what}: {} bytes is not a whole number of {eb}-byte elements",
                            bytes.len()
                        ));
                    }
                    raw_as_is = Some(bytes.to_vec());
                }
            }
            if raw_as_is.is_some() {
                Vec::new()
            } else if path.ends_with(".npy") {
                let (v, from) = read_npy(bytes, &what)?;
                if from != elem {
                    said.push(format!(
                        "`{name}`'s file holds {}, converted to the kernel's {}",
                        from.name(),
                        elem.name()
                    ));
                }
                v
            } else {
                let t = ty.ok_or_else(|| {
                    format!("{what}: a raw file needs its element type after a colon, e.g. {path}:uint8 (or give a .npy file)")
                })?;
                read_raw(bytes, parse_elem(t)?, &what)?
            }
        } else {
            generate(spec.generator().0)?
        };
        let bytes = match raw_as_is {
            Some(b) => b,
            None => encode(&values, elem, &what)?,
        };
        if bytes.len() as u64 > MAX_BYTES {
            return Err(format!("{what}: {} bytes is more than an array may hold here (256 MB)", bytes.len()));
        }
        given.arrays.push(GivenArray {
            name,
            base,
            region: crate::lang::params::GLOBAL_STRIDE,
            elem,
            bytes: bytes.into(),
            origin: spec.source.clone(),
        });
    }
    said.insert(0, format!("Given data: {}.", given.describe()));
    program.given = Some(std::rc::Rc::new(given));
    Ok(said)
}
