//! What the product tells users next to a result: where sources disagree, where the model departs from a
//! simple rule, where a case is unverified. One declarative table, [`NOTES`]: each row says when it applies
//! (a pure condition on the [`Situation`]), what it says and where that is documented. The rules in
//! [`super::rules`] never produce notes; a result's notes are the rows whose condition holds, in table order.

use super::{BankMode, Cc, Family, L1Choice, SharedModel};
use crate::model::access::{Base, CacheOp, Space};
use crate::model::note::Note;

/// Conditions of one part of an issue that some notes depend on and that only its addresses reveal.
pub mod flags {
    /// A block was charged in more than one request.
    pub const DOUBLE_COUNTED: u8 = 1;
    /// More bytes moved than were used.
    pub const MOVED_UNUSED: u8 = 2;
    /// A 64- or 128-bit shared access whose lanes share addresses in pairs on CC 7.0 and later: the measured
    /// rule merges its phases (docs/model.md#shared-memory-as-measured).
    pub const MEASURED_MERGE: u8 = 4;
    /// LDS.64 with every lane on one address on CC 5.x/6.x.
    pub const LDS64_UNIFORM: u8 = 8;
}

/// Everything a note's condition may look at: one space's part of one issue.
#[derive(Clone, Copy, Debug)]
pub struct Situation {
    /// The compute capability.
    pub cc: Cc,
    /// The part's space: global or local (costed in lines and sectors) or shared (in banks).
    pub space: Space,
    /// The mnemonic.
    pub base: Base,
    /// The cache operator after aliases.
    pub cop: CacheOp,
    /// Bytes per lane.
    pub size_bytes: u32,
    /// The user's L1 choice.
    pub l1: L1Choice,
    /// Kepler's bank mode.
    pub bank_mode: BankMode,
    /// Bits of [`flags`] the part's addresses showed.
    pub flags: u8,
    /// The wavefronts counted for a shared part (0 otherwise).
    pub wavefronts: u32,
    /// For a part with [`flags::MEASURED_MERGE`], the wavefronts the other shared model counts.
    pub alt_wavefronts: u32,
    /// Which shared model counted.
    pub shared_model: SharedModel,
    /// The instruction carries the `.U` uniform hint.
    pub uniform_hint: bool,
}

