//! Shared pieces of the mediaslice benchmark suite (issue 9): the table of
//! format families and their files, the mediaslice runs (headers only, CRC
//! over every payload), the bare-CRC baseline and the probe.
//!
//! The peers (symphonia, mp4, re_mp4, mpeg2ts-reader, hound,
//! matroska-demuxer, ogg) are dev-dependencies of this package only and are
//! driven from `benches/common/peers.rs`; this library names them in
//! [`Peer`] so that the family table stays one line per format.
//!
//! See `benches/README.md` and `docs/bench/README.md`.

pub mod counting;

use mediaslice::crc::Crc32;
use mediaslice::{Demuxer, SliceSource};
use std::path::{Path, PathBuf};

/// A Rust peer that reads some of the formats. The drivers live in the
/// bench targets (they are dev-dependencies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// symphonia 0.5 format readers (`FormatReader::next_packet`, which
    /// copies each payload into a boxed slice).
    Symphonia,
    /// re_mp4 0.3 (`Mp4::read_bytes`: expands every sample table into a
    /// `Vec<Sample>`; payloads sliced from the input).
    ReMp4,
    /// mp4 0.14 (`Mp4Reader::read_sample`, one copy per sample; no
    /// headers-only path).
    Mp4,
    /// mpeg2ts-reader 0.16 (push parser: PES headers and payload pieces).
    Mpeg2tsReader,
    /// hound 3.5 (WAV header, then the data chunk as one range: hound has no
    /// packets).
    Hound,
    /// matroska-demuxer 0.7 (`next_frame` into a reused `Frame`).
    MatroskaDemuxer,
    /// ogg 0.9 (`PacketReader::read_packet`, one `Vec` per packet).
    Ogg,
}

impl Peer {
    /// The name used in reports and benchmark ids.
    pub const fn name(self) -> &'static str {
        match self {
            Peer::Symphonia => "symphonia",
            Peer::ReMp4 => "re_mp4",
            Peer::Mp4 => "mp4",
            Peer::Mpeg2tsReader => "mpeg2ts-reader",
            Peer::Hound => "hound",
            Peer::MatroskaDemuxer => "matroska-demuxer",
            Peer::Ogg => "ogg",
        }
    }
}

/// One format family of the suite.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// Name in reports (`mp4`, `ts`, ...).
    pub name: &'static str,
    /// The representative corpus file (under `corpus/files/`) for the
    /// in-process throughput benches.
    pub corpus_file: &'static str,
    /// Directories under `corpus/files/` whose files the probe and
    /// allocation tables cover.
    pub corpus_dirs: &'static [&'static str],
    /// Generated large files (under [`big_dir`], made by
    /// `benches/make_files.sh`).
    pub big: &'static [&'static str],
    /// The peers that read this family.
    pub peers: &'static [Peer],
}

const fn fam(
    name: &'static str,
    corpus_file: &'static str,
    corpus_dirs: &'static [&'static str],
    big: &'static [&'static str],
    peers: &'static [Peer],
) -> Family {
    Family {
        name,
        corpus_file,
        corpus_dirs,
        big,
        peers,
    }
}

use Peer::*;

/// The suite: adding a format family is one line here (and, for a large
/// file, its extension in `make_files.sh`'s `CONTAINERS`).
#[rustfmt::skip]
pub const FAMILIES: &[Family] = &[
    fam("mp4", "mp4/h264_aac.mp4", &["mp4"], &["loop130k.mp4", "hd1080.mp4"], &[Symphonia, ReMp4, Mp4]),
    fam("ts", "mpegts/h264_aac.ts", &["mpegts"], &["loop130k.ts", "hd1080.ts"], &[Mpeg2tsReader]),
    fam("ps", "mpegps/mpeg2_ac3.vob", &["mpegps"], &[], &[]),
    fam("avi", "avi/mpeg4_mp3.avi", &["avi"], &["loop130k.avi"], &[]),
    fam("wav", "wav/pcm_s24le.wav", &["wav"], &["long.wav"], &[Symphonia, Hound]),
    fam("aiff", "aiff/pcm_s16be.aiff", &["aiff"], &[], &[Symphonia]),
    fam("caf", "caf/pcm_s16le.caf", &["caf"], &[], &[Symphonia]),
    fam("mkv", "matroska/h264_aac.mkv", &["matroska"], &["loop130k.mkv", "hd1080.mkv"], &[MatroskaDemuxer, Symphonia]),
    fam("asf", "asf/wmv2_wmav2.wmv", &["asf"], &[], &[]),
    fam("flv", "flv/h264_aac.flv", &["flv"], &[], &[]),
    fam("ogg", "ogg/vorbis.ogg", &["ogg"], &[], &[Ogg, Symphonia]),
    fam("flac", "flac/s16_stereo.flac", &["flac"], &[], &[Symphonia]),
    fam("mp3", "mp3/cbr_bare.mp3", &["mp3"], &[], &[Symphonia]),
    fam("adts", "adts/aac_lc.aac", &["adts"], &[], &[Symphonia]),
    fam("es", "h264/baseline.h264", &["h264", "h265", "m4v", "mpegvideo", "ac3", "ivf", "av1obu", "dv"], &[], &[]),
];

