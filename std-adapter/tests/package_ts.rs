//! `mediaslice package IN OUTDIR --hls --ts`: HLS with MPEG-TS segments.
//!
//! On corpus files (H.264 + AAC from TS and MP4, HEVC + AAC, HEVC + E-AC-3,
//! ADTS and MP3 alone), cut every 400 ms (their keyframes are 480 ms
//! apart, so every keyframe starts a segment):
//!
//! * the segments, concatenated, are byte for byte what `remux IN OUT.ts`
//!   writes (whose packets `core/tests/ts_mux.rs` checks against the input
//!   after each conversion), and our demuxer reads from them as many
//!   packets per track as from the input;
//! * each segment is whole 188-byte packets starting with PAT then PMT
//!   (after an SDT when one was due: always in the first segment),
//!   opens alone with our demuxer, its first video packet (its first
//!   packet with no video) is a keyframe, and its first PES (but the first
//!   segment's, which starts as the input does) is that keyframe's, with
//!   the random_access_indicator;
//! * continuity counters run on across segment boundaries (checked over
//!   the concatenation, per PID; a packet without payload keeps it);
//! * each `#EXTINF` is the 90 kHz step between the first timing-track
//!   decode times of its segment and the next (read back from the
//!   segments), their sum the timing track's span in the input, none over
//!   `#EXT-X-TARGETDURATION`;
//! * the playlists: version 3, no `#EXT-X-MAP`, `CODECS` and `RESOLUTION`;
//! * `ffmpeg -v warning -i master.m3u8 -c copy -f null -` prints nothing
//!   (skipped, said on stderr, without ffmpeg);
//! * usage errors (`--ts --dash`, also with `--live`) exit 64 and write
//!   nothing; a codec TS does not carry is refused as `remux OUT.ts`
//!   refuses it, with no output folder left.
//!
//! Live (`package_ts_live`, `package - OUT --hls --ts`): a growing MPEG-TS
//! file and growing Matroska streams (video and audio, audio alone), and
//! an MPEG-TS on the binary's standard input with `--window 2`:
//!
//! * a playlist lists a segment, with no `#EXT-X-ENDLIST`, before the
//!   input is complete;
//! * the final playlist (version 3, no `#EXT-X-MAP`, `EVENT` or a window's
//!   `#EXT-X-MEDIA-SEQUENCE`, `#EXT-X-ENDLIST`) lists the finished file's
//!   segments with the same `#EXTINF`, and each is byte for byte the
//!   finished file's; with a window the old files are deleted;
//! * the segments joined carry the input's packets per track and
//!   continuity counters that run on; ffmpeg reads `master.m3u8` with no
//!   warning.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_common;

use live_common::{fast, ffmpeg_reads_cleanly, listed, mkv_stream, package_growing, package_stdin};
use mediaslice::types::rescale_q;
use mediaslice::{Demuxer, Rational, SliceSource, TrackKind};
use mediaslice_std::live::LiveInput;
use mediaslice_std::package::{package_ts, package_ts_live};
use mediaslice_std::remux::{remux_file, RemuxOptions};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("package_ts-{name}"));
    let _ = std::fs::remove_dir_all(&p);
    p
}

/// Packets per track, the first packet's keyframe flag per track, and
/// per track (first decode time, end of the last packet) in seconds (a
/// packet of unknown duration lasting the step since the previous one).
struct Read {
    counts: Vec<usize>,
    kinds: Vec<TrackKind>,
    first_key: Vec<Option<bool>>,
    span: Vec<Option<(f64, f64)>>,
    /// The first packet's decode time per track, in 90 kHz (TS inputs).
    first_90k: Vec<Option<i64>>,
}

