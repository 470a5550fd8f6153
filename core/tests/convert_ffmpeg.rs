//! The bitstream conversions of `codec::convert` against ffmpeg's own
//! `-c copy` remux, byte for byte, over every Annex B and ADTS file of the
//! corpus:
//!
//! * `ffmpeg -i F.h264|F.hevc -c copy F.mp4`: our avcC/hvcC built from the
//!   first access unit's parameter sets equals the record in that MP4 (read
//!   back with our own demuxer), and each access unit converted to a
//!   length-prefixed sample equals the MP4's sample;
//! * `ffmpeg -i F.mp4 -c copy -f h264|hevc`: the MP4's samples converted
//!   back to Annex B with the record's parameter sets (as
//!   `h264_mp4toannexb`/`hevc_mp4toannexb`) equal ffmpeg's stream;
//! * `ffmpeg -i F.aac -c copy F.m4a`: the AudioSpecificConfig built from the
//!   first ADTS header equals the esds's, and each raw frame the sample;
//! * `av_rescale_q` from libavutil (through Python's ctypes) on a grid of
//!   values and bases equals `types::rescale_q`.
//!
//! A missing ffmpeg, Python or corpus file is a printed note and a skip.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::corpus_dir;
use mediaslice::codec::convert::adts::{adts_to_raw, audio_specific_config};
use mediaslice::codec::convert::avcc::write_avcc_from_annexb;
use mediaslice::codec::convert::avcc::{write_avcc, AvcConfig};
use mediaslice::codec::convert::hvcc::write_hvcc_from_annexb;
use mediaslice::codec::convert::hvcc::{write_hvcc, HevcConfig};
use mediaslice::codec::convert::to_annexb::ToAnnexB;
use mediaslice::codec::convert::to_length::{length_prefixed_size, write_length_prefixed, LengthPrefixOptions};
use mediaslice::codec::convert::NalCodec;
use mediaslice::types::{rescale_q, Codec, Rational};
use mediaslice::{Demuxer, SliceSink, SliceSource};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("mediaslice-convert-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs ffmpeg with `args`; false (with a note) when it is not there.
fn ffmpeg(args: &[&str]) -> bool {
    match Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y"])
        .args(args)
        .status()
    {
        Ok(s) if s.success() => true,
        Ok(s) => panic!("ffmpeg {args:?} failed: {s}"),
        Err(e) => {
            println!("note: ffmpeg not runnable ({e}); skipping");
            false
        }
    }
}

/// Every packet of the first track of `bytes`, owned.
fn packets(bytes: &[u8], ext: &str) -> Vec<Vec<u8>> {
    let mut d = Demuxer::open(SliceSource::new(bytes), Some(ext)).unwrap();
    let mut out = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        if p.track == 0 {
            out.push(p.data.to_vec());
        }
    }
    out
}

fn config(bytes: &[u8]) -> Vec<u8> {
    let mut d = Demuxer::open(SliceSource::new(bytes), Some("mp4")).unwrap();
    d.codec_config(0).unwrap().to_vec()
}

fn files(sub: &str, ext: &str) -> Vec<PathBuf> {
    let dir = corpus_dir().join("files").join(sub);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == ext));
    v.sort();
    if v.is_empty() {
        println!("note: no {ext} files in {}; skipping", dir.display());
    }
    v
}

