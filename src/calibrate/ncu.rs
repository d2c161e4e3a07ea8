//! Measurements in: the Nsight Compute metrics a probe is measured with ([`metrics`]), the file the probe
//! program writes about the device and each launch ([`DeviceRun`]), Nsight Compute's CSV
//! ([`parse_ncu_csv`]), and the two joined into one GPU's [`Measurement`] ([`ingest`]), the file committed
//! as `tests/data/hardware/<gpu>.json`.

use super::probes::{probes, Probe, Skipped};
use super::FORMAT;
use crate::model::arch::Cc;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the probe program wrote about the device and each launch.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct DeviceRun {
    /// `cudaDeviceProp::name`.
    pub gpu: String,
    /// `major.minor`.
    pub cc: String,
    /// `cudaDriverGetVersion`.
    pub cuda_driver: u32,
    /// `cudaRuntimeGetVersion`.
    pub cuda_runtime: u32,
    /// The shared-window address of dynamic shared memory.
    pub shared_base: u64,
    /// Each launch.
    pub probes: Vec<Launched>,
}

/// One launch of the probe program.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Launched {
    /// The probe.
    pub id: String,
    /// Its kernel.
    pub kernel: String,
    /// Warps launched.
    pub warps: u32,
    /// The CUDA error, if the launch failed.
    pub error: Option<String>,
}

/// A problem with measurement input, with the file and line where that makes sense.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CalibrationError(pub String);

pub(super) fn err(msg: impl Into<String>) -> CalibrationError {
    CalibrationError(msg.into())
}

/// Reads Nsight Compute's CSV (`ncu --csv --print-units base --metrics ...`, the default "details" page: one
/// row per kernel launch and metric) into kernel name -> metric -> value. Lines before the header (`==PROF==`
/// messages, the program's own output) are skipped; thousands separators are accepted; `n/a` and empty
/// values are left out. A kernel that
/// appears under two launch IDs is an error: each probe runs once.
pub fn parse_ncu_csv(text: &str) -> Result<BTreeMap<String, BTreeMap<String, u64>>, CalibrationError> {
    let start = text
        .lines()
        .position(|l| l.starts_with("\"ID\""))
        .ok_or_else(|| err("no Nsight Compute CSV header (a line starting with \"ID\") found"))?;
    let body: String = text.lines().skip(start).filter(|l| !l.starts_with("==")).collect::<Vec<_>>().join("\n");
    let mut rdr = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(body.as_bytes());
    let headers = rdr.headers().map_err(|e| err(format!("CSV header: {e}")))?.clone();
    let col = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| err(format!("the CSV has no \"{name}\" column")))
    };
    let (c_id, c_kernel, c_metric, c_value) =
        (col("ID")?, col("Kernel Name")?, col("Metric Name")?, col("Metric Value")?);
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = start + i + 2;
        let rec = rec.map_err(|e| err(format!("line {line}: {e}")))?;
        let field = |c: usize| rec.get(c).unwrap_or("").trim();
        let kernel = field(c_kernel).split('(').next().unwrap_or("").trim().to_string();
        let id = field(c_id).to_string();
        if let Some(prev) = ids.insert(kernel.clone(), id.clone()) {
            if prev != id {
                return Err(err(format!(
                    "line {line}: kernel {kernel} was profiled twice (IDs {prev} and {id}); run each probe once"
                )));
            }
        }
        // Nsight writes `n/a` (or nothing) for a metric a kernel has no value for: left out, not compared.
        if matches!(field(c_value), "" | "n/a") {
            continue;
        }
        let raw = field(c_value).replace(',', "");
        let value: f64 = raw.parse().map_err(|_| {
            err(format!("line {line}: metric value {:?} of {} is not a number", field(c_value), field(c_metric)))
        })?;
        if value < 0.0 || value.fract() != 0.0 {
            return Err(err(format!("line {line}: {} = {raw} is not a count", field(c_metric))));
        }
        out.entry(kernel).or_default().insert(field(c_metric).to_string(), value as u64);
    }
    Ok(out)
}

/// One GPU's measurements: the file committed as `tests/data/hardware/<gpu>.json`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Measurement {
    /// [`FORMAT`].
    pub format: u32,
    /// The GPU's name.
    pub gpu: String,
    /// Its compute capability, `major.minor`.
    pub cc: String,
    /// The driver release (`nvidia-smi`), when known.
    pub driver: String,
    /// CUDA driver API and runtime versions as `cuda*GetVersion` reports them.
    pub cuda_driver: u32,
    /// The runtime the probe program was built with.
    pub cuda_runtime: u32,
    /// The Nsight Compute version, when known.
    pub ncu: String,
    /// The shared-window address of dynamic shared memory on this GPU.
    pub shared_base: u64,
    /// Per probe.
    pub probes: Vec<MeasuredProbe>,
}

/// One probe's counts.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct MeasuredProbe {
    /// The probe.
    pub id: String,
    /// [`Probe::fingerprint`] when measured.
    pub fingerprint: String,
    /// The instruction.
    pub op: String,
    /// Warps (issues) measured.
    pub warps: u32,
    /// Metric -> count, as Nsight Compute reported it.
    pub counts: BTreeMap<String, u64>,
}

/// Joins the probe program's device file and Nsight Compute's counts into a [`Measurement`]. Probes that
/// failed to launch or that Nsight did not report are left out (and listed in the second value).
pub fn ingest(
    device: &DeviceRun,
    ncu: &BTreeMap<String, BTreeMap<String, u64>>,
    driver: &str,
    ncu_version: &str,
) -> Result<(Measurement, Vec<Skipped>), CalibrationError> {
    let (probes, _) = probes();
    let by_id: BTreeMap<&str, &Probe> = probes.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for l in &device.probes {
        let Some(p) = by_id.get(l.id.as_str()) else {
            missing.push(Skipped { id: l.id.clone(), reason: "not a probe of this warpscope: emit again".into() });
            continue;
        };
        if let Some(e) = &l.error {
            missing.push(Skipped { id: l.id.clone(), reason: format!("the launch failed: {e}") });
            continue;
        }
        let Some(counts) = ncu.get(&l.kernel) else {
            missing.push(Skipped { id: l.id.clone(), reason: format!("Nsight Compute reported no {}", l.kernel) });
            continue;
        };
        out.push(MeasuredProbe {
            id: l.id.clone(),
            fingerprint: p.fingerprint(),
            op: p.instr().text.clone(),
            warps: l.warps,
            counts: counts.clone(),
        });
    }
    if out.is_empty() {
        return Err(err("no probe has counts: check that ncu profiled the ws_ kernels"));
    }
    Cc::parse(&device.cc).map_err(|e| err(format!("device cc {:?}: {e}", device.cc)))?;
    Ok((
        Measurement {
            format: FORMAT,
            gpu: device.gpu.clone(),
            cc: device.cc.clone(),
            driver: driver.to_string(),
            cuda_driver: device.cuda_driver,
            cuda_runtime: device.cuda_runtime,
            ncu: ncu_version.to_string(),
            shared_base: device.shared_base,
            probes: out,
        },
        missing,
    ))
}