impl Situation {
    fn load(&self) -> bool {
        !self.base.writes()
    }
    fn memory_load(&self) -> bool {
        self.space != Space::Shared && self.load()
    }
    fn banks(&self) -> bool {
        self.space == Space::Shared
    }
    fn family(&self) -> Family {
        self.cc.family()
    }
    fn flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// One row of the table. `text` may name `{cc}` and `{wavefronts}`, filled in from the situation.
pub struct NoteRule {
    /// A stable identifier (`kepler-3.0-l1-default`); rows with the same one are alternatives.
    pub id: &'static str,
    /// When the note applies.
    pub when: fn(&Situation) -> bool,
    /// One or two sentences for the user.
    pub text: &'static str,
    /// Where the rule and the disagreement are documented.
    pub source: &'static str,
}

/// Every model note, in the order a result lists them.
pub const NOTES: &[NoteRule] = &[
    NoteRule {
        id: "atomic-l2",
        when: |s| s.space == Space::Global && s.base.is_atomic(),
        text: "An atomic passes through L1 to L2, which performs it: one request, its distinct sectors, never an L1 hit. Lanes on one address are each a read-modify-write, done one after another (the serial count). How Nsight Compute's lts__t_sectors_op_atom/op_red count lanes that share a word is not documented, so the sector count is the distinct sectors",
        source: "CUDA Programming Guide, Atomic Functions; Nsight Compute memory tables; docs/model.md#atomics",
    },
    NoteRule {
        id: "atomic-shared-unmeasured",
        when: |s| s.space == Space::Shared && s.base.is_atomic(),
        text: "Model, unmeasured: a shared atomic takes the shared-memory phases (half- and quarter-warps for 8 and 16 bytes), but each lane's read-modify-write of a word is its own pass of the bank (ATOMS.POPC.INC does one per word), so lanes on one word serialize instead of broadcasting. No published measurement confirms it; a device run can",
        source: "docs/model.md#atomics (shared rule, to measure on a device)",
    },
    NoteRule {
        id: "local-interleave",
        when: |s| s.space == Space::Local && s.size_bytes > 4,
        text: "Local memory interleaves consecutive words across lanes; the layout of 64- and 128-bit local values is not documented, so warpscope interleaves at the access width",
        source: "CUDA Programming Guide, Local Memory; docs/model.md#local-memory",
    },
    NoteRule {
        id: "local-interleave",
        when: |s| s.space == Space::Local && s.size_bytes <= 4,
        text: "Local memory interleaves consecutive 32-bit words across lanes, so lanes reading the same per-thread address are coalesced",
        source: "CUDA Programming Guide, Local Memory; docs/model.md#local-memory",
    },
    NoteRule {
        id: "ldg-before-kepler",
        when: |s| s.space == Space::Global && s.base == Base::Ldg && s.cc <= Cc::new(3, 0),
        text: "CC {cc} has no LDG instruction (nvcc emits a generic LD for global loads); warpscope counts it as LD",
        source: "CUDA Programming Guide 11 K.3.2; Hadwiger's KAUST lecture on GPU memory (Kepler instruction table, LDG from 3.5)",
    },
    NoteRule {
        id: "maxwell-pascal-internal-split",
        when: |s| s.memory_load() && matches!(s.family(), Family::Maxwell | Family::Pascal),
        text: "NVIDIA staff describe an internal split on CC 5.x/6.x before the tag lookup (8, 4 or 2 threads per request for 32-, 64- or 128-bit accesses); profilers count one request per instruction, and so does warpscope",
        source: "NVIDIA forums t/49571",
    },
    NoteRule {
        id: "kepler-ldg-read-only",
        when: |s| {
            s.memory_load()
                && s.space != Space::Local
                && s.family() == Family::Kepler
                && s.cc >= Cc::new(3, 5)
                && (s.base == Base::Ldg || s.cop == CacheOp::Ci)
        },
        text: "On Kepler (3.5+) LDG and .CI loads are the non-coherent read-only path (__ldg): the read-only data cache, 32-byte granularity; ordinary global loads are the generic LD",
        source: "Hadwiger's KAUST lecture on GPU memory (Kepler table: LDG Non-coherent Global Memory Load); CUDA Programming Guide 11 K.3.2",
    },
    NoteRule {
        id: "kepler-3.0-l1-default",
        when: |s| s.memory_load() && s.space != Space::Local && s.cc == Cc::new(3, 0),
        text: "The CUDA 5.0 guide says CC 3.0 caches global loads in L1 like 2.x; later guides say L2 only. warpscope follows the later guides by default; --l1 on gives the 5.0 guide's 128-byte behaviour",
        source: "CUDA Programming Guide 5.0 F.5.2 vs CUDA Programming Guide 11 K.3.2",
    },
    NoteRule {
        id: "kepler-l1-opt-in",
        when: |s| {
            s.memory_load()
                && s.space != Space::Local
                && s.cc == Cc::new(3, 5)
                && s.base != Base::Ldg
                && s.cop != CacheOp::Ci
                && !s.cop.bypasses_l1()
                && s.l1 == L1Choice::On
        },
        text: "Only some CC 3.5 devices honour -dlcm=ca (3.7 does); on the others these loads stay L2-only with 32-byte transactions",
        source: "CUDA Programming Guide 11 K.3.2",
    },
    NoteRule {
        id: "maxwell-5.0-no-l1",
        when: |s| s.memory_load() && s.cc == Cc::new(5, 0) && s.cop != CacheOp::Ci && s.l1 == L1Choice::On,
        text: "CC 5.0 never caches non-read-only global data in L1: -dlcm=ca has no effect",
        source: "CUDA Programming Guide 5.x Global Memory",
    },
    NoteRule {
        id: "maxwell-l1-segments",
        when: |s| {
            s.memory_load()
                && s.family() == Family::Maxwell
                && s.cc != Cc::new(5, 0)
                && s.cop != CacheOp::Ci
                && !s.cop.bypasses_l1()
                && s.l1 == L1Choice::On
        },
        text: "With L1 caching on, CC 5.2 counts 128-byte aligned segments (Best Practices Guide); the L1/TEX cache itself fetches only the 32-byte sectors used, so the traffic to L2 may be smaller than the 128-byte count",
        source: "Best Practices Guide 9.2.1; NVIDIA forums t/49571",
    },
    NoteRule {
        id: "pascal-l1-default",
        when: |s| s.memory_load() && s.family() == Family::Pascal && s.l1 != L1Choice::Off,
        text: "The Best Practices Guide says global loads are cached in L1 by default on 6.0+, the Programming Guide says 6.x behaves like 5.x (L2 only); the data access unit is 32 bytes either way, so the counts do not change",
        source: "Best Practices Guide 9.2.1 vs CUDA Programming Guide 6.x Global Memory",
    },
    NoteRule {
        id: "split-double-count",
        when: |s| !s.banks() && s.flag(flags::DOUBLE_COUNTED),
        text: "The warp was split into half- or quarter-warp requests and one block is charged in more than one request: that is the documented cost (each request is broken into cache-line requests issued independently)",
        source: "CUDA Programming Guide 5.0 F.4.2",
    },
    NoteRule {
        id: "counts-not-performance",
        when: |s| !s.banks() && s.flag(flags::MOVED_UNUSED),
        text: "These counts are per warp, not performance: neighbouring warps often reuse the same lines from cache (the Best Practices Guide's misaligned copy reaches about 9/10 of peak bandwidth, not the 4/5 the sector count suggests)",
        source: "Best Practices Guide 9.2.1.2",
    },
    NoteRule {
        id: "bank-mode-no-op",
        when: |s| s.banks() && !s.cc.has_bank_mode() && s.bank_mode == BankMode::EightByte,
        text: "The 8-byte bank mode exists only on Kepler (3.x); cudaDeviceSetSharedMemConfig is a no-op on CC {cc}, so 4-byte banks are used",
        source: "CUDA Programming Guide 11 K.3.3; CUDA runtime API (deprecated)",
    },
    NoteRule {
        id: "fermi-128-bit",
        when: |s| s.banks() && s.family() == Family::Fermi && s.size_bytes == 16,
        text: "Fermi: \"the majority of 128-bit accesses will cause 2-way bank conflicts\"; the guide's rule adds 1 to the largest number of quarter-warp threads with different addresses in one bank. warpscope counts half-warp passes over 32 four-byte banks, which gives the same 2 passes for a conflict-free half-warp and reports conflict degree 2",
        source: "CUDA Programming Guide 5.0 F.4.3",
    },
    NoteRule {
        id: "kepler-wide-derived",
        when: |s| {
            s.banks()
                && s.family() == Family::Kepler
                && (s.size_bytes == 16 || (s.size_bytes == 8 && s.bank_mode == BankMode::FourByte))
        },
        text: "Kepler banks deliver 64 bits per clock: warpscope serves accesses of up to 8 bytes in one pass of 32 lanes and 16-byte accesses in half-warps. The guide does not state this split; it is derived from the 64-bit bank width and unverified",
        source: "CUDA Programming Guide 11 K.3.3 (derived)",
    },
    NoteRule {
        id: "shared-measured",
        when: |s| s.banks() && s.flag(flags::MEASURED_MERGE) && s.shared_model == SharedModel::Measured,
        text: "Measured: on CC 7.0 and later, 64- and 128-bit accesses whose lanes share addresses in pairs (lane n with n^1, or n^2 for 128-bit) merge their phases, so this costs {wavefronts} wavefronts; the documented phase model counts {alt}. Choose the shared model \"documented\" to count that way",
        source: "gpu_shm_microbench (V100, A100); NVIDIA forums t/77228 and t/373160 (Nsight Compute on 8.6 and 9.0); docs/model.md#shared-memory-as-measured",
    },
    NoteRule {
        id: "shared-documented",
        when: |s| s.banks() && s.flag(flags::MEASURED_MERGE) && s.shared_model == SharedModel::Documented,
        text: "Counted with the documented phase model: {wavefronts} wavefronts. Measured on CC 7.0 and later, lanes that share addresses in pairs merge phases and this costs {alt}",
        source: "CUDA Programming Guide 20.4.3, Best Practices Guide 9.2.3 (phases); docs/model.md#shared-memory-as-measured (measurements)",
    },
    NoteRule {
        id: "lds64-uniform-unverified",
        when: |s| s.banks() && s.flag(flags::LDS64_UNIFORM),
        text: "LDS.64 with every lane on one address is counted as one wavefront per half-warp; on CC {cc} hardware behaviour for this case is unverified (measurements from 7.0 on merge the half-warps)",
        source: "docs/model.md#shared-memory and docs/model.md#shared-memory-as-measured",
    },
    NoteRule {
        id: "blackwell-unmodelled",
        when: |s| s.family() == Family::Blackwell,
        text: "CC {cc} (Blackwell): the memory rules are assumed unchanged from 9.0, unverified on hardware. Not modelled: tensor memory (TMEM) and the tcgen05 instructions that move data between shared memory, tensor memory and the tensor cores",
        source: "CUDA Programming Guide, compute capability 10.0/12.0 (memory rules not restated); PTX ISA, tcgen05",
    },
    NoteRule {
        id: "uniform-hint",
        when: |s| s.uniform_hint,
        text: "The .U uniform hint tells the hardware that addresses are likely uniform (or equal in lane pairs); it does not change the counts warpscope models",
        source: "the LDL/LDS instruction reference (.U); the LDG instruction reference (.U.128)",
    },
];

/// The notes that apply to `s`, in table order.
pub fn notes(s: &Situation) -> Vec<Note> {
    NOTES
        .iter()
        .filter(|r| (r.when)(s))
        .map(|r| {
            let mut text = r.text.to_string();
            if text.contains('{') {
                text = fill(text, s.cc, u64::from(s.wavefronts), u64::from(s.alt_wavefronts));
            }
            Note::new(r.id, text, r.source)
        })
        .collect()
}

fn fill(text: String, cc: Cc, wavefronts: u64, alt: u64) -> String {
    text.replace("{cc}", &cc.to_string())
        .replace("{wavefronts}", &wavefronts.to_string())
        .replace("{alt}", &alt.to_string())
}

/// A note written again for sums over many issues: the `{wavefronts}` and `{alt}` of its table row filled
/// with the totals (a block's notes are first written for the issue that brought them).
pub fn refill(note: &mut Note, wavefronts: u64, alt: u64) {
    if let Some(r) = NOTES.iter().find(|r| r.id == note.id && r.text.contains("{alt}")) {
        note.text = r.text.replace("{wavefronts}", &wavefronts.to_string()).replace("{alt}", &alt.to_string());
    }
}

/// Where docs/model.md#the-memory-system cache model is stated.
const CACHE_SOURCE: &str = "docs/model.md#the-memory-system (Nsight Compute Profiling Guide: memory tables, cache control; NVIDIA forum t/49571)";

/// The label every cache figure carries: "modelled (LRU, lockstep schedule, 108 SMs, 2 blocks per SM, 40 MB
/// L2, 16 ways)".
pub fn cache_label(p: &super::memsys::Preset, sms: u32, r: u32) -> String {
    let l2 = p.l2_bytes;
    let size = if l2 % super::memsys::MB == 0 {
        format!("{} MB", l2 / super::memsys::MB)
    } else if l2 >= super::memsys::MB {
        format!("{:.2} MB", l2 as f64 / super::memsys::MB as f64)
    } else {
        format!("{} KB", l2 / super::memsys::KB)
    };
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "modelled (LRU, lockstep schedule, {}, {} per SM, {size} L2, {} ways)",
        plural(sms, "SM", "SMs"),
        plural(r, "block", "blocks"),
        p.l2_ways
    )
}