fn annexb_round_trip(path: &Path, codec: NalCodec, raw_format: &str) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let tmp = tmp_dir();
    let mp4 = tmp.join(format!("{name}.mp4"));
    if !ffmpeg(&["-i", path.to_str().unwrap(), "-c", "copy", mp4.to_str().unwrap()]) {
        return;
    }
    let input = std::fs::read(path).unwrap();
    let ext = path.extension().unwrap().to_str().unwrap();
    let aus = packets(&input, ext);
    let mp4_bytes = std::fs::read(&mp4).unwrap();
    let samples = packets(&mp4_bytes, "mp4");
    let record = config(&mp4_bytes);

    // The decoder configuration record, from the first access unit.
    let mut rec = [0u8; 1024];
    let n = match codec {
        NalCodec::H264 => write_avcc_from_annexb(&aus[0], &mut rec),
        NalCodec::H265 => write_hvcc_from_annexb(&aus[0], false, &mut rec),
    }
    .unwrap();
    assert!(rec[..n] == record[..], "{name}: record differs from ffmpeg's");

    // Access units → samples.
    assert_eq!(aus.len(), samples.len(), "{name}: access units vs samples");
    let mut buf = vec![0u8; aus.iter().map(Vec::len).max().unwrap() * 2 + 64];
    for (i, (au, sample)) in aus.iter().zip(&samples).enumerate() {
        let mut sink = SliceSink::new(&mut buf);
        let opts = LengthPrefixOptions::default();
        let written = write_length_prefixed(&mut sink, au, opts).unwrap();
        assert_eq!(sink.written(), &sample[..], "{name}: sample {i} differs from ffmpeg's");
        assert_eq!(length_prefixed_size(au, opts).unwrap(), written);
    }

    // Samples → Annex B, against ffmpeg's mp4toannexb.
    let back = tmp.join(format!("{name}.back.{raw_format}"));
    assert!(ffmpeg(&[
        "-i",
        mp4.to_str().unwrap(),
        "-c",
        "copy",
        "-f",
        raw_format,
        back.to_str().unwrap()
    ]));
    let want = std::fs::read(&back).unwrap();
    let mut conv = ToAnnexB::with_parameter_sets(codec, &record).unwrap();
    let mut out = vec![0u8; want.len() + 4096];
    let mut sink = SliceSink::new(&mut out);
    for s in &samples {
        let size = conv.sample_size(s).unwrap();
        assert_eq!(conv.write_sample(&mut sink, s).unwrap(), size);
    }
    assert_eq!(
        sink.written().len(),
        want.len(),
        "{name}: Annex B length differs from ffmpeg's"
    );
    assert!(sink.written() == &want[..], "{name}: Annex B differs from ffmpeg's");
    println!(
        "{name}: record, {} samples and the Annex B stream equal ffmpeg's",
        samples.len()
    );
    let _ = std::fs::remove_file(&mp4);
    let _ = std::fs::remove_file(&back);
}

#[test]
fn h264_matches_ffmpeg() {
    for f in files("h264", "h264") {
        annexb_round_trip(&f, NalCodec::H264, "h264");
    }
}

#[test]
fn hevc_matches_ffmpeg() {
    for f in files("h265", "hevc") {
        annexb_round_trip(&f, NalCodec::H265, "hevc");
    }
}

#[test]
fn adts_matches_ffmpeg() {
    for path in files("adts", "aac") {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let m4a = tmp_dir().join(format!("{name}.m4a"));
        if !ffmpeg(&["-i", path.to_str().unwrap(), "-c", "copy", m4a.to_str().unwrap()]) {
            return;
        }
        let frames = packets(&std::fs::read(&path).unwrap(), "aac");
        let m4a_bytes = std::fs::read(&m4a).unwrap();
        let samples = packets(&m4a_bytes, "m4a");
        let (first, _) = adts_to_raw(&frames[0]).unwrap();
        let asc = audio_specific_config(&first).unwrap();
        assert_eq!(&asc[..], &config(&m4a_bytes)[..], "{name}: AudioSpecificConfig");
        assert_eq!(frames.len(), samples.len(), "{name}: frames vs samples");
        for (i, (f, s)) in frames.iter().zip(&samples).enumerate() {
            let (_, raw) = adts_to_raw(f).unwrap();
            assert_eq!(raw, &s[..], "{name}: frame {i}");
        }
        println!("{name}: config and {} raw frames equal ffmpeg's", frames.len());
        let _ = std::fs::remove_file(&m4a);
    }
}