fn read(bytes: &[u8], ext: &str) -> Read {
    // Scratch to join PES packets split over TS packets.
    let mut scratch = vec![0u8; bytes.len().max(1 << 16)];
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), Some(ext)).unwrap();
    let n = d.tracks().len();
    let kinds = d.tracks().iter().map(|t| t.kind).collect();
    let tbs: Vec<Rational> = d.tracks().iter().map(|t| t.time_base).collect();
    let mut r = Read {
        counts: vec![0; n],
        kinds,
        first_key: vec![None; n],
        span: vec![None; n],
        first_90k: vec![None; n],
    };
    // Per track, the previous packet's time and duration.
    let mut prev: Vec<Option<(i64, i64)>> = vec![None; n];
    while let Some(p) = d.next_packet().unwrap() {
        let i = p.track;
        r.counts[i] += 1;
        r.first_key[i].get_or_insert(p.flags.keyframe);
        if let Some(t) = p.dts.or(p.pts) {
            let tb = tbs[i];
            let s = t as f64 * tb.num as f64 / tb.den as f64;
            // A packet of unknown duration lasts the step since the
            // previous one, else the previous step.
            let d = match p.duration {
                Some(d) if d > 0 => d as i64,
                _ => prev[i]
                    .filter(|&(q, _)| t > q)
                    .map_or(prev[i].map_or(0, |x| x.1), |(q, _)| t - q),
            };
            prev[i] = Some((t, d));
            let e = s + d as f64 * tb.num as f64 / tb.den as f64;
            let span = r.span[i].get_or_insert((s, e));
            span.0 = span.0.min(s);
            span.1 = span.1.max(e);
            r.first_90k[i].get_or_insert(rescale_q(t, tb, Rational::new(1, 90_000)));
        }
    }
    r
}

/// The timing track: the first video track, else the first.
fn timing(r: &Read) -> usize {
    r.kinds.iter().position(|k| *k == TrackKind::Video).unwrap_or(0)
}

/// Checks continuity counters per PID over `ts` (ISO/IEC 13818-1
/// §2.4.3.3): +1 on each packet with payload, unchanged without.
fn check_continuity(label: &str, ts: &[u8]) -> usize {
    let mut cc: HashMap<u16, u8> = HashMap::new();
    for (k, p) in ts.chunks(188).enumerate() {
        assert_eq!(p[0], 0x47, "{label}: sync byte of packet {k}");
        let pid = (u16::from(p[1] & 0x1F) << 8) | u16::from(p[2]);
        let payload = p[3] & 0x10 != 0;
        let c = p[3] & 0xF;
        if let Some(prev) = cc.insert(pid, c) {
            let want = if payload { (prev + 1) & 0xF } else { prev };
            assert_eq!(c, want, "{label}: continuity on PID {pid:#x} at packet {k}");
        }
    }
    cc.len()
}

/// The PID of the first TS packet that starts a PES (payload_unit_start
/// on a PID other than the SDT's, PAT's and PMT's), and its
/// random_access flag.
fn first_pes(ts: &[u8]) -> (u16, bool) {
    for p in ts.chunks(188) {
        let pid = (u16::from(p[1] & 0x1F) << 8) | u16::from(p[2]);
        if p[1] & 0x40 != 0 && !matches!(pid, 0 | 0x11 | 0x1000) {
            let random_access = p[3] & 0x20 != 0 && p[4] > 0 && p[5] & 0x40 != 0;
            return (pid, random_access);
        }
    }
    panic!("no PES start");
}

/// The `#EXTINF` durations and the target duration of a media playlist.
fn extinf(media: &str) -> (Vec<(f64, String)>, f64) {
    let lines: Vec<&str> = media.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(d) = l.strip_prefix("#EXTINF:") {
            out.push((d.trim_end_matches(',').parse().unwrap(), lines[i + 1].to_owned()));
        }
    }
    let target = media
        .lines()
        .find_map(|l| l.strip_prefix("#EXT-X-TARGETDURATION:"))
        .unwrap()
        .parse()
        .unwrap();
    (out, target)
}

