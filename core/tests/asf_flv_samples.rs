//! ASF and FLV against ffprobe: every sample in `../shared/samples/{asf,flv}`
//! and every generated file in `corpus/files/{asf,flv}` is demuxed through a
//! `SliceSource` and a `ReaderSource`, and each stream's packets (size and
//! CRC32, plus pts/dts) are compared with ffprobe's JSON. Files that are not
//! present are skipped (the shared samples live outside the repository).

use mediaslice::{crc::crc32, Demuxer, ReaderSource, SliceSource};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// A minimal `embedded_io` reader over a byte vector.
struct MemReader {
    data: Vec<u8>,
    pos: u64,
}

impl embedded_io::ErrorType for MemReader {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for MemReader {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let start = (self.pos as usize).min(self.data.len());
        let n = buf.len().min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for MemReader {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(p) => p,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d).max(0) as u64,
            embedded_io::SeekFrom::Current(d) => (self.pos as i64 + d).max(0) as u64,
        };
        Ok(self.pos)
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Pkt {
    size: usize,
    crc: u32,
    pts: Option<i64>,
    dts: Option<i64>,
    key: bool,
}

struct Got {
    tracks: Vec<(String, String)>,
    packets: Vec<Vec<Pkt>>,
    error: Option<String>,
}

fn collect<S: mediaslice::Source>(d: &mut Demuxer<S>) -> Got {
    let tracks: Vec<(String, String)> = d
        .tracks()
        .iter()
        .map(|t| (t.kind.ffmpeg_name().to_string(), t.codec.ffmpeg_name().to_string()))
        .collect();
    let mut packets = vec![Vec::new(); tracks.len()];
    let mut error = None;
    loop {
        match d.next_packet() {
            Ok(Some(p)) => packets[p.track].push(Pkt {
                size: p.data.len(),
                crc: crc32(p.data),
                pts: p.pts,
                dts: p.dts,
                key: p.flags.keyframe,
            }),
            Ok(None) => break,
            Err(e) => {
                error = Some(format!("{e}"));
                break;
            }
        }
    }
    Got { tracks, packets, error }
}

fn run_slice(data: &[u8]) -> Result<Got, String> {
    let mut scratch = vec![0u8; 32 << 20];
    let mut d = Demuxer::open(SliceSource::with_scratch(data, &mut scratch), None).map_err(|e| format!("{e}"))?;
    Ok(collect(&mut d))
}

fn run_reader(data: &[u8]) -> Result<Got, String> {
    let r = MemReader {
        data: data.to_vec(),
        pos: 0,
    };
    let src = ReaderSource::<_, _, 8>::new(r, vec![0u8; 32 << 20]).map_err(|e| format!("{e}"))?;
    let mut d = Demuxer::open(src, None).map_err(|e| format!("{e}"))?;
    Ok(collect(&mut d))
}

struct Expected {
    streams: Vec<(i64, String, String)>,
    packets: Vec<(i64, Pkt)>,
}

fn load_expected(path: &Path) -> Option<Expected> {
    let f = std::fs::File::open(path).ok()?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(f).read_to_string(&mut s).ok()?;
    let v: serde_json::Value = serde_json::from_str(&s).ok()?;
    let streams = v["streams"]
        .as_array()?
        .iter()
        .map(|s| {
            (
                s["index"].as_i64().unwrap_or(-1),
                s["codec_type"].as_str().unwrap_or("").to_string(),
                s["codec_name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let packets = v["packets"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or(&[])
        .iter()
        .map(|p| {
            let crc = p["data_hash"]
                .as_str()
                .and_then(|h| h.strip_prefix("CRC32:"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .unwrap_or(0);
            (
                p["stream_index"].as_i64().unwrap_or(-1),
                Pkt {
                    size: p["size"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0),
                    crc,
                    pts: p["pts"].as_i64(),
                    dts: p["dts"].as_i64(),
                    key: p["flags"].as_str().is_some_and(|f| f.starts_with('K')),
                },
            )
        })
        .collect();
    Some(Expected { streams, packets })
}

/// Compares like `conform.py`: streams matched by type then codec name, in
/// order. Returns (sizes+CRC exact, timestamps and flags exact, notes).
fn compare(exp: &Expected, got: &Got) -> (bool, bool, String) {
    let mut used = vec![false; got.tracks.len()];
    let mut ok = true;
    let mut ts_ok = true;
    let mut notes = String::new();
    for (index, ty, name) in &exp.streams {
        if !matches!(ty.as_str(), "audio" | "video" | "subtitle") {
            continue;
        }
        let cand = (0..got.tracks.len())
            .find(|&i| !used[i] && got.tracks[i].0 == *ty && got.tracks[i].1 == *name)
            .or_else(|| (0..got.tracks.len()).find(|&i| !used[i] && got.tracks[i].0 == *ty));
        let want: Vec<&Pkt> = exp.packets.iter().filter(|(s, _)| s == index).map(|(_, p)| p).collect();
        let Some(i) = cand else {
            if ty == "audio" || ty == "video" {
                ok = false;
                notes += &format!(" {ty}:{name} missing;");
            }
            continue;
        };
        used[i] = true;
        if want.is_empty() {
            continue;
        }
        let have = &got.packets[i];
        let same = want.len() == have.len() && want.iter().zip(have).all(|(a, b)| a.size == b.size && a.crc == b.crc);
        if !same {
            ok = false;
            notes += &format!(
                " {ty}:{name} differs (exp {} pkts/{} B, got {} pkts/{} B);",
                want.len(),
                want.iter().map(|p| p.size).sum::<usize>(),
                have.len(),
                have.iter().map(|p| p.size).sum::<usize>()
            );
            if let Some((k, (a, b))) = want
                .iter()
                .zip(have)
                .enumerate()
                .find(|(_, (a, b))| a.size != b.size || a.crc != b.crc)
            {
                notes += &format!(" first diff #{k}: exp {a:?} got {b:?};");
            }
        } else {
            for (k, (a, b)) in want.iter().zip(have).enumerate() {
                if a.pts != b.pts || a.dts != b.dts || a.key != b.key {
                    ts_ok = false;
                    notes += &format!(" {ty} #{k} ts/flags exp {a:?} got {b:?};");
                    break;
                }
            }
        }
    }
    (ok, ts_ok, notes)
}

fn files(family: &str) -> Vec<(PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for (dir, exp) in [
        (
            root.join("../shared/samples").join(family),
            root.join("../shared/samples/expected").join(family),
        ),
        (
            root.join("corpus/files").join(family),
            root.join("corpus/expected").join(family),
        ),
    ] {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        let mut names: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        names.sort();
        for p in names {
            let e = exp.join(format!("{}.json.gz", p.file_name().unwrap().to_string_lossy()));
            if e.exists() {
                out.push((p, e));
            }
        }
    }
    out
}

/// Files whose packets are known to differ from ffprobe, with the reason
/// written down in docs/formats/<family>.md.
const EXCEPTIONS: &[&str] = &[];

fn check_family(family: &str) {
    let mut scored = 0;
    let mut exact = 0;
    let mut failures = Vec::new();
    for (file, exp) in files(family) {
        let Some(expected) = load_expected(&exp) else { continue };
        if expected.packets.is_empty() {
            continue;
        }
        scored += 1;
        let data = std::fs::read(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let slice = run_slice(&data);
        let reader = run_reader(&data);
        let (slice, reader) = match (slice, reader) {
            (Ok(s), Ok(r)) => (s, r),
            (s, r) => {
                failures.push(format!("{name}: open failed: {:?} / {:?}", s.err(), r.err()));
                continue;
            }
        };
        assert_eq!(slice.packets, reader.packets, "{name}: slice and reader packets differ");
        let (ok, ts_ok, notes) = compare(&expected, &slice);
        println!(
            "{family} {name}: {} {}{}{}",
            if ok { "exact" } else { "DIFF" },
            if ts_ok { "" } else { "ts-diff" },
            notes,
            slice
                .error
                .as_deref()
                .map(|e| format!(" [ended with: {e}]"))
                .unwrap_or_default()
        );
        if ok {
            exact += 1;
        } else if !EXCEPTIONS.contains(&name.as_str()) {
            failures.push(format!("{name}:{notes}"));
        }
    }
    println!("{family}: {exact}/{scored} packet-exact");
    assert!(failures.is_empty(), "{family} mismatches:\n{}", failures.join("\n"));
}

#[test]
fn asf_matches_ffprobe() {
    check_family("asf");
}

#[test]
fn flv_matches_ffprobe() {
    check_family("flv");
}

/// Malformed inputs from other projects' trackers end quickly, without panic,
/// in both input modes.
#[test]
fn malformed_inputs_terminate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/samples/fuzz");
    let Ok(rd) = std::fs::read_dir(&dir) else { return };
    for e in rd.filter_map(|e| e.ok()) {
        let data = std::fs::read(e.path()).unwrap();
        for kind in [mediaslice::FormatKind::Asf, mediaslice::FormatKind::Flv] {
            let start = std::time::Instant::now();
            let mut scratch = vec![0u8; 1 << 20];
            if let Ok(mut d) = Demuxer::open_as(
                SliceSource::with_scratch(&data, &mut scratch),
                kind,
                mediaslice::Limits::default(),
            ) {
                let _ = collect(&mut d);
            }
            let r = MemReader {
                data: data.clone(),
                pos: 0,
            };
            let src = ReaderSource::<_, _, 8>::new(r, vec![0u8; 1 << 20]).unwrap();
            if let Ok(mut d) = Demuxer::open_as(src, kind, mediaslice::Limits::default()) {
                let _ = collect(&mut d);
            }
            assert!(start.elapsed().as_secs() < 5, "{:?} took too long", e.path());
        }
    }
}
