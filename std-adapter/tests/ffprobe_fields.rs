//! Field parity with ffprobe: `mediaslice probe --json` over the shared
//! samples (`../shared/samples`, with ffprobe 5.1's JSON under
//! `expected/`), compared field by field as `shared/tools/fields.py` does,
//! and held to the rates measured when the fields were last raised (the
//! table in docs/cli.md, "Parity with ffprobe"). Skipped, with a message,
//! when the samples are absent.

use flate2::read::GzDecoder;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const STREAM_FIELDS: &[&str] = &[
    "codec_name",
    "codec_type",
    "codec_tag_string",
    "profile",
    "width",
    "height",
    "pix_fmt",
    "level",
    "field_order",
    "sample_aspect_ratio",
    "display_aspect_ratio",
    "r_frame_rate",
    "avg_frame_rate",
    "time_base",
    "start_pts",
    "start_time",
    "duration_ts",
    "duration",
    "bit_rate",
    "nb_frames",
    "sample_fmt",
    "sample_rate",
    "channels",
    "channel_layout",
    "bits_per_sample",
    "bits_per_raw_sample",
    "disposition.default",
    "disposition.attached_pic",
    "tags",
];
const FORMAT_FIELDS: &[&str] = &[
    "format_name",
    "format_long_name",
    "nb_streams",
    "nb_programs",
    "start_time",
    "duration",
    "size",
    "bit_rate",
    "tags",
];

/// The overall rate of equal facts reached, in percent (fields.py's last
/// line), less nothing: a change that loses facts fails here.
const OVERALL_FLOOR: f64 = 96.1;

/// Per field, the rate of equal facts reached, in percent.
const FIELD_FLOORS: &[(&str, f64)] = &[
    ("format.bit_rate", 97.6),
    ("format.duration", 97.7),
    ("format.format_long_name", 98.6),
    ("format.format_name", 98.6),
    ("format.nb_programs", 98.6),
    ("format.nb_streams", 98.0),
    ("format.size", 99.0),
    ("format.start_time", 95.8),
    ("format.tags", 92.2),
    ("stream.avg_frame_rate", 91.9),
    ("stream.bit_rate", 90.7),
    ("stream.bits_per_raw_sample", 97.3),
    ("stream.bits_per_sample", 99.6),
    ("stream.channel_layout", 96.6),
    ("stream.channels", 97.8),
    ("stream.codec_name", 96.2),
    ("stream.codec_tag_string", 95.8),
    ("stream.codec_type", 97.8),
    ("stream.display_aspect_ratio", 97.0),
    ("stream.disposition.attached_pic", 97.3),
    ("stream.disposition.default", 97.3),
    ("stream.duration", 94.4),
    ("stream.duration_ts", 93.4),
    ("stream.field_order", 92.9),
    ("stream.height", 96.2),
    ("stream.level", 94.7),
    ("stream.nb_frames", 91.3),
    ("stream.pix_fmt", 97.7),
    ("stream.profile", 97.1),
    ("stream.r_frame_rate", 93.1),
    ("stream.sample_aspect_ratio", 99.0),
    ("stream.sample_fmt", 96.3),
    ("stream.sample_rate", 96.9),
    ("stream.start_pts", 93.8),
    ("stream.start_time", 93.8),
    ("stream.tags", 96.3),
    ("stream.time_base", 97.1),
    ("stream.width", 96.8),
];

fn samples() -> PathBuf {
    match std::env::var_os("MEDIASLICE_SAMPLES") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/samples"),
    }
}

fn get<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut v = v;
    for part in path.split('.') {
        v = v.as_object()?.get(part)?;
    }
    Some(v)
}

/// Python's `str()` of a JSON scalar, as fields.py compares them.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

fn fraction(s: &str) -> Option<(i128, i128)> {
    let s = s.replace(':', "/");
    let (n, d) = s.split_once('/').unwrap_or((&s, "1"));
    let (n, d): (i128, i128) = (n.trim().parse().ok()?, d.trim().parse().ok()?);
    (d != 0).then_some((n, d))
}

/// fields.py's `same`.
fn same(field: &str, exp: &Value, got: Option<&Value>) -> bool {
    let Some(got) = got.filter(|g| !g.is_null()) else {
        return false;
    };
    if field == "tags" {
        let g: HashMap<String, String> = got
            .as_object()
            .map(|o| o.iter().map(|(k, v)| (k.to_lowercase(), text(v))).collect())
            .unwrap_or_default();
        return exp
            .as_object()
            .is_some_and(|e| e.iter().all(|(k, v)| g.get(&k.to_lowercase()) == Some(&text(v))));
    }
    let (e, g) = (text(exp), text(got));
    if matches!(
        field,
        "r_frame_rate" | "avg_frame_rate" | "time_base" | "sample_aspect_ratio" | "display_aspect_ratio"
    ) {
        return match (fraction(&e), fraction(&g)) {
            (Some((a, b)), Some((c, d))) => a * d == c * b,
            _ => e == g,
        };
    }
    match (e.trim().parse::<f64>(), g.trim().parse::<f64>()) {
        (Ok(ef), Ok(gf)) if matches!(field, "duration" | "start_time" | "bit_rate") => {
            (ef - gf).abs() <= (ef.abs() * 0.005).max(1e-6)
        }
        (Ok(ef), Ok(gf)) => ef == gf,
        _ => e == g,
    }
}

