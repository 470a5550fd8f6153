//! Fuzzing regressions and synthetic worst cases (docs/fuzzing.md).
//!
//! * Every file under `corpus/regressions/<family>/` (inputs that once made a
//!   fuzz target crash, hang or disagree, minimized) is replayed through a
//!   `SliceSource` and through `ReaderSource`s with awkward readers: no
//!   panic, a bounded time, packets and tags bounded by the input's size, and
//!   the same result from a seekable reader as from the slice. A reader that
//!   refuses backward seeks may fail, but only with an I/O error, never by
//!   quietly giving less.
//! * Large inputs built in code (deeply nested boxes, a box claiming 2^64
//!   bytes, an `stsz` claiming 2^32 samples, a `trun` of 2^32 samples, a WAV
//!   `data` chunk of 0xFFFFFFFF bytes, RF64 with a 2^64 `ds64` size) must end
//!   quickly with an error or a bounded number of packets. (The library has
//!   no allocator to size anything by: it is `no_std` without `alloc`; the
//!   fuzz harness also counts allocations during every demuxer call, and
//!   std-adapter/tests/zero_alloc.rs does for the CLI's pull loop.)
//!
//! `corpus/regressions/PENDING` lists files whose core fix is not applied yet
//! (`family/file<TAB>patch<TAB>what`): their failures are printed, not
//! counted; a listed file that passes fails the test, so the list is emptied
//! as fixes land.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::build::*;

use mediaslice::{Demuxer, Error, ErrorKind, FormatKind, Limits, ReaderSource, SliceSource, Source};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Most wall-clock time one input may take in all modes (debug build: the
/// release build is ~20 times faster).
const TIME_BOUND: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------
// A reader with the fuzz targets' knobs.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seeking {
    Full,
    ForwardOnly,
}

struct Reader<'a> {
    data: &'a [u8],
    pos: u64,
    chunk: usize,
    seeking: Seeking,
    /// Every read from this one on (counting from 1) fails.
    fail_from: Option<u64>,
    reads: u64,
}

impl embedded_io::ErrorType for Reader<'_> {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Read for Reader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        self.reads += 1;
        if self.fail_from.is_some_and(|n| self.reads >= n) {
            return Err(embedded_io::ErrorKind::Other);
        }
        let start = (self.pos as usize).min(self.data.len());
        let n = buf.len().min(self.chunk).min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for Reader<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        let target = match pos {
            embedded_io::SeekFrom::Start(n) => Some(n),
            embedded_io::SeekFrom::End(d) => (self.data.len() as u64).checked_add_signed(d),
            embedded_io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        }
        .ok_or(embedded_io::ErrorKind::InvalidInput)?;
        if self.seeking == Seeking::ForwardOnly && target < self.pos {
            return Err(embedded_io::ErrorKind::Unsupported);
        }
        self.pos = target;
        Ok(target)
    }
}

// ---------------------------------------------------------------------------
// One run: open, tracks, codec configs, tags, packets, seeks. Everything is
// summarised into numbers so the reading itself allocates nothing.

#[derive(Debug, Default, Clone, PartialEq)]
struct Run {
    open: Option<ErrorKind>,
    tracks: usize,
    configs: Vec<(usize, u32, Option<ErrorKind>)>,
    tags: usize,
    tag_end: Option<ErrorKind>,
    packets: usize,
    bytes: u64,
    crc: u32,
    end: Option<ErrorKind>,
    after_seeks: usize,
    io_error: bool,
}

fn note(run: &mut Run, e: &Error) -> ErrorKind {
    if matches!(e.kind(), ErrorKind::Io(_)) {
        run.io_error = true;
    }
    e.kind()
}