/// What every cache figure assumes and leaves out, for `cc` on preset `p`.
pub fn cache_notes(
    cc: Cc,
    p: &super::memsys::Preset,
    res: &super::memsys::Residency,
    shared: Option<u64>,
    one_block: bool,
    sensitive: bool,
    local: bool,
) -> Vec<Note> {
    let mut out = vec![Note::new(
        "cache-modelled",
        "Cache figures are modelled, not measured: 128-byte lines of 32-byte sectors; each cache evicts the line \
         used longest ago (true LRU in every set); the warps of each SM take turns, one memory instruction each; \
         blocks run in waves (block b on SM (b - first block of its wave) mod SMs); caches start empty, \
         as Nsight Compute flushes them. Not modelled: the real order of warps and blocks, misses merged in \
         flight, L2 partitions and hashing, the real replacement policy, prefetch, compression, other clients of L2. \
         The bounds beside the figures hold for any order.",
        CACHE_SOURCE,
    )];
    let r = res.r;
    let blocks = |n: u32| format!("{n} block{}", if n == 1 { "" } else { "s" });
    let rest = match res.carveout_bytes {
        Some(c) => {
            let why = match shared {
                Some(0) => "the kernel uses no shared memory".to_string(),
                Some(b) => format!("the smallest that holds {} of {b} bytes of shared memory", blocks(res.r0)),
                None => format!(
                    "the smallest that holds {}, counted with no shared memory since the input does not say how \
                     much a block has; give it with --shared-bytes, or shared_bytes=N in the page's device field",
                    blocks(res.r0)
                ),
            };
            format!("a {} KB shared-memory carveout per SM ({why}), leaving {} KB of L1", c / 1024, res.l1_bytes / 1024)
        }
        None => format!("{} KB of L1 per SM", res.l1_bytes / 1024),
    };
    out.push(Note::new(
        "cache-device",
        format!(
            "Device: {} on CC {cc}, {} SMs, a {} KB L2 cache ({}-way set-associative); {} resident per SM ({} by the thread and \
             block limits); {rest}. {}.",
            p.gpu,
            p.sms,
            p.l2_bytes / 1024,
            p.l2_ways,
            blocks(r),
            res.r0,
            p.source
        ),
        CACHE_SOURCE,
    ));
    if one_block {
        out.push(Note::new(
            "cache-one-block",
            "One block on one SM: the reuse of its lines by other blocks, in L1 and in L2, is not counted. Run the \
             whole grid for the kernel's figures.",
            CACHE_SOURCE,
        ));
    }
    if sensitive {
        out.push(Note::new(
            "cache-sensitive",
            "Sensitive to the schedule: with another number of resident blocks per SM a hit rate moves by more than \
             2 points (or DRAM reads by more than 2 %). Near capacity the real order and L2 hashing decide.",
            CACHE_SOURCE,
        ));
    }
    if local {
        out.push(Note::new(
            "cache-local",
            "Local memory: each warp has its own region, interleaved as the Programming Guide describes, and what \
             its stores leave dirty in L2 is written to DRAM like global data.",
            CACHE_SOURCE,
        ));
    }
    if cc.family() == Family::Fermi {
        out.push(Note::new(
            "cache-fermi-lines",
            "CC 2.x: a load that misses L1 fetches its whole 128-byte line (four sectors) from L2; the L1 counters \
             count the sectors the lanes touch.",
            CACHE_SOURCE,
        ));
    }
    out
}