/// MP4 files of the corpus with an H.264 or H.265 track (x264/x265 with
/// global headers): their records rebuild from their own parameter sets,
/// and their samples convert to the Annex B stream ffmpeg writes with
/// `-c copy -f h264|hevc`.
#[test]
fn mp4_corpus_to_annexb_matches_ffmpeg() {
    for path in files("mp4", "mp4") {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let mut d = Demuxer::open(SliceSource::new(&bytes), Some("mp4")).unwrap();
        let Some((track, codec, fmt, hvc1)) = d.tracks().iter().enumerate().find_map(|(i, t)| match t.codec {
            Codec::H264 => Some((i, NalCodec::H264, "h264", false)),
            Codec::Hevc => Some((i, NalCodec::H265, "hevc", t.codec_tag == u32::from_be_bytes(*b"hvc1"))),
            _ => None,
        }) else {
            continue;
        };
        if name.contains("fragmented") {
            // The same stream as h264_aac.mp4 in fragments; one is enough.
            continue;
        }
        let record = d.codec_config(track).unwrap().to_vec();
        let mut samples = Vec::new();
        while let Some(p) = d.next_packet().unwrap() {
            if p.track == track {
                samples.push(p.data.to_vec());
            }
        }
        let mut rebuilt = vec![0u8; record.len() + 64];
        let n = match codec {
            NalCodec::H264 => {
                let c = AvcConfig::parse(&record).unwrap();
                write_avcc(c.sps().chain(c.pps()), &mut rebuilt)
            }
            NalCodec::H265 => write_hvcc(HevcConfig::parse(&record).unwrap().nal_units(), hvc1, &mut rebuilt),
        }
        .unwrap();
        assert!(
            rebuilt[..n] == record[..],
            "{name}: record rebuilt from its parameter sets differs"
        );
        let out = tmp_dir().join(format!("{name}.{fmt}"));
        let map = format!("0:{track}");
        if !ffmpeg(&[
            "-i",
            path.to_str().unwrap(),
            "-map",
            &map,
            "-c",
            "copy",
            "-f",
            fmt,
            out.to_str().unwrap(),
        ]) {
            return;
        }
        let want = std::fs::read(&out).unwrap();
        let mut conv = ToAnnexB::with_parameter_sets(codec, &record).unwrap();
        let mut buf = vec![0u8; want.len() + 4096];
        let mut sink = SliceSink::new(&mut buf);
        for s in &samples {
            conv.write_sample(&mut sink, s).unwrap();
        }
        assert!(sink.written() == &want[..], "{name}: Annex B differs from ffmpeg's");
        println!(
            "{name}: record and the Annex B stream of {} samples equal ffmpeg's",
            samples.len()
        );
        let _ = std::fs::remove_file(&out);
    }
}

const RESCALE_SCRIPT: &str = r#"
import ctypes, sys
u = ctypes.CDLL(sys.argv[1])
class R(ctypes.Structure): _fields_ = [("num", ctypes.c_int), ("den", ctypes.c_int)]
u.av_rescale_q.restype = ctypes.c_int64
u.av_rescale_q.argtypes = [ctypes.c_int64, R, R]
for line in sys.stdin:
    v, a, b, c, d = map(int, line.split())
    print(u.av_rescale_q(v, R(a, b), R(c, d)))
"#;

#[test]
fn rescale_q_matches_libavutil() {
    let m = i64::MAX;
    let values = [
        0,
        1,
        -1,
        2,
        -2,
        3,
        -3,
        45,
        -45,
        47,
        -47,
        90,
        -90,
        135,
        -135,
        1001,
        -1001,
        (1 << 33) - 1,
        -(1 << 33),
        m,
        -m,
        i64::MIN,
        m / 90,
        -(m / 90),
        m / 1000,
        123_456_789_012_345,
        -123_456_789_012_345,
    ];
    let bases = [
        (1, 90_000),
        (1, 1000),
        (1, 48_000),
        (1, 44_100),
        (1001, 30_000),
        (1, 1),
        (0, 1),
        (1, 0),
        (i32::MAX as u32, 1),
        (1, i32::MAX as u32),
        (3, 7),
    ];
    let mut input = String::new();
    let mut ours = Vec::new();
    for &v in &values {
        for &(a, b) in &bases {
            for &(c, d) in &bases {
                input += &format!("{v} {a} {b} {c} {d}\n");
                ours.push(rescale_q(v, Rational::new(a, b), Rational::new(c, d)));
            }
        }
    }
    let Some(lib) = ["libavutil.so.59", "libavutil.so.58", "libavutil.so.57", "libavutil.so"]
        .iter()
        .find(|l| {
            Command::new("python3")
                .args(["-c", &format!("import ctypes; ctypes.CDLL('{l}')")])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    else {
        println!("note: python3 with libavutil not found; skipping");
        return;
    };
    let mut child = Command::new("python3")
        .args(["-c", RESCALE_SCRIPT, lib])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let theirs: Vec<i64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(theirs.len(), ours.len());
    let lines: Vec<&str> = input.lines().collect();
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "rescale_q({}) differs from av_rescale_q", lines[i]);
    }
    println!("rescale_q: {} cases equal libavutil's av_rescale_q ({lib})", ours.len());
}
