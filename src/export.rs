//! Packing exported figures for download: an animation's numbered frames as one zip archive. Used by the
//! front ends only (the CLI's `figure --step all -o FILE.zip` and the page's zip worker, `warpscope-zip`):
//! it writes through `std::io::Write`, which the core does not use.
//!
//! May import: nothing of the crate.

/// Files (name, bytes) packed, stored uncompressed, in one zip archive: an animation's numbered frames as one
/// download. Names are used as given (`step00.svg`); an error names the file it stopped at.
pub fn zip_files(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    let mut out = Vec::new();
    let mut archive = rawzip::ZipArchiveWriter::new(&mut out);
    for (name, bytes) in files {
        let fail = |e: &dyn std::fmt::Display| format!("zip: {name}: {e}");
        let (mut entry, config) = archive
            .new_file(name.as_str())
            .compression_method(rawzip::CompressionMethod::STORE)
            .start()
            .map_err(|e| fail(&e))?;
        let mut writer = config.wrap(&mut entry);
        writer.write_all(bytes).map_err(|e| fail(&e))?;
        let (_, descriptor) = writer.finish().map_err(|e| fail(&e))?;
        entry.finish(descriptor).map_err(|e| fail(&e))?;
    }
    archive.finish().map_err(|e| format!("zip: {e}"))?;
    Ok(out)
}
