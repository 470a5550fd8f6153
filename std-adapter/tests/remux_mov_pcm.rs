//! `mediaslice remux IN OUT.mov` with uncompressed audio (WAV, AIFF, AU,
//! CAF, camera MOV with PCM), judged against ffmpeg's own `-c copy` to
//! MOV: ffprobe sees the same packets (stream, pts, size, CRC-32) in both
//! files, and our reader sees in ours what ffprobe sees. Besides the
//! corpus, files ffmpeg generates for the descriptions the corpus lacks:
//! version 1 (24-bit big-endian, 8-bit signed, 64-bit float) and version 2
//! (96 and 192 kHz). MP4 output of the same inputs is refused and leaves
//! nothing behind. PCM from Matroska (millisecond times) to MOV keeps
//! every frame. ffmpeg/ffprobe not installed: skipped with a message.

use crate::common;
use crate::remux_common;

use common::*;
use mediaslice::crc::crc32;
use mediaslice::{Demuxer, SliceSource};
use mediaslice_std::remux::{remux_file, RemuxOptions};
use remux_common::{ffmpeg_copy, ffprobe_packet_list, have, remux_corpus, temp_dir};
use std::path::Path;
use std::process::Command;

/// ffprobe's packets of `path`: `stream|pts|size|crc`.
fn ffprobe_rows(path: &Path) -> (Vec<String>, String) {
    let (packets, err) = ffprobe_packet_list(path);
    let rows = packets
        .iter()
        .map(|p| {
            let pts = p["pts"].as_i64().map_or("N/A".to_owned(), |v| v.to_string());
            let s = |k: &str| p[k].as_str().unwrap_or("").to_owned();
            format!("{}|{pts}|{}|{}", p["stream_index"], s("size"), s("data_hash"))
        })
        .collect();
    (rows, err)
}

/// The `rows` of `path`'s uncompressed audio streams, each stream named by
/// its place among them.
fn pcm_rows(path: &Path, rows: &[String]) -> Vec<String> {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "stream=index,codec_name",
            "-of",
            "csv=p=0",
        ])
        .arg(path)
        .output()
        .unwrap();
    let pcm: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(",pcm_"))
        .filter_map(|l| l.split(',').next().map(str::to_owned))
        .collect();
    rows.iter()
        .filter_map(|r| {
            let (stream, rest) = r.split_once('|')?;
            let k = pcm.iter().position(|s| s == stream)?;
            Some(format!("{k}|{rest}"))
        })
        .collect()
}

/// Our reader's packets of the MOV `bytes`, as [`ffprobe_rows`] prints them.
fn our_rows(bytes: &[u8]) -> mediaslice::Result<Vec<String>> {
    let mut scratch = vec![0u8; 1 << 22];
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), Some("mov"))?;
    let mut rows = Vec::new();
    while let Some(p) = d.next_packet()? {
        let pts = p.pts.map_or("N/A".to_owned(), |v| v.to_string());
        rows.push(format!(
            "{}|{pts}|{}|CRC32:{:08x}",
            p.track,
            p.data.len(),
            crc32(p.data)
        ));
    }
    Ok(rows)
}

fn has_pcm(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap();
    let ext = path.extension().and_then(|e| e.to_str());
    Demuxer::open(SliceSource::new(&bytes), ext)
        .map(|d| d.tracks().iter().any(|t| t.codec.ffmpeg_name().starts_with("pcm_")))
        .unwrap_or(false)
}

/// Ours against ffmpeg's remux of `input` to MOV, and our reader against
/// ffprobe on ours; the failures.
fn compare(label: &str, input: &Path, ours: &Path, dir: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let theirs = dir.join(format!("ffmpeg_{}.mov", label.replace('/', "_")));
    ffmpeg_copy(input, &theirs);
    let (a, err_a) = ffprobe_rows(ours);
    if !err_a.is_empty() {
        failures.push(format!("{label}: ffprobe on ours: {err_a}"));
    }
    // The uncompressed audio streams of both: ffmpeg's MOV may have tracks
    // ours has not (a `tmcd` timecode track from MXF) and other video time
    // scales, which are not what this test is about.
    let (pa, pb) = (pcm_rows(ours, &a), pcm_rows(&theirs, &ffprobe_rows(&theirs).0));
    if pa != pb || pa.is_empty() {
        failures.push(format!(
            "{label}: ffprobe sees {} audio packets in ours, {} in ffmpeg's (first difference at {:?})",
            pa.len(),
            pb.len(),
            pa.iter().zip(&pb).position(|(x, y)| x != y)
        ));
    }
    match our_rows(&std::fs::read(ours).unwrap()) {
        Ok(r) if r == a => {}
        Ok(r) => failures.push(format!(
            "{label}: we read {} packets, ffprobe {} (first difference at {:?})",
            r.len(),
            a.len(),
            r.iter().zip(&a).position(|(x, y)| x != y)
        )),
        Err(e) => failures.push(format!("{label}: we cannot read ours: {e}")),
    }
    failures
}

/// Makes `path`: a sine of `seconds` in `codec` (with a small MPEG-4 video
/// track when `video`), by ffmpeg.
fn make_sine(path: &Path, codec: &str, rate: u32, channels: usize, seconds: f64, video: bool) {
    let mut cmd = Command::new("ffmpeg");
    cmd.args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg(format!("sine=f=440:r={rate}:d={seconds}"));
    if video {
        cmd.args(["-f", "lavfi", "-i"])
            .arg(format!("testsrc=s=64x48:r=25:d={seconds}"))
            .args(["-c:v", "mpeg4"]);
    }
    let st = cmd
        .args(["-ac", &channels.to_string(), "-c:a", codec])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success(), "ffmpeg could not make {}", path.display());
}