fn run<S: Source>(len: usize, open: impl FnOnce() -> mediaslice::Result<Demuxer<S>>) -> Run {
    let mut r = Run::default();
    let bound = len * 2 + 64;
    let mut d = match open() {
        Ok(d) => d,
        Err(e) => {
            r.open = Some(note(&mut r, &e));
            return r;
        }
    };
    r.tracks = d.tracks().len();
    let mut configs = [(0usize, 0u32, None); 16];
    for (i, slot) in configs.iter_mut().enumerate().take(r.tracks) {
        match d.codec_config(i) {
            Ok(c) => *slot = (c.len(), mediaslice::crc::crc32(c), None),
            Err(e) => *slot = (0, 0, Some(note(&mut r, &e))),
        }
    }
    loop {
        match d.next_tag() {
            Ok(Some(_)) => r.tags += 1,
            Ok(None) => break,
            Err(e) => {
                r.tag_end = Some(note(&mut r, &e));
                break;
            }
        }
        assert!(r.tags <= bound, "more than {bound} tags from {len} bytes");
    }
    rewound_tags_repeat(&mut d, &mut r, bound);
    let declared_max = d.max_packet_size();
    let mut crc = mediaslice::crc::Crc32::new();
    loop {
        match d.next_packet() {
            Ok(Some(p)) => {
                if let Some(m) = declared_max {
                    assert!(
                        p.data.len() <= m,
                        "packet of {} bytes over max_packet_size() {m}",
                        p.data.len()
                    );
                }
                r.packets += 1;
                r.bytes += p.data.len() as u64;
                crc.update(p.data);
            }
            Ok(None) => break,
            Err(e) => {
                r.end = Some(note(&mut r, &e));
                break;
            }
        }
        assert!(r.packets <= bound, "more than {bound} packets from {len} bytes");
    }
    r.crc = crc.finish();
    let tracks: [Option<u64>; 4] = core::array::from_fn(|i| d.tracks().get(i).map(|t| t.duration.unwrap_or(0)));
    for (t, dur) in tracks.iter().enumerate() {
        let Some(dur) = *dur else { break };
        for ts in [0i64, -1, i64::MAX, i64::MIN, (dur / 2) as i64, dur as i64] {
            match d.seek(t, ts) {
                Ok(()) => {
                    for _ in 0..16 {
                        match d.next_packet() {
                            Ok(Some(_)) => r.after_seeks += 1,
                            Ok(None) => break,
                            Err(e) => {
                                note(&mut r, &e);
                                break;
                            }
                        }
                    }
                }
                Err(e) => {
                    note(&mut r, &e);
                }
            }
        }
    }
    r.configs = configs[..r.tracks.min(16)].to_vec();
    r
}

/// The tag walk again after `rewind_tags`: the same tags and end, unless one
/// of the walks met an I/O error (a reader that cannot go back, or fails).
fn rewound_tags_repeat<S: Source>(d: &mut Demuxer<S>, r: &mut Run, bound: usize) {
    d.rewind_tags();
    let (mut tags, mut end) = (0, None);
    loop {
        match d.next_tag() {
            Ok(Some(_)) => tags += 1,
            Ok(None) => break,
            Err(e) => {
                end = Some(note(r, &e));
                break;
            }
        }
        assert!(tags <= bound, "more than {bound} tags after rewind_tags");
    }
    if !is_io(end) && !is_io(r.tag_end) {
        assert_eq!(
            (tags, end),
            (r.tags, r.tag_end),
            "the tag walk differs after rewind_tags"
        );
    }
}