#[test]
fn corpus_files_package_as_ts_segments() {
    let ffmpeg = Command::new("ffmpeg")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ffmpeg {
        eprintln!("package_ts: ffmpeg is not installed: the ffmpeg read of master.m3u8 is skipped");
    }
    let files = [
        ("mpegts/h264_aac.ts", "avc1.64000b,mp4a.40.2"),
        ("mp4/h264_aac.mp4", "avc1.64000b,mp4a.40.2"),
        ("mp4/hevc_aac.mp4", "hvc1.1.6.L30.90,mp4a.40.2"),
        ("mpegts/hevc_eac3.ts", "hvc1.1.6.L30.90,ec-3"),
        ("adts/aac_lc.aac", "mp4a.40.2"),
        ("mp3/cbr_bare.mp3", "mp4a.40.34"),
    ];
    for (rel, codecs) in files {
        let input = corpus(rel);
        let ext = input.extension().unwrap().to_str().unwrap().to_owned();
        let dir = scratch(&rel.replace('/', "_"));
        let report = package_ts(&input, &dir, 400, mediaslice_std::InputRead::default()).unwrap();
        assert_eq!(report.codecs, codecs, "{rel}");
        let n = report.segments.len();
        assert!(n >= 2, "{rel}: {n} segments");

        // The concatenation is the remux's TS.
        let mut all = Vec::new();
        let mut segs = Vec::new();
        for s in &report.segments.to_vec().unwrap() {
            let b = std::fs::read(dir.join(&s.name)).unwrap();
            assert_eq!(b.len() as u64, s.bytes, "{rel} {}", s.name);
            all.extend_from_slice(&b);
            segs.push(b);
        }
        let remuxed = dir.with_extension("remux.ts");
        remux_file(&input, &remuxed, &RemuxOptions::default()).unwrap();
        assert!(
            all == std::fs::read(&remuxed).unwrap(),
            "{rel}: segments differ from remux OUT.ts"
        );
        let pids = check_continuity(rel, &all);
        let back = read(&all, "ts");
        let src = read(&std::fs::read(&input).unwrap(), &ext);
        assert_eq!(back.counts, src.counts, "{rel}: packets per track");
        assert_eq!(pids, 3 + src.counts.len(), "{rel}: SDT, PAT, PMT and one PID a track");

        // Each segment alone.
        let t = timing(&back);
        let video = back.kinds[t] == TrackKind::Video;
        let mut starts = Vec::new();
        for (k, (s, b)) in report.segments.to_vec().unwrap().iter().zip(&segs).enumerate() {
            let label = format!("{rel} {}", s.name);
            assert_eq!(b.len() % 188, 0, "{label}");
            let pid = |k: usize| (u16::from(b[k * 188 + 1] & 0x1F) << 8) | u16::from(b[k * 188 + 2]);
            // The SDT when one was due at the cut (always in the first).
            let sdt = usize::from(pid(0) == 0x11);
            assert!(k > 0 || sdt == 1, "{label}: the SDT first");
            assert_eq!((pid(sdt), pid(sdt + 1)), (0, 0x1000), "{label}: PAT, PMT first");
            let r = read(b, "ts");
            assert_eq!(r.first_key[t], Some(true), "{label}: first timing packet a keyframe");
            let (first_pid, random_access) = first_pes(b);
            // The first segment starts with the input's first packet, which
            // may be audio; the later ones with the keyframe they are cut at.
            if video && k > 0 {
                assert_eq!(first_pid, 0x100 + t as u16, "{label}: first PES on the video PID");
            }
            assert!(random_access, "{label}: random_access_indicator");
            starts.push(r.first_90k[t].unwrap());
        }

        // EXTINF: the steps between the segments' first times; the sum the
        // input's span of the timing track.
        let media = std::fs::read_to_string(dir.join("media.m3u8")).unwrap();
        assert!(media.starts_with("#EXTM3U\n#EXT-X-VERSION:3\n"), "{rel}: {media}");
        assert!(!media.contains("#EXT-X-MAP"), "{rel}");
        assert!(media.contains("#EXT-X-INDEPENDENT-SEGMENTS"), "{rel}");
        assert!(media.ends_with("#EXT-X-ENDLIST\n"), "{rel}");
        let (inf, target) = extinf(&media);
        let listed = report.segments.to_vec().unwrap();
        let names: Vec<&str> = listed.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(inf.iter().map(|x| x.1.as_str()).collect::<Vec<_>>(), names, "{rel}");
        for (k, (d, name)) in inf.iter().enumerate() {
            assert!(d.round() <= target, "{rel} {name}: {d} over {target}");
            if let Some(next) = starts.get(k + 1) {
                let step = (next - starts[k]) as f64 / 90_000.0;
                assert!((d - step).abs() < 1e-6, "{rel} {name}: EXTINF {d}, step {step}");
            }
        }
        let sum: f64 = inf.iter().map(|x| x.0).sum();
        let (a, b) = src.span[timing(&src)].unwrap();
        assert!(
            (sum - (b - a)).abs() < 1e-4 * n as f64,
            "{rel}: EXTINF sum {sum}, span {}",
            b - a
        );

        let master = std::fs::read_to_string(dir.join("master.m3u8")).unwrap();
        assert!(master.starts_with("#EXTM3U\n#EXT-X-VERSION:3\n"), "{rel}: {master}");
        assert!(master.contains(&format!("CODECS=\"{codecs}\"")), "{rel}: {master}");
        assert_eq!(master.contains("RESOLUTION=160x120"), video, "{rel}: {master}");
        if ffmpeg {
            let o = Command::new("ffmpeg")
                .args(["-v", "warning", "-nostdin", "-i"])
                .arg(dir.join("master.m3u8"))
                .args(["-c", "copy", "-f", "null", "-"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{rel}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.trim().is_empty(), "{rel}: ffmpeg says {err}");
        }
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".part") || n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{rel}: {left:?}");
    }
}

