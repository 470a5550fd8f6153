//! `mediaslice package --live`: HLS from an MPEG-TS or Matroska input that is still
//! arriving. A growing file written in chunks by another thread, and a
//! pipe into the binary's standard input, give the same segments as the
//! finished file packaged at once (byte for byte, and the same packets per
//! track through our demuxer); the playlist appears before the input is
//! complete and gets `#EXT-X-ENDLIST` only at the end; `--window` moves
//! `#EXT-X-MEDIA-SEQUENCE` and deletes old segments; a progressive MP4 is
//! refused with a message that says why. A live Matroska/WebM stream (our
//! own `remux IN -`, ffmpeg's `-f matroska -` and `-f webm -`) is packaged
//! the same way, through a pipe and as a growing file.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_common;

use live_common::{
    corpus, fast, ffmpeg_reads_cleanly, listed, mkv_stream, package_growing, package_stdin, scratch, unknown_size,
    SEGMENT,
};
use mediaslice::crc::crc32;
use mediaslice::{Demuxer, SliceSource};
use mediaslice_std::live::LiveInput;
use mediaslice_std::package::{package, package_live};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Per track: (size, CRC, dts) of every packet of `init.mp4` and the
/// listed segments, joined, through our demuxer.
fn packets(dir: &Path) -> Vec<Vec<(usize, u32, i64)>> {
    let mut bytes = std::fs::read(dir.join("init.mp4")).unwrap();
    for name in listed(&std::fs::read_to_string(dir.join("media.m3u8")).unwrap()) {
        bytes.extend(std::fs::read(dir.join(name)).unwrap());
    }
    let mut join = vec![0u8; bytes.len() + 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), Some("mp4")).unwrap();
    let mut out = vec![Vec::new(); d.tracks().len()];
    while let Some(p) = d.next_packet().unwrap() {
        out[p.track].push((p.data.len(), crc32(p.data), p.dts.unwrap_or(0)));
    }
    out
}

/// The finished file packaged at once (the reference).
fn reference(input: &Path, name: &str) -> PathBuf {
    let dir = scratch(name);
    package(input, &dir, 200, true, false, mediaslice_std::InputRead::default()).unwrap();
    dir
}

/// Same segments, byte for byte, and the same packets.
fn assert_same_media(live: &Path, whole: &Path) {
    let a = std::fs::read_to_string(live.join("media.m3u8")).unwrap();
    let b = std::fs::read_to_string(whole.join("media.m3u8")).unwrap();
    assert_eq!(listed(&a), listed(&b));
    for name in listed(&b).iter().chain(std::iter::once(&"init.mp4".to_owned())) {
        assert!(
            std::fs::read(live.join(name)).unwrap() == std::fs::read(whole.join(name)).unwrap(),
            "{name} differs"
        );
    }
    let p = packets(live);
    assert!(p.iter().all(|t| !t.is_empty()));
    assert_eq!(p, packets(whole));
}

/// `package_live` with 200 ms segments, no window, HLS alone.
fn cmaf(
    live: &LiveInput,
    out: &Path,
) -> Result<mediaslice_std::package::PackageReport, mediaslice_std::remux::RemuxError> {
    package_live(live, out, 200, None, false)
}