/// The notes of a constant-bank load (docs/model.md#constant-memory): the count is passes per distinct address; Nsight's IDC
/// description counts distinct lines instead, shown as the alternative.
pub fn constant_notes(_k: crate::model::tally::ConstCounts) -> Vec<Note> {
    vec![Note::new(
        "constant-passes",
        "The constant cache serves one address per pass: a warp's request \"is split into as many separate requests as there are different memory addresses\", so lanes reading one address cost one pass and per-thread indices serialize. Nsight Compute's description of the IDC unit counts distinct cache lines instead; the count with 64-byte lines is shown beside the passes as the alternative. Constant loads are not L1/TEX traffic",
        "CUDA Programming Guide, Constant Memory; Nsight Compute, IDC; docs/model.md#constant-memory",
    )]
}

/// An atomic whose address depends on data (a histogram's `&bins[in[i]]`): its issues are left out (all of
/// them when `all`), with what docs/model.md#atomics expects of such data.
pub fn atomic_address_data(why: &str, all: bool) -> Note {
    Note::new(
        "atomic-address-data",
        format!(
            "Not counted where its address is data: this atomic's address depends on data ({why}), so those issues are left out of every count here{}. The model reference expects for such data (docs/model.md#atomics): 256 bins over uniformly random bytes touch 20.41 distinct sectors per request on average; all-equal data, 1 sector with 32 lanes in series",
            if all { " (all of them)" } else { "" }
        ),
        "docs/model.md#atomics",
    )
}