/// The repository root (the parent of this package).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// `corpus/files` of the repository.
pub fn corpus_dir() -> PathBuf {
    repo_root().join("corpus").join("files")
}

/// Where `make_files.sh` puts the large files: `$MEDIASLICE_BENCH_FILES`,
/// else `/tmp/mediaslice-bench`.
pub fn big_dir() -> PathBuf {
    std::env::var_os("MEDIASLICE_BENCH_FILES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/mediaslice-bench"))
}

/// Whether `MEDIASLICE_BENCH_QUICK` is set (smoke-test mode: corpus files
/// only, short measurements).
pub fn quick() -> bool {
    std::env::var_os("MEDIASLICE_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
}

/// A file to benchmark: its family, a display name and its path.
#[derive(Debug, Clone)]
pub struct BenchFile {
    /// The family it belongs to.
    pub family: &'static Family,
    /// `corpus/<file>` or `big/<file>`.
    pub label: String,
    /// Where it is.
    pub path: PathBuf,
}

/// The throughput files: each family's corpus file, then (unless quick)
/// every large file that exists. Missing large files are skipped with a
/// note on stderr.
pub fn throughput_files() -> Vec<BenchFile> {
    let mut out = Vec::new();
    for f in FAMILIES {
        out.push(BenchFile {
            family: f,
            label: format!("corpus/{}", f.corpus_file),
            path: corpus_dir().join(f.corpus_file),
        });
    }
    if !quick() {
        for f in FAMILIES {
            for b in f.big {
                let path = big_dir().join(b);
                if path.exists() {
                    out.push(BenchFile {
                        family: f,
                        label: format!("big/{b}"),
                        path,
                    });
                } else {
                    eprintln!("note: {} missing (run benches/make_files.sh)", path.display());
                }
            }
        }
    }
    out
}

/// Every corpus file of every family, sorted.
pub fn corpus_files() -> Vec<BenchFile> {
    let mut out = Vec::new();
    for f in FAMILIES {
        for d in f.corpus_dirs {
            let dir = corpus_dir().join(d);
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push(BenchFile {
                    family: f,
                    label: format!("{d}/{name}"),
                    path,
                });
            }
        }
    }
    out
}

/// Maps a file read-only and leaks the map, so every run (ours and the
/// peers', which want `'static` readers) sees the same bytes for the life of
/// the process. The page cache is warmed by touching every page once.
pub fn load(path: &Path) -> &'static [u8] {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // SAFETY: a read-only private map of a file this process does not
    // change; the bench files are not modified while the benches run.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let data: &'static [u8] = Box::leak(Box::new(map));
    let mut sum = 0u8;
    for chunk in data.chunks(4096) {
        sum = sum.wrapping_add(chunk.first().copied().unwrap_or(0));
    }
    std::hint::black_box(sum);
    data
}

/// The two modes of the throughput benches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Open and every packet's header (track, timestamps, size, flags);
    /// payloads untouched.
    Headers,
    /// Open and every packet, with a CRC-32 over every payload byte.
    Crc,
}

impl Mode {
    /// The name used in benchmark ids.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Headers => "headers",
            Mode::Crc => "crc",
        }
    }
}

/// What one run saw: packets, payload bytes, and the CRC-32 of the payloads
/// in delivery order (0 in headers mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets delivered.
    pub packets: u64,
    /// Payload bytes delivered.
    pub bytes: u64,
    /// CRC-32 of all payloads in delivery order (CRC mode only).
    pub crc: u32,
}

