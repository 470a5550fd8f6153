//! `repair`: the work is `mediaslice_std::repair`; this prints its report
//! (one stderr line per finding, or JSON on stdout) and picks the exit code.

use super::*;
use mediaslice_std::repair::{repair, RepairOptions, RepairReport};

/// The report as JSON: what was recovered per stream and what was dropped.
fn report_json(input: &Path, output: &Path, r: &RepairReport, secs: f64) -> serde_json::Value {
    use serde_json::json;
    json!({
        "input": input.to_string_lossy(),
        "output": output.to_string_lossy(),
        "method": r.method,
        "output_format": r.output_format.and_then(|f| f.names().first().copied()),
        "input_bytes": r.input_bytes,
        "output_bytes": r.output_bytes,
        "seconds_taken": secs,
        "recovered": r.streams.iter().map(|s| json!({
            "stream": s.index,
            "codec_name": s.codec,
            "packets": s.packets,
            "bytes": s.bytes,
            "seconds": s.seconds,
        })).collect::<Vec<_>>(),
        "streams_left_out": r.left_out.iter().map(|(i, why)| json!({"stream": i, "reason": why})).collect::<Vec<_>>(),
        "dropped": r.dropped.iter().map(|d| json!({"offset": d.offset, "bytes": d.bytes, "runs": d.runs, "reason": d.reason})).collect::<Vec<_>>(),
        "dropped_unlisted": r.dropped_unlisted,
        "diagnostics": r.diagnostics.iter().map(|(c, o, n)| json!({"code": c, "offset": o, "count": n})).collect::<Vec<_>>(),
    })
}

/// `mediaslice repair IN OUT [--reference GOOD] [--progressive] [--json]`.
/// Exit code 0 when OUT is written (whatever was dropped is reported), 1
/// when nothing could be written (no OUT then).
pub(super) fn cmd_repair(a: &RepairArgs, read: InputRead) -> u8 {
    let name = a.input.to_string_lossy();
    let started = Instant::now();
    let opts = RepairOptions {
        reference: a.reference.clone(),
        progressive: a.progressive,
        read,
    };
    match repair(&a.input, &a.output, &opts) {
        Ok(r) => {
            let secs = started.elapsed().as_secs_f64();
            for s in &r.streams {
                eprintln!(
                    "mediaslice: {name}: stream {} ({}) recovered: {} packets, {:.3} s, {} bytes",
                    s.index, s.codec, s.packets, s.seconds, s.bytes
                );
            }
            for (i, why) in &r.left_out {
                eprintln!("mediaslice: {name}: stream {i} left out: {why}");
            }
            for d in &r.dropped {
                if d.runs > 1 {
                    eprintln!(
                        "mediaslice: {name}: dropped {} bytes in {} runs from {}: {}",
                        d.bytes, d.runs, d.offset, d.reason
                    );
                } else {
                    eprintln!(
                        "mediaslice: {name}: dropped {} bytes at {}: {}",
                        d.bytes, d.offset, d.reason
                    );
                }
            }
            if r.dropped_unlisted > 0 {
                eprintln!(
                    "mediaslice: {name}: {} more dropped ranges not listed",
                    r.dropped_unlisted
                );
            }
            for (code, offset, n) in &r.diagnostics {
                eprintln!("mediaslice: {name}: reader: {code} at {offset} ({n}x)");
            }
            eprintln!(
                "mediaslice: {name} -> {} ({}, {}): {} packets, {} bytes written in {secs:.3} s",
                a.output.to_string_lossy(),
                r.method,
                r.output_format.and_then(|f| f.names().first().copied()).unwrap_or("?"),
                r.packets(),
                r.output_bytes
            );
            if a.json {
                let doc = report_json(&a.input, &a.output, &r, secs);
                println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
            }
            EXIT_OK
        }
        Err(e) => {
            eprintln!("mediaslice: {name}: {e}");
            EXIT_FAILED
        }
    }
}