fn cli(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .arg("package")
        .args(args)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn usage_errors_and_refused_codecs_write_nothing() {
    let input = corpus("mpegts/h264_aac.ts");
    for extra in [
        &["--dash"][..],
        &["--hls", "--dash"],
        &["--hls", "--live", "--dash"],
        &["--hls", "--fmp4"],
    ] {
        let dir = scratch(&format!("usage{}", extra.join("")));
        let mut args = vec![input.as_os_str(), dir.as_os_str(), "--ts".as_ref()];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        let (code, err) = cli(&args);
        assert_eq!(code, Some(64), "{extra:?}: {err}");
        assert!(!dir.exists(), "{extra:?}: {} written", dir.display());
    }
    // A codec TS does not carry: the remux's refusal, no folder.
    let vp9 = corpus("matroska/vp9_opus.webm");
    let dir = scratch("vp9");
    let (code, err) = cli(&[vp9.as_os_str(), dir.as_os_str(), "--hls".as_ref(), "--ts".as_ref()]);
    assert_eq!(code, Some(1), "{err}");
    let out = scratch("vp9.ts");
    let remux = remux_file(&vp9, &out, &RemuxOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains(&remux), "package: {err}\nremux: {remux}");
    assert!(!dir.exists());
    // And the CLI writes what the library does.
    let dir = scratch("cli");
    let (code, err) = cli(&[
        input.as_os_str(),
        dir.as_os_str(),
        "--hls".as_ref(),
        "--ts".as_ref(),
        "--segment".as_ref(),
        "400ms".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let lib = package_ts(&input, &scratch("lib"), 400, mediaslice_std::InputRead::default()).unwrap();
    assert!(err.contains(&format!("{} segments", lib.segments.len())), "{err}");
    for s in &lib.segments.to_vec().unwrap() {
        assert_eq!(
            std::fs::metadata(dir.join(&s.name)).unwrap().len(),
            s.bytes,
            "{}",
            s.name
        );
    }
    assert!(dir.join("master.m3u8").is_file());
}

/// The live output in `out` against the finished input `input` packaged
/// at once with the same `--segment` (see the module); `window` as given
/// to the live run.
fn assert_live_ts(out: &Path, input: &Path, segment_ms: u32, window: Option<usize>, label: &str) {
    let ext = input.extension().unwrap().to_str().unwrap().to_owned();
    let whole = scratch(&format!("{label}-whole"));
    let vod = package_ts(input, &whole, segment_ms, mediaslice_std::InputRead::default()).unwrap();
    let n = vod.segments.len();
    assert!(n >= 3, "{label}: {n} segments");
    let media = std::fs::read_to_string(out.join("media.m3u8")).unwrap();
    assert!(media.starts_with("#EXTM3U\n#EXT-X-VERSION:3\n"), "{label}: {media}");
    assert!(!media.contains("#EXT-X-MAP"), "{label}");
    assert!(media.ends_with("#EXT-X-ENDLIST\n"), "{label}: {media}");
    let vod_media = std::fs::read_to_string(whole.join("media.m3u8")).unwrap();
    let (all, _) = extinf(&vod_media);
    let first = window.map_or(0, |w| n.saturating_sub(w));
    assert_eq!(
        extinf(&media).0,
        all[first..],
        "{label}: the finished file's segments and #EXTINF"
    );
    assert!(
        media.contains(&format!("#EXT-X-MEDIA-SEQUENCE:{first}\n")),
        "{label}: {media}"
    );
    assert_eq!(
        media.contains("#EXT-X-PLAYLIST-TYPE:EVENT\n"),
        window.is_none(),
        "{label}"
    );
    for name in listed(&media) {
        assert!(
            std::fs::read(out.join(&name)).unwrap() == std::fs::read(whole.join(&name)).unwrap(),
            "{label}: {name} differs"
        );
    }
    // Files on disk: a window deletes a segment a window after it left.
    let gone = first.saturating_sub(window.unwrap_or(0));
    for (k, s) in vod.segments.to_vec().unwrap().iter().enumerate() {
        assert_eq!(out.join(&s.name).exists(), k >= gone, "{label}: {}", s.name);
    }
    let master = std::fs::read_to_string(out.join("master.m3u8")).unwrap();
    assert!(master.starts_with("#EXTM3U\n#EXT-X-VERSION:3\n"), "{label}: {master}");
    assert!(
        master.contains(&format!("CODECS=\"{}\"", vod.codecs)),
        "{label}: {master}"
    );
    if window.is_none() {
        // Joined: the input's packets, counters that run on.
        let mut ts = Vec::new();
        for name in listed(&media) {
            ts.extend(std::fs::read(out.join(name)).unwrap());
        }
        check_continuity(label, &ts);
        let src = read(&std::fs::read(input).unwrap(), &ext);
        assert_eq!(read(&ts, "ts").counts, src.counts, "{label}: packets per track");
    }
    let left: Vec<_> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part") || n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{label}: {left:?}");
    ffmpeg_reads_cleanly(&out.join("master.m3u8"));
    let _ = std::fs::remove_dir_all(&whole);
}

#[test]
fn live_ts_segments_from_growing_files() {
    // (input bytes, its extension, bytes there at the start, append size)
    let inputs = [
        (
            std::fs::read(corpus("mpegts/h264_aac.ts")).unwrap(),
            "ts",
            16 << 10,
            4096,
        ),
        (mkv_stream("mp4/h264_aac.mp4"), "mkv", 8 << 10, 2048),
        (mkv_stream("adts/aac_lc.aac"), "mka", 4 << 10, 1024),
    ];
    for (data, ext, first, chunk) in inputs {
        let label = format!("growing.{ext}");
        let out = package_growing(&data, &label, first, chunk, |live, out| {
            package_ts_live(live, out, 400, None)
        });
        let file = scratch(&format!("input.{ext}"));
        std::fs::write(&file, &data).unwrap();
        assert_live_ts(&out, &file, 400, None, &label);
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_file(&file);
    }
}

#[test]
fn live_ts_on_standard_input_with_a_window() {
    let input = corpus("mpegts/h264_aac.ts");
    let out = scratch("stdin-window");
    let data = std::fs::read(&input).unwrap();
    let err = package_stdin(&data, &out, 4096, &["--ts", "--window", "2"]);
    let vod = package_ts(
        &input,
        &scratch("stdin-window-count"),
        200,
        mediaslice_std::InputRead::default(),
    )
    .unwrap();
    assert!(err.contains(&format!(" {} segments", vod.segments.len())), "{err}");
    assert_live_ts(&out, &input, 200, Some(2), "stdin-window");
    // The library gives the same: the last two segments in its report.
    let lib = scratch("stdin-window-lib");
    let live = LiveInput::stream(Box::new(std::fs::File::open(&input).unwrap()), fast(16 << 10));
    let report = package_ts_live(&live, &lib, 200, Some(2)).unwrap();
    assert_eq!(report.media_sequence as usize, vod.segments.len() - 2);
    let names: Vec<_> = report
        .segments
        .to_vec()
        .unwrap()
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(listed(&std::fs::read_to_string(lib.join("media.m3u8")).unwrap()), names);
    for d in [&out, &lib] {
        let _ = std::fs::remove_dir_all(d);
    }
}