fn kind_for(family: &str) -> Option<FormatKind> {
    match family {
        "mp4" => Some(FormatKind::Mp4),
        "wav" => Some(FormatKind::Wav),
        "asf" => Some(FormatKind::Asf),
        "flv" => Some(FormatKind::Flv),
        "matroska" => Some(FormatKind::Matroska),
        "mpegts" => Some(FormatKind::MpegTs),
        "mpegps" => Some(FormatKind::MpegPs),
        "avi" => Some(FormatKind::Avi),
        "aiff" => Some(FormatKind::Aiff),
        "caf" => Some(FormatKind::Caf),
        "au" => Some(FormatKind::Au),
        "tta" => Some(FormatKind::Tta),
        "dsf" => Some(FormatKind::Dsf),
        "dff" => Some(FormatKind::Dff),
        "iff" => Some(FormatKind::Iff),
        "wv" => Some(FormatKind::WavPack),
        "ape" => Some(FormatKind::Ape),
        "mpc" => Some(FormatKind::Musepack7),
        "mxf" => Some(FormatKind::Mxf),
        "ogg" => Some(FormatKind::Ogg),
        "flac" => Some(FormatKind::Flac),
        "mp3" => Some(FormatKind::Mp3),
        "adts" => Some(FormatKind::Aac),
        "ac3" => Some(FormatKind::Ac3),
        "amr" => Some(FormatKind::Amr),
        "h264" => Some(FormatKind::H264),
        "h265" => Some(FormatKind::Hevc),
        "ivf" => Some(FormatKind::Ivf),
        "av1obu" => Some(FormatKind::Obu),
        "dv" => Some(FormatKind::Dv),
        "mpegvideo" => Some(FormatKind::MpegVideo),
        "m4v" => Some(FormatKind::M4v),
        _ => None,
    }
}

/// The slice has as much join scratch as the readers (MPEG-TS PES and
/// frames that span PES packets are joined in it): `common::scratch_for`,
/// the input's size plus 64 KiB, which also leaves a reader room for the
/// MPEG-TS/PS carry slots (8 KiB per split audio track) before its packets.
fn open_slice(bytes: &[u8], kind: Option<FormatKind>) -> Run {
    let mut scratch = common::scratch_for(bytes.len());
    let src = SliceSource::with_scratch(bytes, &mut scratch);
    run(bytes.len(), || match kind {
        Some(k) => Demuxer::open_as(src, k, Limits::default()),
        None => Demuxer::open(src, None),
    })
}

fn open_reader<const BLOCKS: usize>(bytes: &[u8], kind: Option<FormatKind>, chunk: usize, seeking: Seeking) -> Run {
    open_failing::<BLOCKS>(bytes, kind, chunk, seeking, None)
}

fn open_failing<const BLOCKS: usize>(
    bytes: &[u8],
    kind: Option<FormatKind>,
    chunk: usize,
    seeking: Seeking,
    fail_from: Option<u64>,
) -> Run {
    let scratch = common::scratch_for(bytes.len());
    let reader = Reader {
        data: bytes,
        pos: 0,
        chunk,
        seeking,
        fail_from,
        reads: 0,
    };
    run(bytes.len(), move || {
        let src = ReaderSource::<_, _, BLOCKS>::with_blocks_and_len(reader, scratch, bytes.len() as u64);
        match kind {
            Some(k) => Demuxer::open_as(src, k, Limits::default()),
            None => Demuxer::open_with(src, None, Limits::default()),
        }
    })
}

fn is_io(k: Option<ErrorKind>) -> bool {
    matches!(k, Some(ErrorKind::Io(_)))
}

/// Each phase of a run over a reader that refuses backward seeks, or whose
/// reads start failing, either fails with an I/O error or gives what the
/// slice gives (the library must not mistake a failing source for damage): an open that succeeds has the same tracks,
/// a tag walk or packet pass that does not end in an I/O error has the same
/// tags or packets.
fn check_forward_only(slice: &Run, fwd: &Run) -> Result<(), String> {
    if is_io(fwd.open) {
        return Ok(());
    }
    if fwd.open != slice.open || fwd.tracks != slice.tracks {
        return Err("opens differently without an I/O error".into());
    }
    if !is_io(fwd.tag_end) && (fwd.tags, fwd.tag_end) != (slice.tags, slice.tag_end) {
        return Err("gives other tags without an I/O error".into());
    }
    if !is_io(fwd.end)
        && (fwd.packets, fwd.bytes, fwd.crc, fwd.end) != (slice.packets, slice.bytes, slice.crc, slice.end)
    {
        return Err("gives other packets without an I/O error".into());
    }
    Ok(())
}