#[test]
fn a_growing_file_is_packaged_as_it_grows() {
    let src = corpus("mpegts/h264_aac.ts");
    let data = std::fs::read(&src).unwrap();
    // The first 16 KiB are there when the packager starts; the rest comes
    // in 4 KiB appends, 15 ms apart (about 0.3 s).
    let out = package_growing(&data, "growing.ts", 16 << 10, 4096, cmaf);
    let media = std::fs::read_to_string(out.join("media.m3u8")).unwrap();
    assert!(media.contains("#EXT-X-PLAYLIST-TYPE:EVENT\n"), "{media}");
    assert!(media.ends_with("#EXT-X-ENDLIST\n"), "{media}");
    assert!(std::fs::read_dir(&out)
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".part")));
    let whole = reference(&src, "growing-ref");
    assert_same_media(&out, &whole);
    // The master playlist states the same variant.
    let m = std::fs::read_to_string(out.join("master.m3u8")).unwrap();
    assert!(m.contains("CODECS=\"avc1.64000b,mp4a.40.2\""), "{m}");
    for d in [&out, &whole] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn the_playlist_has_no_endlist_while_the_input_grows() {
    // A file that stops growing for less than --idle: the playlist is
    // there, listing segments, with no ENDLIST, until the idle time ends it.
    let data = std::fs::read(corpus("mpegts/h264_aac.ts")).unwrap();
    let input = scratch("paused.ts");
    let out = scratch("paused-out");
    std::fs::write(&input, &data[..data.len() * 3 / 4]).unwrap();
    let checked = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (input, rest, media, checked) = (
            input.clone(),
            data[data.len() * 3 / 4..].to_vec(),
            out.join("media.m3u8"),
            checked.clone(),
        );
        std::thread::spawn(move || {
            for _ in 0..200 {
                if let Ok(m) = std::fs::read_to_string(&media) {
                    if !listed(&m).is_empty() {
                        assert!(!m.contains("#EXT-X-ENDLIST"), "{m}");
                        checked.store(true, Ordering::SeqCst);
                        break;
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let mut f = std::fs::OpenOptions::new().append(true).open(&input).unwrap();
            f.write_all(&rest).unwrap();
        })
    };
    let live = LiveInput::follow(&input, fast(16 << 10)).unwrap();
    package_live(&live, &out, 200, None, false).unwrap();
    watcher.join().unwrap();
    assert!(checked.load(Ordering::SeqCst));
    assert!(std::fs::read_to_string(out.join("media.m3u8"))
        .unwrap()
        .ends_with("#EXT-X-ENDLIST\n"));
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_file(&input);
}

#[test]
fn standard_input_through_a_pipe() {
    let src = corpus("mpegts/h264_aac.ts");
    let data = std::fs::read(&src).unwrap();
    let out = scratch("stdin-out");
    let err = package_stdin(&data, &out, 8192, &[]);
    assert!(err.contains("5 segments"), "{err}");
    let media = std::fs::read_to_string(out.join("media.m3u8")).unwrap();
    assert!(media.ends_with("#EXT-X-ENDLIST\n"));
    let whole = reference(&src, "stdin-ref");
    assert_same_media(&out, &whole);
    for d in [&out, &whole] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_window_moves_the_media_sequence_and_deletes_old_segments() {
    let src = corpus("mpegts/h264_aac.ts");
    let out = scratch("window-out");
    let live = LiveInput::stream(Box::new(std::fs::File::open(&src).unwrap()), fast(16 << 10));
    let report = package_live(&live, &out, 200, Some(2), false).unwrap();
    // Five segments: the last two listed, numbers 3 and 4.
    assert_eq!((report.media_sequence, report.segments.len()), (3, 2));
    let media = std::fs::read_to_string(out.join("media.m3u8")).unwrap();
    assert!(media.contains("#EXT-X-MEDIA-SEQUENCE:3\n"), "{media}");
    assert!(!media.contains("PLAYLIST-TYPE"), "{media}");
    assert_eq!(listed(&media), ["seg_00004.m4s", "seg_00005.m4s"]);
    // Segment 2 left the playlist less than a window ago: still there;
    // segment 1 left it a window before: deleted.
    assert!(!out.join("seg_00001.m4s").exists());
    assert!(out.join("seg_00002.m4s").exists());
    let whole = reference(&src, "window-ref");
    for name in listed(&media) {
        assert!(std::fs::read(out.join(&name)).unwrap() == std::fs::read(whole.join(&name)).unwrap());
    }
    for d in [&out, &whole] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_progressive_mp4_and_a_flac_file_are_refused_live() {
    for (input, why) in [
        ("mp4/h264_aac.mp4", "moov"),
        (
            "flac/s16_stereo.flac",
            "only MPEG-TS, Matroska/WebM and fragmented MP4 are read live",
        ),
    ] {
        let out = scratch("refused-out");
        let done = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
            .args(["package", corpus(input).to_str().unwrap(), out.to_str().unwrap()])
            .args(["--hls", "--live", "--idle", "100ms"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(1), "{input}: {err}");
        assert!(
            err.contains("--live reads MPEG-TS") && err.contains(why),
            "{input}: {err}"
        );
        assert!(!out.exists(), "{input}: nothing written");
    }
}

/// An attribute's value in an XML start tag or element text.
fn attr<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let at = xml.find(&format!(" {name}=\""))? + name.len() + 3;
    xml[at..].split('"').next()
}

/// Per `S` of a timeline: (t, d, r).
fn timeline(set: &str) -> Vec<(Option<u64>, u64, u64)> {
    set.split("<S ")
        .skip(1)
        .map(|s| {
            let s = &s[..s.find("/>").unwrap()];
            let s = format!(" {s}");
            let n = |k| attr(&s, k).map(|v| v.parse::<u64>().unwrap());
            (n("t"), n("d").unwrap(), n("r").unwrap_or(0))
        })
        .collect()
}

/// The `tfdt` and the sum of `trun` sample durations of a one-track
/// fragment as the muxer writes it (default-base-is-moof, durations in
/// the trun).
fn fragment_time(frag: &[u8]) -> (u64, u64) {
    let be = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap());
    let (mut tfdt, mut ticks) = (0, 0);
    let moof_end = be(frag, 0) as usize;
    // mfhd at 8; traf at 8 + mfhd size.
    let traf = 8 + be(frag, 8) as usize;
    let mut at = traf + 8;
    while at < moof_end {
        let (size, kind) = (be(frag, at) as usize, &frag[at + 4..at + 8]);
        let b = &frag[at + 8..at + size];
        if kind == b"tfdt" {
            tfdt = if b[0] == 1 {
                u64::from(be(b, 4)) << 32 | u64::from(be(b, 8))
            } else {
                u64::from(be(b, 4))
            };
        }
        if kind == b"trun" {
            let f = be(b, 0) & 0xFF_FFFF;
            assert!(f & 0x100 != 0, "durations in the trun");
            let entry = [0x100, 0x200, 0x400, 0x800].iter().filter(|&&x| f & x != 0).count() * 4;
            let mut q = 8 + if f & 1 != 0 { 4 } else { 0 } + if f & 4 != 0 { 4 } else { 0 };
            for _ in 0..be(b, 4) {
                ticks += u64::from(be(b, q));
                q += entry;
            }
        }
        at += size;
    }
    (tfdt, ticks)
}

/// Checks an MPD against the files on disk: per Adaptation Set, the
/// timeline's `S` entries are exactly the set's segment files on disk
/// (`startNumber` the first, one `S` repeat per file), the first `S@t` the
/// first file's `tfdt` and each `S@d` its duration. `Err` when a file
/// differs (the packager may be between a segment and the MPD's rewrite).
fn check_mpd(out: &Path, mpd: &str) -> Result<usize, String> {
    let mut sets = 0;
    for set in mpd.split("<AdaptationSet").skip(1) {
        sets += 1;
        let dir = out.join(attr(set, "initialization").unwrap().trim_end_matches("/init.mp4"));
        let first: u64 = attr(set, "startNumber").unwrap().parse().unwrap();
        let mut on_disk: Vec<u64> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let n = e.unwrap().file_name().into_string().unwrap();
                n.strip_prefix("seg_")?.strip_suffix(".m4s")?.parse().ok()
            })
            .collect();
        on_disk.sort_unstable();
        let s = timeline(set);
        let count: u64 = s.iter().map(|x| x.2 + 1).sum();
        let listed: Vec<u64> = (first..first + count).collect();
        if on_disk != listed {
            return Err(format!("on disk {on_disk:?}, listed {listed:?}"));
        }
        let mut durations = s.iter().flat_map(|x| std::iter::repeat_n(x.1, x.2 as usize + 1));
        let mut t = s[0].0.unwrap();
        for n in listed {
            let frag = std::fs::read(dir.join(format!("seg_{n:05}.m4s"))).map_err(|e| e.to_string())?;
            let (tfdt, ticks) = fragment_time(&frag);
            assert_eq!((tfdt, ticks), (t, durations.next().unwrap()), "{n} in {mpd}");
            t += ticks;
        }
    }
    Ok(sets)
}

#[test]
fn live_dash_through_a_pipe_with_a_window() {
    let src = corpus("mpegts/h264_aac.ts");
    let data = std::fs::read(&src).unwrap();
    let out = scratch("dash-out");
    // A pipe, written in 4 KiB chunks 20 ms apart; the packager reads its
    // other end (a 16 KiB start-up snapshot: the binary's 512 KiB would
    // take the whole 79 KB file before the first segment).
    let (reader, mut writer) = std::io::pipe().unwrap();
    let packager = {
        let out = out.clone();
        std::thread::spawn(move || {
            let live = LiveInput::stream(Box::new(reader), fast(16 << 10));
            package_live(&live, &out, 200, Some(2), true)
        })
    };
    // Mid-run: a dynamic MPD that states the live attributes and lists
    // exactly the files on disk. (The first file leaves with the fifth and
    // last segment, so mid-run startNumber is 1; the end checks 2.)
    let mut seen = None;
    for part in data.chunks(4096) {
        writer.write_all(part).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let Ok(a) = std::fs::read_to_string(out.join("manifest.mpd")) else {
            continue;
        };
        if seen.is_some() || !a.contains("type=\"dynamic\"") {
            continue;
        }
        let checked = check_mpd(&out, &a);
        if std::fs::read_to_string(out.join("manifest.mpd")).unwrap() == a && checked == Ok(2) {
            seen = Some(a);
        }
    }
    drop(writer);
    let report = packager.join().unwrap().unwrap();
    assert_eq!(report.media_sequence + report.segments.len() as u64, 5);
    let live = seen.expect("a dynamic MPD mid-run, consistent with the files on disk");
    assert_eq!(attr(&live, "type"), Some("dynamic"), "{live}");
    for a in ["availabilityStartTime", "publishTime"] {
        let v = attr(&live, a).unwrap();
        assert!(v.len() == 24 && v.ends_with('Z') && v.starts_with("20"), "{a}={v}");
    }
    // --segment 200ms: a target of 1 s (whole seconds, as HLS's).
    assert_eq!(attr(&live, "minimumUpdatePeriod"), Some("PT1.000S"));
    assert_eq!(attr(&live, "timeShiftBufferDepth"), Some("PT2.000S"));
    assert_eq!(attr(&live, "suggestedPresentationDelay"), Some("PT3.000S"));
    assert!(!live.contains("mediaPresentationDuration"), "{live}");
    // The end: static, over the files still there (segments 2 to 5, the
    // last two listed in HLS and the two before them kept a window).
    let end = std::fs::read_to_string(out.join("manifest.mpd")).unwrap();
    assert_eq!(attr(&end, "type"), Some("static"), "{end}");
    assert!(!end.contains("availabilityStartTime") && !end.contains("minimumUpdatePeriod"));
    assert_eq!(check_mpd(&out, &end), Ok(2));
    assert_eq!(attr(&end, "startNumber"), Some("2"), "{end}");
    assert!(end.contains("contentType=\"video\"") && end.contains("contentType=\"audio\""));
    let total = attr(&end, "mediaPresentationDuration").unwrap();
    assert!(total.starts_with("PT1."), "{total}");
    assert!(!std::fs::read_dir(out.join("dash/1")).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".part")));
    ffmpeg_reads_cleanly(&out.join("manifest.mpd"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn live_dash_streams_hold_the_tracks_packets() {
    // No window: every segment kept; each stream's init and fragments
    // joined hold that track's packets of the finished file, in order.
    let src = corpus("mpegts/h264_aac.ts");
    let out = scratch("dash-all");
    let live = LiveInput::stream(Box::new(std::fs::File::open(&src).unwrap()), fast(16 << 10));
    package_live(&live, &out, 200, None, true).unwrap();
    let mpd = std::fs::read_to_string(out.join("manifest.mpd")).unwrap();
    assert_eq!(check_mpd(&out, &mpd), Ok(2));
    assert_eq!(attr(&mpd, "startNumber"), Some("1"));
    let whole = reference(&src, "dash-all-ref");
    let reference = packets(&whole);
    for (track, expected) in reference.iter().enumerate() {
        let dir = out.join(format!("dash/{}", track + 1));
        let mut bytes = std::fs::read(dir.join("init.mp4")).unwrap();
        let mut n = 1;
        while let Ok(b) = std::fs::read(dir.join(format!("seg_{n:05}.m4s"))) {
            bytes.extend(b);
            n += 1;
        }
        let mut join = vec![0u8; bytes.len() + 4096];
        let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), Some("mp4")).unwrap();
        assert_eq!(d.tracks().len(), 1);
        let mut got = Vec::new();
        while let Some(p) = d.next_packet().unwrap() {
            got.push((p.data.len(), crc32(p.data), p.dts.unwrap_or(0)));
        }
        assert_eq!(&got, expected, "track {track}");
    }
    ffmpeg_reads_cleanly(&out.join("manifest.mpd"));
    for d in [&out, &whole] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Per track, (size, CRC) of every packet of a Matroska or MP4 input,
/// through our demuxer.
fn input_packets(data: &[u8]) -> Vec<Vec<(usize, u32)>> {
    let mut join = vec![0u8; data.len() + 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(data, &mut join), None).unwrap();
    let mut out = vec![Vec::new(); d.tracks().len()];
    while let Some(p) = d.next_packet().unwrap() {
        out[p.track].push((p.data.len(), crc32(p.data)));
    }
    out
}

/// The live output holds the input's packets (read back from its init
/// segment and listed segments) and the same files as the finished stream
/// packaged at once; the playlist is ended.
fn assert_live_output(out: &Path, data: &[u8], name: &str) {
    let media = std::fs::read_to_string(out.join("media.m3u8")).unwrap();
    assert!(media.ends_with("#EXT-X-ENDLIST\n"), "{name}: {media}");
    let got: Vec<Vec<(usize, u32)>> = packets(out)
        .iter()
        .map(|t| t.iter().map(|&(n, c, _)| (n, c)).collect())
        .collect();
    let want = input_packets(data);
    assert!(want.iter().all(|t| !t.is_empty()), "{name}");
    assert_eq!(got, want, "{name}: the input's packets");
    let ext = if data.get(4..8) == Some(b"ftyp") { "mp4" } else { "mkv" };
    let file = scratch(&format!("{name}.{ext}"));
    std::fs::write(&file, data).unwrap();
    let whole = reference(&file, &format!("{name}-ref"));
    assert_same_media(out, &whole);
    let _ = std::fs::remove_dir_all(&whole);
    let _ = std::fs::remove_file(&file);
}

/// Feeds `data` through a pipe (a socket pair) in 2 KiB pieces about 20 ms
/// apart to `package_live` (an 8 KiB start-up snapshot) and checks that a
/// playlist listing segments, and no ENDLIST, exists before the last piece
/// is written. Returns the output folder.
fn live_through_a_pipe(data: &[u8], name: &str) -> PathBuf {
    let out = scratch(name);
    // A socket pair is a pipe here (std::io::pipe is newer than the MSRV).
    let (reader, mut writer) = std::os::unix::net::UnixStream::pair().unwrap();
    let packager = {
        let out = out.clone();
        std::thread::spawn(move || {
            let live = LiveInput::stream(Box::new(reader), fast(8 << 10));
            package_live(&live, &out, 200, None, false)
        })
    };
    let parts: Vec<&[u8]> = data.chunks(2048).collect();
    let mut early = None;
    for (i, part) in parts.iter().enumerate() {
        // Before the last piece, a loaded machine's packager gets up to
        // 5 s to list a segment.
        let polls = if i + 1 == parts.len() { 1000 } else { 4 };
        for _ in 0..polls {
            if early.is_some() {
                break;
            }
            if let Ok(m) = std::fs::read_to_string(out.join("media.m3u8")) {
                if !listed(&m).is_empty() {
                    assert!(!m.contains("#EXT-X-ENDLIST"), "{name}: {m}");
                    early = Some((i, listed(&m).len()));
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        writer.write_all(part).unwrap();
    }
    drop(writer);
    let report = packager.join().unwrap().unwrap();
    assert!(report.stopped.is_none(), "{name}: {:?}", report.stopped);
    let (pieces, segments) = early.unwrap_or_else(|| panic!("{name}: no playlist before the input was complete"));
    assert!(
        segments < report.segments.len(),
        "{name}: {segments} segments listed with {pieces} of {} pieces written, {} at the end",
        parts.len(),
        report.segments.len()
    );
    out
}

#[test]
fn a_matroska_stream_through_a_pipe() {
    let data = mkv_stream("mp4/h264_aac.mp4");
    let out = live_through_a_pipe(&data, "mkv-pipe");
    assert_live_output(&out, &data, "mkv-pipe");
    let m = std::fs::read_to_string(out.join("master.m3u8")).unwrap();
    assert!(m.contains("CODECS=\"avc1.64000b,mp4a.40.2\""), "{m}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_growing_matroska_file() {
    let data = mkv_stream("mp4/h264_aac.mp4");
    // 8 KiB there at the start (the headers and the first Cluster's
    // start), the rest in 2 KiB appends 15 ms apart.
    let out = package_growing(&data, "growing.mkv", 8 << 10, 2048, cmaf);
    assert_live_output(&out, &data, "growing-mkv");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_matroska_stream_on_the_binarys_standard_input() {
    let data = mkv_stream("mp4/h264_aac.mp4");
    let out = scratch("mkv-stdin-out");
    let err = package_stdin(&data, &out, 4096, &[]);
    assert!(err.contains("73 packets, 3 segments"), "{err}");
    assert_live_output(&out, &data, "mkv-stdin");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ffmpeg_matroska_and_webm_to_a_pipe() {
    // ffmpeg on a pipe: an unknown-size Segment, Clusters of known size.
    for (input, args, name) in [
        ("mp4/h264_aac.mp4", &["-f", "matroska"][..], "ffmpeg-mkv"),
        (
            "matroska/vp9_opus.webm",
            &["-map", "0:a", "-f", "webm"][..],
            "ffmpeg-webm",
        ),
    ] {
        let Ok(run) = Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-i"])
            .arg(corpus(input))
            .args(["-c", "copy"])
            .args(args)
            .arg("-")
            .output()
        else {
            eprintln!("skipped: ffmpeg not found (live Matroska from ffmpeg not tested)");
            return;
        };
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let data = run.stdout;
        assert!(unknown_size(&data, SEGMENT), "{name}: an unknown-size Segment");
        let out = live_through_a_pipe(&data, name);
        assert_live_output(&out, &data, name);
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// The end of the `moov` of an MP4 whose top-level boxes start with `ftyp`
/// and `moov`.
fn moov_end(data: &[u8]) -> usize {
    let size = |at: usize| u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    let ftyp = size(0);
    assert_eq!(&data[ftyp + 4..ftyp + 8], b"moov");
    ftyp + size(ftyp)
}

/// Fragmented MP4 streams of the corpus H.264 + AAC MP4, as a recorder or
/// an encoder writes them to a pipe: our own (`remux IN - --fragmented
/// --fragment-ms 200`, fragments of about a keyframe) and, when ffmpeg is
/// there, ffmpeg's `-movflags frag_keyframe+empty_moov -f mp4 -` (which
/// ends with an `mfra`): (name, bytes).
fn fmp4_streams() -> Vec<(&'static str, Vec<u8>)> {
    let input = corpus("mp4/h264_aac.mp4");
    let ours = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .arg("remux")
        .arg(&input)
        .args(["-", "--fragmented", "--fragment-ms", "200"])
        .output()
        .unwrap();
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    let mut out = vec![("fmp4-ours", ours.stdout)];
    match Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(&input)
        .args(["-c", "copy", "-movflags", "frag_keyframe+empty_moov", "-f", "mp4", "-"])
        .output()
    {
        Ok(run) => {
            assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
            out.push(("fmp4-ffmpeg", run.stdout));
        }
        Err(_) => eprintln!("skipped: ffmpeg not found (its fragmented MP4 on a pipe not tested)"),
    }
    for (name, data) in &out {
        let moofs = data.windows(4).filter(|w| w == b"moof").count();
        assert!(moofs >= 2, "{name}: {moofs} fragments");
    }
    out
}

#[test]
fn a_growing_fragmented_mp4() {
    for (name, data) in fmp4_streams() {
        // The ftyp, the moov and a few bytes of the first fragment are there
        // at the start (the snapshot the demuxer opens on); the rest comes in
        // 2 KiB appends 15 ms apart.
        let first = moov_end(&data) + 40;
        let label = format!("growing-{name}");
        let out = package_growing(&data, &label, first, 2048, cmaf);
        assert_live_output(&out, &data, &label);
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn a_fragmented_mp4_through_a_pipe_and_on_standard_input() {
    for (name, data) in fmp4_streams() {
        let label = format!("pipe-{name}");
        let out = live_through_a_pipe(&data, &label);
        assert_live_output(&out, &data, &label);
        let _ = std::fs::remove_dir_all(&out);
        // The binary, CMAF and MPEG-TS segments.
        let out = scratch(&format!("stdin-{name}"));
        let err = package_stdin(&data, &out, 4096, &[]);
        assert!(err.contains("73 packets, 3 segments"), "{name}: {err}");
        assert_live_output(&out, &data, &format!("stdin-{name}"));
        let _ = std::fs::remove_dir_all(&out);
        let err = package_stdin(&data, &out, 4096, &["--ts"]);
        assert!(err.contains("73 packets, 3 segments"), "{name} --ts: {err}");
        let media = std::fs::read_to_string(out.join("media.m3u8")).unwrap();
        assert!(
            media.ends_with("#EXT-X-ENDLIST\n") && !media.contains("#EXT-X-MAP"),
            "{media}"
        );
        assert_eq!(listed(&media), ["seg_00001.ts", "seg_00002.ts", "seg_00003.ts"]);
        ffmpeg_reads_cleanly(&out.join("master.m3u8"));
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn a_progressive_mp4_with_its_moov_first_is_refused_live() {
    // moov at the start, samples in one mdat: not fragments.
    let input = corpus("mp4/h264_aac_faststart.mp4");
    let data = std::fs::read(&input).unwrap();
    moov_end(&data);
    let out = scratch("faststart-out");
    let live = LiveInput::stream(Box::new(std::fs::File::open(&input).unwrap()), fast(16 << 10));
    let err = package_live(&live, &out, 200, None, false).unwrap_err().to_string();
    assert!(
        err.contains("progressive MP4/MOV") && err.contains("fragmented MP4"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}
