//! Detection never claims a file of another format: every file in
//! `../shared/samples/<family>/` is detected as that family or not at all.
//! Families this build has no demuxer for must be detected as `None`.
//! Files in `fuzz/` and `other/` are judged by their extension.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::detect::detect_source;
use mediaslice::{FormatKind, Limits, SliceSource};
use std::path::Path;

/// The kinds a folder's files may be detected as (empty: must be `None`).
fn allowed_for_folder(folder: &str) -> Option<&'static [FormatKind]> {
    use FormatKind::*;
    Some(match folder {
        "mp3" => &[Mp3],
        "adts" => &[Aac],
        "ac3" => &[Ac3, Eac3],
        "amr" => &[Amr],
        "h264" => &[H264],
        "h265" => &[Hevc],
        "ivf" => &[Ivf],
        "av1obu" => &[Obu, Av1AnnexB],
        "dv" => &[Dv],
        "wav" => &[Wav, Rf64, Wave64],
        "mp4" => &[Mp4],
        "avi" => &[Avi],
        "aiff" => &[Aiff],
        "caf" => &[Caf],
        "au" => &[Au],
        "tta" => &[Tta],
        "dsf" => &[Dsf],
        "dff" => &[Dff],
        "iff" => &[Iff],
        "wv" => &[WavPack],
        "ape" => &[Ape],
        "mpc" => &[Musepack7, Musepack8],
        "mxf" => &[Mxf],
        "mpegts" => &[MpegTs],
        "mpegps" => &[MpegPs],
        "asf" => &[Asf],
        "flv" => &[Flv],
        // Families without a demuxer in this build yet.
        "flac" => &[Flac],
        "matroska" => &[Matroska],
        "ogg" => &[Ogg],
        _ => return None,
    })
}

fn allowed_for_extension(name: &str) -> &'static [FormatKind] {
    use FormatKind::*;
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        // tinytag's ILBM picture is named `.aiff`: its content is IFF.
        _ if name.contains("__ilbm.") => &[Iff],
        "mp3" => &[Mp3],
        "aac" | "adts" => &[Aac],
        "264" | "h264" => &[H264],
        "mpg" | "mpeg" | "m2v" | "m1v" => &[MpegVideo, MpegPs],
        "m4v" => &[M4v],
        "aif" | "aiff" | "aifc" => &[Aiff],
        "avi" => &[Avi],
        "caf" => &[Caf],
        "au" | "snd" => &[Au],
        "tta" => &[Tta],
        "dsf" => &[Dsf],
        "dff" => &[Dff],
        "iff" | "ilbm" | "lbm" | "8svx" | "16sv" => &[Iff],
        "wv" => &[WavPack],
        "ape" => &[Ape],
        "mpc" => &[Musepack7, Musepack8],
        "mxf" => &[Mxf],
        "ts" | "m2ts" => &[MpegTs],
        "wma" | "wmv" | "asf" => &[Asf],
        "flv" => &[Flv],
        "flac" => &[Flac],
        "ogg" | "oga" | "ogv" | "opus" | "spx" => &[Ogg],
        "mkv" | "mka" | "webm" => &[Matroska],
        "wav" => &[Wav, Rf64, Wave64],
        "mp4" | "mov" | "m4a" | "m4b" | "avif" => &[Mp4],
        _ if name.contains("rav1d__") || name.contains("dav1d") => &[Ivf, Obu, Av1AnnexB],
        // androidx/media's Ogg test streams have no extension.
        _ if name.contains("packet") && name.starts_with("media__") => &[Ogg],
        _ => &[],
    }
}