/// All modes for one input; `Err` describes a failed expectation.
fn replay(bytes: &[u8], kind: Option<FormatKind>) -> Result<String, String> {
    let slice = open_slice(bytes, kind);
    let cmp = |r: &Run| r.clone();
    for (name, r) in [
        ("7-byte reader", open_reader::<8>(bytes, kind, 7, Seeking::Full)),
        (
            "1-block 513-byte reader",
            open_reader::<1>(bytes, kind, 513, Seeking::Full),
        ),
    ] {
        if cmp(&r) != cmp(&slice) {
            return Err(format!(
                "{name} differs from the slice:\n  slice:  {slice:?}\n  reader: {r:?}"
            ));
        }
    }
    // A pipe that can skip but not rewind: it may fail, with an I/O error;
    // without one, it must give what the slice gives.
    for (name, fwd) in [
        (
            "forward-only 1-byte reader",
            open_reader::<1>(bytes, kind, 1, Seeking::ForwardOnly),
        ),
        (
            "forward-only 31-byte 2-block reader",
            open_reader::<2>(bytes, kind, 31, Seeking::ForwardOnly),
        ),
        (
            "forward-only 4096-byte reader",
            open_reader::<8>(bytes, kind, 4096, Seeking::ForwardOnly),
        ),
    ] {
        check_forward_only(&slice, &fwd)
            .map_err(|e| format!("{name}: {e}:\n  slice:  {slice:?}\n  reader: {fwd:?}"))?;
    }
    Ok(format!(
        "{} tracks, {} packets, {} tags, end {:?}",
        slice.tracks,
        slice.packets,
        slice.tags,
        slice.end.or(slice.open)
    ))
}

/// Runs `f` on a thread with [`TIME_BOUND`]; `Err` for a panic, a hang or a
/// failed expectation.
fn bounded(label: String, f: impl FnOnce() -> Result<String, String> + Send + 'static) -> Result<String, String> {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(TIME_BOUND) {
        Ok(r) => {
            let _ = handle.join();
            r.map(|s| format!("{:>6} ms {label}: {s}", start.elapsed().as_millis()))
                .map_err(|e| format!("{label}: {e}"))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let msg = match handle.join() {
                Err(e) => e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default(),
                Ok(()) => String::new(),
            };
            Err(format!("{label}: PANIC: {msg}"))
        }
        // The thread is left running; the test fails and the process ends.
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("{label}: HANG (> {TIME_BOUND:?})")),
    }
}

fn regressions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/regressions")
}

fn pending() -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(regressions_dir().join("PENDING")) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.to_owned(), f.next().unwrap_or("").to_owned()))
        })
        .collect()
}