#[test]
fn pcm_in_mov_equals_ffmpegs_remux() {
    if !have("ffmpeg") || !have("ffprobe") {
        println!("ffmpeg or ffprobe not installed: skipped");
        return;
    }
    let dir = temp_dir("remux_mov_pcm");
    let mut checked = 0usize;
    let (written, refused, mut failures) = remux_corpus(&dir, "mov", |f, out, _| {
        if !has_pcm(&f.path) {
            return Vec::new();
        }
        checked += 1;
        compare(&f.label(), &f.path, out, &dir)
    });
    println!("{written} corpus files remuxed to MOV ({refused} refused), {checked} with uncompressed audio compared with ffmpeg's");
    // Generated: the descriptions the corpus has no file for.
    let made = [
        ("s24le_96k.wav", "pcm_s24le", 96_000, 2),
        ("f32le_192k.wav", "pcm_f32le", 192_000, 1),
        ("f64le.wav", "pcm_f64le", 44_100, 1),
        ("s24be.aiff", "pcm_s24be", 44_100, 2),
        ("s8.aiff", "pcm_s8", 22_050, 1),
    ];
    for (name, codec, rate, channels) in made {
        let input = dir.join(name);
        make_sine(&input, codec, rate, channels, 0.5, false);
        let out = dir.join(format!("{name}.mov"));
        match remux_file(&input, &out, &RemuxOptions::default()) {
            Ok(_) => failures.extend(compare(name, &input, &out, &dir)),
            Err(e) => failures.push(format!("{name}: not written: {e}")),
        }
        checked += 1;
    }
    // 18 corpus files with uncompressed audio when this was written.
    assert!(checked >= 20, "only {checked} files compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pcm_to_mp4_is_refused_and_leaves_nothing() {
    let dir = temp_dir("remux_mp4_pcm");
    for name in ["files/wav/pcm_s16le.wav", "files/mp4/h264_pcm.mov"] {
        let out = dir.join("x.mp4");
        let e = remux_file(&corpus_dir().join(name), &out, &RemuxOptions::default()).unwrap_err();
        assert!(format!("{e}").contains("MOV output"), "{name}: {e}");
        assert!(!out.exists(), "{name}: a refused remux left its output");
    }
}

/// The payload of the first audio stream of `path` as ffmpeg reads it
/// (`-c copy -f data`: every packet's bytes in order).
fn ffmpeg_audio_bytes(path: &Path) -> Vec<u8> {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-map", "0:a:0", "-c", "copy", "-f", "data", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "ffmpeg cannot read {}", path.display());
    out.stdout
}

/// PCM from Matroska (whose times count milliseconds) to MOV (which counts
/// frames at the sample rate): the track is declared with 1/rate and its
/// times rescaled. Every frame arrives (ffmpeg reads the same audio bytes
/// from ours as from the input), the media duration is the frame count,
/// and our reader sees what ffprobe sees. ffmpeg's own remux of these
/// inputs is not the oracle here: its `mdhd` duration comes from the last
/// packet's millisecond time (143,984 frames for 3 s at 48 kHz) while its
/// `stts` counts 144,000, so ffprobe cuts its last packet to 624 bytes;
/// ours says 144,000 in both (ISO/IEC 14496-12 8.4.2.3: the duration of
/// the media in its time scale).
#[test]
fn pcm_from_matroska_to_mov_keeps_every_frame() {
    if !have("ffmpeg") || !have("ffprobe") {
        println!("ffmpeg or ffprobe not installed: skipped");
        return;
    }
    let dir = temp_dir("remux_mkv_pcm_mov");
    let made = [
        ("s16le_48k.mkv", "pcm_s16le", 48_000, 1, 3.0, true),
        ("s24le_44k.mka", "pcm_s24le", 44_100, 2, 2.0, false),
        ("f32le_96k.mka", "pcm_f32le", 96_000, 2, 1.5, false),
    ];
    let mut failures = Vec::new();
    for (name, codec, rate, channels, seconds, video) in made {
        let input = dir.join(name);
        make_sine(&input, codec, rate, channels, seconds, video);
        let out = dir.join(format!("{name}.mov"));
        if let Err(e) = remux_file(&input, &out, &RemuxOptions::default()) {
            failures.push(format!("{name}: not written: {e}"));
            continue;
        }
        let (rows, err) = ffprobe_rows(&out);
        if !err.is_empty() {
            failures.push(format!("{name}: ffprobe on ours: {err}"));
        }
        match our_rows(&std::fs::read(&out).unwrap()) {
            Ok(r) if r == rows => {}
            Ok(r) => failures.push(format!("{name}: we read {} packets, ffprobe {}", r.len(), rows.len())),
            Err(e) => failures.push(format!("{name}: we cannot read ours: {e}")),
        }
        let (ours, theirs) = (ffmpeg_audio_bytes(&out), ffmpeg_audio_bytes(&input));
        let frame = channels * codec[5..7].parse::<usize>().unwrap() / 8;
        let frames = (f64::from(rate) * seconds) as usize;
        if ours != theirs || ours.len() != frames * frame {
            failures.push(format!(
                "{name}: {} audio bytes in ours, {} in the input, {} expected",
                ours.len(),
                theirs.len(),
                frames * frame
            ));
        }
        let probe = Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "a", "-show_entries"])
            .args(["stream=time_base,duration_ts", "-of", "csv=p=0"])
            .arg(&out)
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&probe.stdout).trim().to_owned();
        let want = format!("1/{rate},{frames}");
        if got != want {
            failures.push(format!(
                "{name}: ffprobe's time base and duration {got}, expected {want}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