fn expected(path: &Path) -> Option<Value> {
    let f = std::fs::File::open(path).ok()?;
    serde_json::from_reader(GzDecoder::new(f)).ok()
}

fn probe(media: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["probe", "--json"])
        .arg(media)
        .output()
        .expect("the binary runs");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn stream_and_format_facts_keep_their_parity_with_ffprobe() {
    let root = samples();
    let exp_root = root.join("expected");
    let Ok(families) = std::fs::read_dir(&exp_root) else {
        let _ = writeln!(
            std::io::stderr(),
            "note: skipped (set MEDIASLICE_SAMPLES): {} is absent",
            exp_root.display()
        );
        return;
    };
    // field -> (stated, equal)
    let mut stats: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut families: Vec<PathBuf> = families.filter_map(|e| e.ok().map(|e| e.path())).collect();
    families.sort();
    let mut files = 0;
    for fam in families {
        let Ok(entries) = std::fs::read_dir(&fam) else { continue };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json.gz"))
            .collect();
        names.sort();
        for name in names {
            let fam_name = fam.file_name().and_then(|f| f.to_str()).unwrap_or_default();
            let media = root.join(fam_name).join(name.trim_end_matches(".json.gz"));
            if !media.exists() {
                continue;
            }
            let Some(exp) = expected(&fam.join(&name)) else {
                continue;
            };
            let exp_streams = exp
                .get("streams")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if exp_streams.is_empty() {
                continue;
            }
            files += 1;
            let got = probe(&media);
            let mut checks: Vec<(String, Option<Value>, Option<Value>)> = Vec::new();
            let (ef, gf) = (exp.get("format").cloned(), got.get("format").cloned());
            for f in FORMAT_FIELDS {
                let e = ef.as_ref().and_then(|v| get(v, f)).cloned();
                let g = gf.as_ref().and_then(|v| get(v, f)).cloned();
                checks.push((format!("format.{f}"), e, g));
            }
            // Streams paired in order by codec_type.
            let mut by_type: HashMap<String, Vec<Value>> = HashMap::new();
            for s in got
                .get("streams")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                let t = s.get("codec_type").map(text).unwrap_or_default();
                by_type.entry(t).or_default().push(s);
            }
            for es in &exp_streams {
                let t = es.get("codec_type").map(text).unwrap_or_default();
                let gs = by_type.get_mut(&t).and_then(|l| (!l.is_empty()).then(|| l.remove(0)));
                for f in STREAM_FIELDS {
                    let g = gs.as_ref().and_then(|v| get(v, f)).cloned();
                    checks.push((format!("stream.{f}"), get(es, f).cloned(), g));
                }
            }
            for (key, e, g) in checks {
                let Some(e) = e.filter(|e| !e.is_null()) else { continue };
                let tags = key.ends_with("tags");
                if (tags && !e.is_object()) || e.as_object().is_some_and(|o| o.is_empty()) {
                    continue;
                }
                let field = key.split_once('.').map_or("", |(_, f)| f);
                let st = stats.entry(key.clone()).or_default();
                st.0 += 1;
                st.1 += u64::from(same(field, &e, g.as_ref()));
            }
        }
    }
    if files == 0 {
        let _ = writeln!(
            std::io::stderr(),
            "note: skipped (set MEDIASLICE_SAMPLES): no samples beside {}",
            exp_root.display()
        );
        return;
    }
    let (mut stated, mut equal) = (0, 0);
    for (k, (e, q)) in &stats {
        println!("{k:32} {q:5}/{e:<5} {:5.1}%", 100.0 * *q as f64 / *e as f64);
        stated += e;
        equal += q;
    }
    let rate = 100.0 * equal as f64 / stated as f64;
    println!("stream and format facts over {files} files: {equal}/{stated} equal = {rate:.1}%");
    let mut low = Vec::new();
    for (field, floor) in FIELD_FLOORS {
        if let Some((e, q)) = stats.get(*field) {
            let r = 100.0 * *q as f64 / *e as f64;
            if r + 0.05 < *floor {
                low.push(format!("{field}: {r:.1}% < {floor}%"));
            }
        }
    }
    assert!(low.is_empty(), "fields below their floor: {low:?}");
    assert!(rate + 0.05 >= OVERALL_FLOOR, "parity {rate:.1}% < {OVERALL_FLOOR}%");
}