#[test]
fn regression_corpus_replays_without_panic_hang_or_disagreement() {
    let root = regressions_dir();
    let mut files = Vec::new();
    for fam in std::fs::read_dir(&root)
        .map(|d| d.flatten().collect::<Vec<_>>())
        .unwrap_or_default()
    {
        if !fam.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(fam.path()).unwrap().flatten() {
            if f.path().is_file() {
                files.push((fam.file_name().to_string_lossy().into_owned(), f.path()));
            }
        }
    }
    files.sort();
    let pending = pending();
    let mut failures = Vec::new();
    for (fam, path) in &files {
        let label = format!("{fam}/{}", path.file_name().unwrap().to_string_lossy());
        let bytes = std::fs::read(path).unwrap();
        let kind = kind_for(fam);
        let b = bytes.clone();
        // Forced to the family's format, and through detection.
        let r = bounded(label.clone(), move || {
            let forced = replay(&b, kind)?;
            let detected = replay(&b, None)?;
            Ok(format!("{forced} (detected: {detected})"))
        });
        let listed = pending.iter().find(|(p, _)| *p == label);
        match (r, listed) {
            (Ok(s), None) => println!("{s}"),
            (Ok(_), Some((_, patch))) => failures.push(format!(
                "{label}: listed in corpus/regressions/PENDING ({patch}) but passes now: remove the line"
            )),
            (Err(e), Some((_, patch))) => println!("PENDING ({patch}) {e}"),
            (Err(e), None) => failures.push(e),
        }
    }
    for (p, _) in &pending {
        if !files
            .iter()
            .any(|(fam, f)| format!("{fam}/{}", f.file_name().unwrap().to_string_lossy()) == *p)
        {
            failures.push(format!("corpus/regressions/PENDING lists {p}, which does not exist"));
        }
    }
    println!("{} regression files, {} failures", files.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// Synthetic worst cases.

fn worst_cases() -> Vec<(&'static str, Option<FormatKind>, Vec<u8>)> {
    let mut cases = Vec::new();

    // Deeply nested boxes: 20 000 levels of containers the parser enters
    // (moov/trak/mdia/minf/stbl/edts/udta/meta), each claiming the rest.
    let kinds: [&[u8; 4]; 8] = [b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"udta", b"meta"];
    let depth = 20_000usize;
    let mut nested = ftyp();
    let base = nested.len();
    for i in 0..depth {
        let size = ((depth - i) * 8) as u32;
        nested.extend_from_slice(&size.to_be_bytes());
        nested.extend_from_slice(kinds[i % kinds.len()]);
    }
    let _ = base;
    cases.push(("nested boxes, 20000 levels", Some(FormatKind::Mp4), nested));
    // The same with every level a `trak` inside one moov.
    let mut traks = ftyp();
    traks.extend_from_slice(&((depth * 8 + 8) as u32).to_be_bytes());
    traks.extend_from_slice(b"moov");
    for i in 0..depth {
        traks.extend_from_slice(&(((depth - i) * 8) as u32).to_be_bytes());
        traks.extend_from_slice(if i % 2 == 0 { b"trak" } else { b"mdia" });
    }
    cases.push(("nested trak/mdia, 20000 levels", Some(FormatKind::Mp4), traks));

    // Boxes claiming 2^64 - 1 bytes (64-bit largesize).
    for kind in [b"moov", b"mdat", b"free", b"moof"] {
        let mut v = ftyp();
        v.extend_from_slice(&1u32.to_be_bytes());
        v.extend_from_slice(kind);
        v.extend_from_slice(&u64::MAX.to_be_bytes());
        v.extend_from_slice(&[0u8; 256]);
        cases.push(("box claiming 2^64 bytes", Some(FormatKind::Mp4), v));
    }
    // A trak inside a real moov claiming 2^64 bytes.
    let mut v = ftyp();
    let inner = [
        1u32.to_be_bytes().to_vec(),
        b"trak".to_vec(),
        u64::MAX.to_be_bytes().to_vec(),
        vec![0; 64],
    ]
    .concat();
    v.extend_from_slice(&bx(b"moov", &inner));
    cases.push(("trak claiming 2^64 bytes", Some(FormatKind::Mp4), v));

    // stsz claiming 2^32 - 1 samples of one byte, one chunk of as many
    // samples, stts of as many: only the mdat's bytes may become packets.
    let tables = vec![
        full_box(b"stts", 0, &be32s(&[1, u32::MAX, 1])),
        full_box(b"stsc", 0, &be32s(&[1, 1, u32::MAX, 1])),
        full_box(b"stsz", 0, &be32s(&[1, u32::MAX])),
    ];
    for (what, handler, entry) in [
        ("stsz of 2^32 one-byte video samples", b"vide", avc1()),
        ("stsz of 2^32 one-byte audio samples", b"soun", mp4a()),
        ("stsz of 2^32 PCM frames (chunk reading)", b"soun", sowt()),
    ] {
        let head = [ftyp(), movie(handler, entry.clone(), &tables, None)].concat();
        let off = head.len() as u32 + 8;
        let mut t = tables.clone();
        t.push(full_box(b"stco", 0, &be32s(&[1, off])));
        let file = [ftyp(), movie(handler, entry, &t, None), mdat(4096)].concat();
        cases.push((what, Some(FormatKind::Mp4), file));
    }
    // stsz with per-sample sizes claiming 2^32 entries (table clamped to the
    // box) and stss/ctts/stts claiming as many.
    let tables = vec![
        full_box(b"stts", 0, &be32s(&[u32::MAX, 1, 1])),
        full_box(b"ctts", 0, &be32s(&[u32::MAX, 1, 0])),
        full_box(b"stss", 0, &be32s(&[u32::MAX, 1])),
        full_box(b"stsc", 0, &be32s(&[u32::MAX, 1, 1, 1])),
        full_box(b"stsz", 0, &[be32s(&[0, u32::MAX]), be32s(&[1; 64])].concat()),
        full_box(b"stco", 0, &be32s(&[u32::MAX, 8])),
    ];
    let file = [ftyp(), movie(b"vide", avc1(), &tables, None), mdat(4096)].concat();
    cases.push(("tables claiming 2^32 entries", Some(FormatKind::Mp4), file));

    // A fragment whose trun has no per-sample fields and 2^32 - 1 samples.
    let trex = full_box(b"trex", 0, &be32s(&[1, 1, 1, 0, 0]));
    let mvex = bx(b"mvex", &trex);
    let tfhd = full_box(b"tfhd", 0, &be32s(&[1]));
    let trun = full_box(b"trun", 0, &be32s(&[u32::MAX]));
    let moof = bx(
        b"moof",
        &[full_box(b"mfhd", 0, &be32s(&[1])), bx(b"traf", &[tfhd, trun].concat())].concat(),
    );
    let empty: Vec<Vec<u8>> = vec![
        full_box(b"stts", 0, &be32s(&[0])),
        full_box(b"stsc", 0, &be32s(&[0])),
        full_box(b"stsz", 0, &be32s(&[0, 0])),
        full_box(b"stco", 0, &be32s(&[0])),
    ];
    let file = [ftyp(), movie(b"vide", avc1(), &empty, Some(mvex)), moof, mdat(4096)].concat();
    cases.push(("trun of 2^32 samples without fields", Some(FormatKind::Mp4), file));

    // WAV whose data chunk claims 0xFFFFFFFF bytes (and RIFF as much).
    cases.push((
        "wav data size 0xFFFFFFFF",
        Some(FormatKind::Wav),
        wav(b"RIFF", u32::MAX, u32::MAX, &[], 10_000),
    ));
    // RF64 whose ds64 claims 2^64 - 1 bytes of data.
    let mut ds64 = b"ds64".to_vec();
    ds64.extend_from_slice(&28u32.to_le_bytes());
    ds64.extend_from_slice(&u64::MAX.to_le_bytes());
    ds64.extend_from_slice(&u64::MAX.to_le_bytes());
    ds64.extend_from_slice(&u64::MAX.to_le_bytes());
    ds64.extend_from_slice(&0u32.to_le_bytes());
    cases.push((
        "rf64 ds64 data size 2^64",
        Some(FormatKind::Rf64),
        wav(b"RF64", u32::MAX, u32::MAX, &ds64, 10_000),
    ));
    // A WAV of 100 000 empty chunks before fmt (the chunk walk is bounded).
    let mut chunks = Vec::new();
    for _ in 0..100_000 {
        chunks.extend_from_slice(b"JUNK\0\0\0\0");
    }
    cases.push((
        "wav of 100000 empty chunks",
        Some(FormatKind::Wav),
        wav(b"RIFF", u32::MAX, u32::MAX, &chunks, 64),
    ));
    cases
}

/// Synthetic cases whose core fix is not applied yet (case, patch): their
/// failures are printed, not counted; a listed case that passes fails the
/// test, so the list is emptied as fixes land.
const PENDING_SYNTHETIC: &[(&str, &str)] = &[];

#[test]
fn synthetic_worst_cases_end_quickly() {
    let mut failures = Vec::new();
    for (what, kind, bytes) in worst_cases() {
        let listed = PENDING_SYNTHETIC.iter().find(|(w, _)| *w == what);
        let len = bytes.len();
        let r = bounded(format!("{what} ({len} bytes)"), move || {
            let slice = open_slice(&bytes, kind);
            let reader = open_reader::<8>(&bytes, kind, 4096, Seeking::Full);
            if reader != slice {
                return Err(format!("reader differs: {reader:?} vs {slice:?}"));
            }
            Ok(format!(
                "{} tracks, {} packets ({} bytes), {} after seeks, end {:?}",
                slice.tracks,
                slice.packets,
                slice.bytes,
                slice.after_seeks,
                slice.end.or(slice.open)
            ))
        });
        match (r, listed) {
            (Ok(s), None) => println!("{s}"),
            (Ok(_), Some((_, patch))) => failures.push(format!(
                "{what}: listed in PENDING_SYNTHETIC ({patch}) but passes now: remove it"
            )),
            (Err(e), Some((_, patch))) => println!("PENDING ({patch}) {e}"),
            (Err(e), None) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// I/O failures: a reader whose reads fail from the k-th on, for every k up to
// the reads a whole run takes. Each phase must fail with the I/O error or
// give what the slice gives; never a track, tag or packet quietly missing.

fn io_failure_sweep(bytes: &[u8], kind: Option<FormatKind>) -> Result<String, String> {
    let slice = open_slice(bytes, kind);
    let mut ks = 0;
    for k in 1..=400u64 {
        let r = open_failing::<1>(bytes, kind, 64, Seeking::Full, Some(k));
        check_forward_only(&slice, &r)
            .map_err(|e| format!("reads failing from the {k}th: {e}:\n  slice:  {slice:?}\n  reader: {r:?}"))?;
        ks += 1;
        if !r.io_error {
            break; // the whole run took fewer reads
        }
    }
    Ok(format!("{ks} failure points"))
}

/// A movie with two tracks (video and audio), `udta`/`meta`/`ilst` tags and a
/// `trex`, about 1.5 KB, so that failures land in every part of the header.
fn two_track_movie() -> Vec<u8> {
    let tables = |n: u32| {
        vec![
            full_box(b"stts", 0, &be32s(&[1, n, 10])),
            full_box(b"stsc", 0, &be32s(&[1, 1, n, 1])),
            full_box(b"stsz", 0, &be32s(&[16, n])),
        ]
    };
    let head_len = {
        let t = [tables(8), vec![full_box(b"stco", 0, &be32s(&[1, 0]))]].concat();
        let moov = moov_of(
            &[trak(1, b"vide", avc1(), &t), trak(2, b"soun", mp4a(), &t)],
            None,
            true,
        );
        ftyp().len() + moov.len() + 8
    } as u32;
    let v = [tables(8), vec![full_box(b"stco", 0, &be32s(&[1, head_len]))]].concat();
    let a = [tables(8), vec![full_box(b"stco", 0, &be32s(&[1, head_len + 128]))]].concat();
    let moov = moov_of(
        &[trak(1, b"vide", avc1(), &v), trak(2, b"soun", mp4a(), &a)],
        None,
        true,
    );
    [ftyp(), moov, mdat(256)].concat()
}

#[test]
fn io_failures_are_reported_not_swallowed() {
    let mut inputs: Vec<(String, Option<FormatKind>, Vec<u8>)> =
        vec![("two-track movie".into(), Some(FormatKind::Mp4), two_track_movie())];
    inputs.push((
        "wav with LIST/INFO".into(),
        Some(FormatKind::Wav),
        wav(b"RIFF", 0, 4000, b"LIST\x12\0\0\0INFOINAM\x06\0\0\0title\0", 4000),
    ));
    let mut failures = Vec::new();
    for (what, kind, bytes) in inputs {
        let listed = PENDING_SYNTHETIC.iter().find(|(w, _)| *w == what);
        let r = bounded(what.clone(), move || io_failure_sweep(&bytes, kind));
        match (r, listed) {
            (Ok(s), None) => println!("{s}"),
            (Ok(_), Some((_, patch))) => failures.push(format!(
                "{what}: listed in PENDING_SYNTHETIC ({patch}) but passes now: remove it"
            )),
            (Err(e), Some((_, patch))) => println!("PENDING ({patch}) {e}"),
            (Err(e), None) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