#[test]
fn every_sample_is_its_family_or_nothing() {
    let root = common::samples_root();
    let Ok(dirs) = std::fs::read_dir(&root) else {
        eprintln!("no samples at {}", root.display());
        return;
    };
    let mut wrong = Vec::new();
    let mut total = 0;
    let mut per: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for d in dirs.filter_map(|e| e.ok()) {
        let folder = d.file_name().to_string_lossy().to_string();
        if folder == "expected" || !d.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(d.path()).unwrap().filter_map(|e| e.ok()) {
            let name = f.file_name().to_string_lossy().to_string();
            let data = std::fs::read(f.path()).unwrap();
            let got = detect_source(&mut SliceSource::new(&data), None, &Limits::default()).unwrap();
            total += 1;
            let allowed = allowed_for_folder(&folder).unwrap_or_else(|| allowed_for_extension(&name));
            let e = per.entry(folder.clone()).or_default();
            e.1 += 1;
            match got {
                None => {}
                Some(k) if allowed.contains(&k) => e.0 += 1,
                Some(k) => wrong.push(format!("{folder}/{name}: detected as {k:?}")),
            }
        }
    }
    for (k, (hit, n)) in &per {
        println!("{k:10} detected {hit:3}/{n:<3}");
    }
    println!("{total} files");
    assert!(wrong.is_empty(), "wrong detections:\n{}", wrong.join("\n"));
}

#[test]
fn elementary_stream_samples_are_detected() {
    // Every sample ffprobe reads in these folders is found by content.
    let root = common::samples_root();
    let mut missed = Vec::new();
    for folder in ["mp3", "adts", "ac3", "amr", "h264", "h265", "ivf"] {
        let Ok(rd) = std::fs::read_dir(root.join(folder)) else {
            continue;
        };
        for f in rd.filter_map(|e| e.ok()) {
            let name = f.file_name().to_string_lossy().to_string();
            let exp = root.join("expected").join(folder).join(format!("{name}.json.gz"));
            let readable = std::fs::metadata(&exp).is_ok_and(|m| m.len() > 0) && ffprobe_has_packets(&exp);
            if !readable {
                continue;
            }
            let data = std::fs::read(f.path()).unwrap();
            if detect_source(&mut SliceSource::new(&data), None, &Limits::default())
                .unwrap()
                .is_none()
            {
                missed.push(format!("{folder}/{name}"));
            }
        }
    }
    assert!(missed.is_empty(), "not detected: {missed:?}");
}

fn ffprobe_has_packets(p: &Path) -> bool {
    use std::io::Read;
    let mut s = Vec::new();
    let Ok(f) = std::fs::File::open(p) else { return false };
    if flate2::read::GzDecoder::new(f).read_to_end(&mut s).is_err() {
        return false;
    }
    let v: serde_json::Value = serde_json::from_slice(&s).unwrap_or_default();
    v.get("packets")
        .and_then(|p| p.as_array())
        .is_some_and(|a| !a.is_empty())
}

#[test]
fn mp3_behind_junk_is_found_and_random_data_is_not() {
    // 300 kB of junk (no byte 0xFF, so no false sync) then 40 frames.
    let mut f = Vec::new();
    let mut x = 0x2545_F491u32;
    for _ in 0..300_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        f.push((x as u8) & 0x7F);
    }
    let junk = f.len();
    for _ in 0..40 {
        let mut fr = vec![0x55u8; 96];
        fr[..4].copy_from_slice(&[0xFF, 0xFB, 0x14, 0x64]);
        f.extend_from_slice(&fr);
    }
    let k = detect_source(&mut SliceSource::new(&f), None, &Limits::default()).unwrap();
    assert_eq!(k, Some(FormatKind::Mp3));
    let mut d = mediaslice::Demuxer::open(SliceSource::new(&f), None).unwrap();
    let mut n = 0;
    let mut first = None;
    while let Some(p) = d.next_packet().unwrap() {
        first.get_or_insert(p.pos);
        n += 1;
    }
    assert!(n >= 40);
    assert!(first.unwrap().unwrap() <= junk as u64);
    // Random bytes, all values, are claimed by nothing.
    for seed in 1..20u32 {
        let mut r = Vec::with_capacity(256 << 10);
        let mut x = seed.wrapping_mul(0x9E37_79B9) | 1;
        for _ in 0..(256 << 10) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            r.push(x as u8);
        }
        let k = detect_source(&mut SliceSource::new(&r), None, &Limits::default()).unwrap();
        assert_eq!(k, None, "random data (seed {seed}) detected as {k:?}");
    }
}