/// The arrays given as data, their types, lengths and sources (and a conversion, in a note of its own).
pub fn data_given(text: String) -> Note {
    Note::new("data-given", text, "docs/model.md#kernels-on-data")
}

/// A block reads more distinct constant bytes than the constant cache's 8 KB working set per SM.
pub fn constant_working_set(bytes: u64) -> Note {
    Note::new(
        "constant-working-set",
        format!(
            "A block reads {bytes} distinct bytes of constant memory, more than the constant cache's 8 KB working set per SM: its reads miss and wait for memory (64 KB of constant memory in all)"
        ),
        "CUDA Programming Guide, Compute Capabilities table (constant cache working set per SM); docs/model.md#constant-memory",
    )
}

/// The program's note about its atomics whose address is data, `(instruction, line)` each (once per inlined
/// copy): they are listed, not counted.
pub fn atomics_not_counted(items: &[(String, usize)]) -> Note {
    let mut seen: Vec<(&str, usize, usize)> = Vec::new();
    for (op, line) in items {
        match seen.iter_mut().find(|(o, l, _)| *o == op.as_str() && *l == *line) {
            Some(e) => e.2 += 1,
            None => seen.push((op, *line, 1)),
        }
    }
    let list: Vec<String> = seen
        .iter()
        .map(|(op, line, n)| if *n > 1 { format!("{op} (line {line}) ×{n}") } else { format!("{op} (line {line})") })
        .collect();
    Note::new(
        "atomics-not-costed",
        format!(
            "Atomics whose address is data are listed but not counted, since {}: {}. The model reference expects (docs/model.md#atomics), for 256 bins over uniformly random bytes, 20.41 distinct sectors per request; for all-equal data, 1 sector with 32 lanes in series.",
            crate::text::GIVE_DATA,
            list.join(", ")
        ),
        "docs/model.md#atomics",
    )
}