/// Scratch for packets a container splits (PES, ...): allocated once by the
/// caller, outside any timing.
pub const SCRATCH: usize = 4 << 20;

/// What headers mode reads of a packet (track, timestamps, keyframe flag),
/// folded into `acc` so the reads are not optimised away.
fn fold_header(acc: i64, p: &mediaslice::Packet<'_>) -> i64 {
    acc.wrapping_add(p.pts.unwrap_or(0))
        .wrapping_add(p.dts.unwrap_or(0))
        .wrapping_add(p.track as i64)
        .wrapping_add(p.flags.keyframe as i64)
}

/// mediaslice over a slice: open, then every packet. In headers mode the
/// packet's header fields are read (and kept alive with `black_box`), the
/// payload is not touched; in CRC mode every payload byte goes through
/// [`Crc32`].
pub fn mediaslice_run(data: &[u8], scratch: &mut [u8], mode: Mode) -> Counts {
    let mut d = match Demuxer::open(SliceSource::with_scratch(data, scratch), None) {
        Ok(d) => d,
        Err(_) => return Counts::default(),
    };
    let mut c = Counts::default();
    let mut crc = Crc32::new();
    let mut acc = 0i64;
    while let Ok(Some(p)) = d.next_packet() {
        c.packets += 1;
        c.bytes += p.data.len() as u64;
        match mode {
            Mode::Headers => acc = fold_header(acc, &p),
            Mode::Crc => crc.update(p.data),
        }
    }
    std::hint::black_box(acc);
    if mode == Mode::Crc {
        c.crc = crc.finish();
    }
    c
}

/// [`mediaslice_run`] through `Demuxer::next_packet_pieces`: payloads that
/// the container splits (MPEG-TS PES across TS packets) are never joined.
/// In headers mode their pieces are not walked at all; in CRC mode every
/// piece goes through [`Crc32`] where it lies.
pub fn mediaslice_run_pieces(data: &[u8], scratch: &mut [u8], mode: Mode) -> Counts {
    let mut d = match Demuxer::open(SliceSource::with_scratch(data, scratch), None) {
        Ok(d) => d,
        Err(_) => return Counts::default(),
    };
    let mut c = Counts::default();
    let mut crc = Crc32::new();
    let mut acc = 0i64;
    while let Ok(Some(mut p)) = d.next_packet_pieces() {
        c.packets += 1;
        c.bytes += p.len() as u64;
        match mode {
            Mode::Headers => acc = fold_header(acc, &p.packet),
            Mode::Crc => {
                while let Ok(Some(piece)) = p.next_piece() {
                    crc.update(piece);
                }
            }
        }
    }
    std::hint::black_box(acc);
    if mode == Mode::Crc {
        c.crc = crc.finish();
    }
    c
}

/// The bare-CRC baseline: the same [`Crc32`] over the whole input.
pub fn crc_baseline(data: &[u8]) -> Counts {
    let mut crc = Crc32::new();
    crc.update(data);
    Counts {
        packets: 0,
        bytes: data.len() as u64,
        crc: crc.finish(),
    }
}

/// What a probe found: tracks, duration and tags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeFacts {
    /// Tracks.
    pub tracks: usize,
    /// Duration in microseconds, when known.
    pub duration_us: Option<u64>,
    /// Tags walked.
    pub tags: usize,
}

/// The probe: open, the track list, the duration and every tag.
pub fn mediaslice_probe(data: &[u8], scratch: &mut [u8]) -> Option<ProbeFacts> {
    let mut d = Demuxer::open(SliceSource::with_scratch(data, scratch), None).ok()?;
    let mut facts = ProbeFacts {
        tracks: d.tracks().len(),
        duration_us: d.info().duration_us,
        tags: 0,
    };
    let mut width = 0u64;
    for t in d.tracks() {
        width = width.wrapping_add(t.width as u64 + t.sample_rate as u64);
    }
    std::hint::black_box(width);
    while let Ok(Some(t)) = d.next_tag() {
        std::hint::black_box(&t);
        facts.tags += 1;
    }
    Some(facts)
}

/// Whether mediaslice opens the file (families landing later are skipped
/// until their module is on main).
pub fn mediaslice_opens(data: &[u8]) -> bool {
    let mut scratch = vec![0u8; SCRATCH];
    Demuxer::open(SliceSource::with_scratch(data, &mut scratch), None).is_ok()
}
