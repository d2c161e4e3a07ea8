//! The engine against a measurement: each probe's measured counts beside the engine's prediction for the
//! GPU's CC ([`compare`]), the departures from the documented rules that measurements have established
//! ([`DEPARTURES`]), and the outcome as a plain-text table ([`Comparison::to_text`]). The chart of the same
//! outcome is `chart.rs`.

use super::ncu::{err, CalibrationError, Measurement};
use super::probes::{probes, Probe};
use super::FORMAT;
use crate::model::arch::Cc;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A measured departure from the documented rule, recorded as a model note: on CCs `cc_min..=cc_max`, the
/// probes whose id starts with `probe_prefix` measure `metric` differently from the rule, for the reason
/// given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// The lowest CC it was measured on.
    pub cc_min: Cc,
    /// The highest.
    pub cc_max: Cc,
    /// Which probes.
    pub probe_prefix: &'static str,
    /// Which metric.
    pub metric: &'static str,
    /// The model note: what hardware does, with the measurement.
    pub note: &'static str,
}

/// Departures measured so far. Each entry is backed by a committed measurement file.
pub const DEPARTURES: &[Departure] = &[];

/// How one probe compares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Verdict {
    /// Every metric equals the prediction.
    Agree,
    /// Some metrics differ, each covered by a recorded departure.
    Explained {
        /// The differing metrics: (metric, predicted, measured, note).
        rows: Vec<(String, u64, u64, String)>,
    },
    /// Some metrics differ with no recorded reason.
    Differ {
        /// The differing metrics: (metric, predicted, measured).
        rows: Vec<(String, u64, u64)>,
    },
    /// The pattern changed since it was measured (or is gone): measure again.
    Stale {
        /// Why.
        reason: String,
    },
}

/// One probe's comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProbeComparison {
    /// The probe.
    pub id: String,
    /// Its instruction.
    pub op: String,
    /// The metrics compared (those measured), with (predicted, measured).
    pub counts: BTreeMap<String, (u64, u64)>,
    /// The outcome.
    pub verdict: Verdict,
}

/// A measurement file set beside the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// The GPU.
    pub gpu: String,
    /// Its CC.
    pub cc: Cc,
    /// Per probe.
    pub probes: Vec<ProbeComparison>,
}

impl Comparison {
    /// (probes that agree, probes compared): stale probes are not compared.
    pub fn agreement(&self) -> (usize, usize) {
        let compared = self.probes.iter().filter(|p| !matches!(p.verdict, Verdict::Stale { .. }));
        let (mut agree, mut total) = (0, 0);
        for p in compared {
            total += 1;
            if p.verdict == Verdict::Agree {
                agree += 1;
            }
        }
        (agree, total)
    }

    /// (counts equal, counts compared) over every metric of every compared probe.
    pub fn count_agreement(&self) -> (usize, usize) {
        let mut eq = 0;
        let mut total = 0;
        for p in self.probes.iter().filter(|p| !matches!(p.verdict, Verdict::Stale { .. })) {
            for (pred, meas) in p.counts.values() {
                total += 1;
                if pred == meas {
                    eq += 1;
                }
            }
        }
        (eq, total)
    }

    /// Probes that differ with no recorded reason, or whose pattern changed since measurement.
    pub fn problems(&self) -> Vec<&ProbeComparison> {
        self.probes.iter().filter(|p| matches!(p.verdict, Verdict::Differ { .. } | Verdict::Stale { .. })).collect()
    }

    /// A plain-text table: one line per probe, then every differing count.
    pub fn to_text(&self) -> String {
        let (a, n) = self.agreement();
        let (ca, cn) = self.count_agreement();
        let mut s = format!(
            "{} (CC {}): {a} of {n} probes agree with the engine ({:.1}%); {ca} of {cn} counts equal\n",
            self.gpu,
            self.cc,
            percent(a, n)
        );
        for p in &self.probes {
            let v = match &p.verdict {
                Verdict::Agree => "agree".to_string(),
                Verdict::Explained { .. } => "differs (recorded departure)".to_string(),
                Verdict::Differ { .. } => "DIFFERS".to_string(),
                Verdict::Stale { reason } => format!("stale: {reason}"),
            };
            let _ = writeln!(s, "  {:<34} {:<18} {v}", p.id, p.op);
            match &p.verdict {
                Verdict::Differ { rows } => {
                    for (m, pred, meas) in rows {
                        let _ = writeln!(s, "      {m}: engine {pred}, measured {meas}");
                    }
                }
                Verdict::Explained { rows } => {
                    for (m, pred, meas, note) in rows {
                        let _ = writeln!(s, "      {m}: engine {pred}, measured {meas}: {note}");
                    }
                }
                _ => {}
            }
        }
        s
    }
}

pub(super) fn percent(a: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        100.0 * a as f64 / n as f64
    }
}

/// Compares a measurement with the engine, pattern by pattern, for the measurement's CC. Only metrics the
/// measurement holds are compared (an older Nsight may lack some); a probe whose fingerprint changed is
/// stale, not compared.
pub fn compare(m: &Measurement, departures: &[Departure]) -> Result<Comparison, CalibrationError> {
    if m.format != FORMAT {
        return Err(err(format!("measurement format {} (this warpscope reads {FORMAT})", m.format)));
    }
    let cc = Cc::parse(&m.cc).map_err(|e| err(format!("cc {:?}: {e}", m.cc)))?;
    let (probes, _) = probes();
    let by_id: BTreeMap<&str, &Probe> = probes.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut out = Vec::new();
    for mp in &m.probes {
        let stale = |reason: String| ProbeComparison {
            id: mp.id.clone(),
            op: mp.op.clone(),
            counts: BTreeMap::new(),
            verdict: Verdict::Stale { reason },
        };
        let Some(p) = by_id.get(mp.id.as_str()) else {
            out.push(stale("no such probe in this warpscope".into()));
            continue;
        };
        if p.fingerprint() != mp.fingerprint {
            out.push(stale(format!(
                "the pattern changed (fingerprint {} now, {} measured)",
                p.fingerprint(),
                mp.fingerprint
            )));
            continue;
        }
        let predicted = p.predict(cc);
        let mut counts = BTreeMap::new();
        let mut differ = Vec::new();
        let mut explained = Vec::new();
        for (metric, &meas) in &mp.counts {
            let Some(&pred) = predicted.get(metric) else { continue };
            counts.insert(metric.clone(), (pred, meas));
            if pred != meas {
                let dep = departures.iter().find(|d| {
                    d.metric == metric && mp.id.starts_with(d.probe_prefix) && cc >= d.cc_min && cc <= d.cc_max
                });
                match dep {
                    Some(d) => explained.push((metric.clone(), pred, meas, d.note.to_string())),
                    None => differ.push((metric.clone(), pred, meas)),
                }
            }
        }
        let verdict = if !differ.is_empty() {
            Verdict::Differ { rows: differ }
        } else if !explained.is_empty() {
            Verdict::Explained { rows: explained }
        } else {
            Verdict::Agree
        };
        out.push(ProbeComparison { id: mp.id.clone(), op: mp.op.clone(), counts, verdict });
    }
    Ok(Comparison { gpu: m.gpu.clone(), cc, probes: out })
}
