//! `mediaslice repair`: recovers what a cut or damaged recording still
//! holds and writes it as a finished file.
//!
//! Two routes, both ending in a muxer of the input's family on a
//! [`FileSink`] (temporary name, renamed only when the muxer has finished,
//! so a failed run leaves nothing under the output's name and never writes
//! the input):
//!
//! * **The reader can still read the input** (fragmented MP4 cut inside a
//!   fragment, Matroska/WebM from a live recorder with unknown sizes and no
//!   Cues, cut or with a damaged Cluster, an MP4 whose `moov` is intact but
//!   whose `mdat` is cut): the readers already deliver every whole packet
//!   before a cut and resynchronise past damage, reporting it in
//!   [`Demuxer::diagnostics`]. Repair reads with them and writes with the
//!   same family's muxer ([`crate::remux::prepare_tracks`],
//!   [`crate::remux::declare_tracks`]), counting per stream what went
//!   through and noting each place where the reader skipped bytes.
//! * **MP4/MOV with an `mdat` and no usable `moov`** (power lost before the
//!   index was written), given a good file from the same device
//!   (`--reference`): see `repair/mdat.rs` and `docs/repair.md`.
//!
//! The report ([`RepairReport`]) says what was recovered (packets, seconds
//! and bytes per stream) and what was dropped, where and why.

mod mdat;

use crate::input::{with_input, InputRead, InputSource};
use crate::remux::{
    declare_tracks, prepare_tracks, PreparedTrack, RemuxError, RemuxFormat, RemuxReport, MIN_INDEX_BYTES,
};
use crate::FileSink;
use mediaslice::{Demuxer, FormatKind, Muxer, Packet, Rational, Sink, SliceSource, Source, SpillStore};
use std::fmt;
use std::path::{Path, PathBuf};

/// What `repair` is asked to do beside its input and output.
#[derive(Debug, Clone, Default)]
pub struct RepairOptions {
    /// A good file from the same device and settings (`--reference`): its
    /// tracks stand in for a lost `moov`.
    pub reference: Option<PathBuf>,
    /// Write a fragmented MP4 input as a normal (progressive) MP4
    /// (`--progressive`); by default the output keeps the input's family
    /// and form.
    pub progressive: bool,
    /// How the input (and the reference) are read (`--source`).
    pub read: InputRead,
}

/// What was recovered of one input stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamRecovery {
    /// The stream's index in the input (or in the reference).
    pub index: usize,
    /// ffmpeg's codec name.
    pub codec: &'static str,
    /// Packets written.
    pub packets: u64,
    /// Payload bytes read from the input and given to the muxer (which may
    /// rewrite a payload: H.264/HEVC between Annex B and length-prefixed
    /// NAL units, ADTS headers; docs/write-side.md).
    pub bytes: u64,
    /// From the first packet's time to the last one's end, in seconds.
    pub seconds: f64,
}

/// A range of the input that is not in the output, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Where it starts in the input.
    pub offset: u64,
    /// How many bytes (0 when unknown).
    pub bytes: u64,
    /// How many separate runs these bytes are (1 for one range; more when
    /// like runs are summed, as the `mdat` walk does for another track's
    /// chunks: then `offset` is the first run's).
    pub runs: u64,
    /// Why it was left out.
    pub reason: String,
}

/// What a repair did.
#[derive(Debug, Clone, Default)]
pub struct RepairReport {
    /// How the input was read: `"fragmented MP4"`, `"MP4"`, `"Matroska"`,
    /// `"AVI"`, `"mdat walk with reference"`.
    pub method: &'static str,
    /// The output's format.
    pub output_format: Option<RemuxFormat>,
    /// Per stream written.
    pub streams: Vec<StreamRecovery>,
    /// Streams left out, with the reason.
    pub left_out: Vec<(usize, String)>,
    /// Ranges of the input not in the output: the tail after the last
    /// whole packet, damaged regions skipped.
    pub dropped: Vec<Dropped>,
    /// More dropped ranges than [`MAX_DROPPED`] (counted, not listed).
    pub dropped_unlisted: u64,
    /// The readers' diagnostics (code, first offset, count).
    pub diagnostics: Vec<(&'static str, u64, u32)>,
    /// The input's size.
    pub input_bytes: u64,
    /// The output's size.
    pub output_bytes: u64,
}

impl RepairReport {
    /// Packets written, over all streams.
    pub fn packets(&self) -> u64 {
        self.streams.iter().map(|s| s.packets).sum()
    }

    /// Records a dropped range (listed up to [`MAX_DROPPED`], then counted).
    fn drop_range(&mut self, offset: u64, bytes: u64, reason: impl Into<String>) {
        self.drop_runs(offset, 1, bytes, reason);
    }

    /// Records `runs` like ranges of `bytes` in all, the first at `offset`.
    fn drop_runs(&mut self, offset: u64, runs: u64, bytes: u64, reason: impl Into<String>) {
        if self.dropped.len() < MAX_DROPPED {
            self.dropped.push(Dropped {
                offset,
                bytes,
                runs,
                reason: reason.into(),
            });
        } else {
            self.dropped_unlisted += 1;
        }
    }
}

/// Dropped ranges listed in a report; further ones are only counted, so a
/// file damaged everywhere does not grow the report without bound.
pub const MAX_DROPPED: usize = 1000;

/// Why a repair failed. Nothing is left under the output's name and the
/// input is untouched.
#[derive(Debug)]
pub enum RepairError {
    /// Opening the input or the reference, creating or renaming the output.
    Io(std::io::Error),
    /// The input cannot be read at all (no known format, its header is
    /// unreadable) and no route applies.
    Input(mediaslice::Error),
    /// An MP4/MOV input has no usable `moov`: a reference file is needed.
    NeedsReference,
    /// The reference cannot serve: not an MP4/MOV with a track the walk
    /// can recover.
    Reference(String),
    /// The format has no repair route.
    Unsupported(&'static str),
    /// The muxer or the sink failed.
    Output(RemuxError),
    /// Nothing could be recovered: no whole packet.
    NothingRecovered,
    /// OUT is IN: repair never replaces its input.
    SameFile,
    /// OUT's extension names another family than the input's (the input's
    /// family, the extensions to use): repair writes the input's family;
    /// `remux` converts afterwards.
    OtherFamily(&'static str, &'static str),
}

impl fmt::Display for RepairError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepairError::Io(e) => write!(f, "{e}"),
            RepairError::Input(e) => write!(f, "reading: {e}"),
            RepairError::NeedsReference => write!(
                f,
                "no usable moov (the recording's index was never written): give --reference GOOD, a file from the same device and settings"
            ),
            RepairError::Reference(why) => write!(f, "reference: {why}"),
            RepairError::Unsupported(what) => write!(f, "repair does not support {what}"),
            RepairError::Output(e) => write!(f, "{e}"),
            RepairError::NothingRecovered => write!(f, "no whole packet could be recovered"),
            RepairError::SameFile => write!(f, "OUT is the input: repair never replaces its input; name another file"),
            RepairError::OtherFamily(family, ext) => write!(
                f,
                "the input is {family} and repair writes the same family: name OUT {ext} (then `remux` to convert)"
            ),
        }
    }
}

impl std::error::Error for RepairError {}

/// The top-level boxes of an ISO BMFF file that decide the route.
#[derive(Debug, Default, Clone, Copy)]
struct Mp4Layout {
    /// A `moov` wholly inside the file.
    moov: bool,
    /// A `moof` (a fragmented file).
    moof: bool,
    /// The first `mdat`'s payload: (start, end), the end cut to the file.
    mdat: Option<(u64, u64)>,
    /// The last box ends exactly at the end of the file.
    clean_end: bool,
}

/// What the top-level box walk reads: a byte slice, or the input file by
/// positioned reads ([`FileHeaders`]).
trait Headers {
    /// Bytes in all.
    fn size(&self) -> u64;
    /// Fills `buf` from `pos`; false when the bytes are not all there.
    fn read(&self, pos: u64, buf: &mut [u8]) -> bool;
}

impl Headers for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read(&self, pos: u64, buf: &mut [u8]) -> bool {
        let at = usize::try_from(pos).unwrap_or(usize::MAX);
        match self.get(at..).and_then(|d| d.get(..buf.len())) {
            Some(b) => {
                buf.copy_from_slice(b);
                true
            }
            None => false,
        }
    }
}

/// A slice by reference, where a sized [`Headers`] is needed (`&dyn`).
impl Headers for &[u8] {
    fn size(&self) -> u64 {
        (**self).size()
    }
    fn read(&self, pos: u64, buf: &mut [u8]) -> bool {
        (**self).read(pos, buf)
    }
}

/// The input file, read by `pread` for the box walks. Not through the map:
/// each header read through it faults in the pages around it (the kernel
/// maps up to 64 KiB of cached pages per fault), and those stay resident:
/// 197 MiB over the 2,900 top-level boxes of a 2.9 GB fragmented
/// recording, where positioned reads cost one small buffer
/// (`benches/scripts/write_big.sh`).
struct FileHeaders<'a> {
    file: &'a std::fs::File,
    len: u64,
}

impl Headers for FileHeaders<'_> {
    fn size(&self) -> u64 {
        self.len
    }
    fn read(&self, pos: u64, buf: &mut [u8]) -> bool {
        use std::os::unix::fs::FileExt;
        pos.saturating_add(buf.len() as u64) <= self.len && self.file.read_exact_at(buf, pos).is_ok()
    }
}

/// The top-level boxes of `data` (ISO/IEC 14496-12 §4.2) as (type,
/// payload start, end; the end may lie past the data), then where the walk
/// stopped: at the end, at a box header that does not fit, or at a size
/// below its header. Each step moves at least 8 bytes, so it ends.
fn top_level_boxes(data: &(impl Headers + ?Sized), mut each: impl FnMut([u8; 4], u64, u64)) -> u64 {
    let len = data.size();
    let mut pos = 0u64;
    let mut h = [0u8; 8];
    while data.read(pos, &mut h) {
        let size32 = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let kind = [h[4], h[5], h[6], h[7]];
        let (header, size) = match size32 {
            0 => (8, len - pos),
            1 => {
                let mut b = [0u8; 8];
                if !data.read(pos + 8, &mut b) {
                    break;
                }
                (16, u64::from_be_bytes(b))
            }
            s => (8, u64::from(s)),
        };
        if size < header {
            break;
        }
        let end = pos.saturating_add(size);
        each(kind, pos + header, end);
        pos = end;
    }
    pos
}

/// The top-level boxes of `data` that decide the route.
fn mp4_layout(data: &(impl Headers + ?Sized)) -> Mp4Layout {
    let mut out = Mp4Layout::default();
    let len = data.size();
    let stop = top_level_boxes(data, |kind, start, end| match &kind {
        b"moov" if end <= len => out.moov = true,
        b"moof" => out.moof = true,
        b"mdat" if out.mdat.is_none() => out.mdat = Some((start, end.min(len))),
        _ => {}
    });
    out.clean_end = stop == len;
    out
}

/// The payload bytes of the `mdat` boxes of `data` before `limit`.
fn mdat_bytes_before(data: &(impl Headers + ?Sized), limit: u64) -> u64 {
    let mut sum = 0u64;
    top_level_boxes(data, |kind, start, end| {
        if &kind == b"mdat" && start < limit {
            sum += end.min(limit) - start;
        }
    });
    sum
}

/// Most `mdat` boxes [`first_unread_mdat`] tracks.
const MAX_MDATS_CHECKED: usize = 4096;

/// The payload start of the first `mdat` before `limit` whose bytes are not
/// all in packets the reader gives (a second pass over the packets); 0
/// when none is found among the first [`MAX_MDATS_CHECKED`].
fn first_unread_mdat<S: Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    data: &dyn Headers,
    limit: u64,
) -> u64 {
    let mut mdats: Vec<(u64, u64, u64)> = Vec::new();
    top_level_boxes(data, |kind, start, end| {
        if &kind == b"mdat" && start < limit && mdats.len() < MAX_MDATS_CHECKED {
            mdats.push((start, end.min(limit), 0));
        }
    });
    let Ok(mut d) = open() else { return 0 };
    while let Ok(Some(p)) = d.next_packet() {
        let (Some(pos), false) = (p.pos, p.flags.truncated) else {
            continue;
        };
        let at = mdats.partition_point(|m| m.0 <= pos);
        if let Some(m) = at.checked_sub(1).and_then(|i| mdats.get_mut(i)) {
            if pos < m.1 {
                m.2 += p.data.len() as u64;
            }
        }
    }
    mdats.iter().find(|m| m.2 < m.1 - m.0).map_or(0, |m| m.0)
}

/// Whether a Matroska file's EBML DocType is `webm` (in its first bytes).
fn is_webm(data: &[u8]) -> bool {
    data.get(..64.min(data.len()))
        .is_some_and(|h| h.windows(4).any(|w| w == b"webm"))
}

/// The route [`plan`] chooses.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// The `mdat` walk with a reference: the `mdat` payload (start, end).
    Mdat(u64, u64),
    /// Read with the family's reader, write with its muxer.
    Read {
        format: RemuxFormat,
        method: &'static str,
        /// For MP4: whether the last top-level box ends at the end of the
        /// input.
        clean_end: Option<bool>,
        /// A fragmented MP4: sample bytes no packet read are counted.
        fragmented: bool,
    },
}

/// Chooses the route for `data` (its top-level boxes read through
/// `headers`), which the reader opened as `kind` (`Err` when it did not),
/// to be written as `out` (from OUT's extension; `None`: the input's
/// family), `mov` when OUT names a `.mov`.
fn plan(
    data: &[u8],
    headers: &dyn Headers,
    kind: Result<FormatKind, mediaslice::Error>,
    out: Option<RemuxFormat>,
    mov: bool,
    opts: &RepairOptions,
) -> Result<Route, RepairError> {
    let is_mp4 = data.get(4..8).is_some_and(|t| {
        matches!(
            t,
            b"ftyp" | b"moov" | b"mdat" | b"free" | b"wide" | b"skip" | b"moof" | b"styp"
        )
    });
    let opened = kind.is_ok();
    let kind = match kind {
        Ok(k) => k,
        Err(_) if is_mp4 => FormatKind::Mp4,
        Err(e) => return Err(RepairError::Input(e)),
    };
    match kind {
        FormatKind::Mp4 => {
            if matches!(out, Some(RemuxFormat::Matroska | RemuxFormat::WebM)) {
                return Err(RepairError::OtherFamily("MP4/MOV", ".mp4 or .mov"));
            }
            let layout = mp4_layout(headers);
            if !layout.moov || !opened {
                opts.reference.as_deref().ok_or(RepairError::NeedsReference)?;
                let (start, end) = layout.mdat.ok_or(RepairError::Unsupported(
                    "an MP4 with neither a moov nor an mdat (nothing to walk)",
                ))?;
                return Ok(Route::Mdat(start, end));
            }
            let (format, method) = if layout.moof && !opts.progressive {
                (RemuxFormat::Fmp4, "fragmented MP4")
            } else if mov {
                (RemuxFormat::Mov, if layout.moof { "fragmented MP4" } else { "MP4" })
            } else {
                (RemuxFormat::Mp4, if layout.moof { "fragmented MP4" } else { "MP4" })
            };
            Ok(Route::Read {
                format,
                method,
                clean_end: Some(layout.clean_end),
                fragmented: layout.moof,
            })
        }
        FormatKind::Matroska => {
            let format = match out {
                Some(f @ (RemuxFormat::Matroska | RemuxFormat::WebM)) => f,
                Some(_) => return Err(RepairError::OtherFamily("Matroska/WebM", ".mkv or .webm")),
                None if is_webm(data) => RemuxFormat::WebM,
                None => RemuxFormat::Matroska,
            };
            Ok(Route::Read {
                format,
                method: "Matroska",
                clean_end: None,
                fragmented: false,
            })
        }
        FormatKind::Avi => {
            if !matches!(out, None | Some(RemuxFormat::Avi)) {
                return Err(RepairError::OtherFamily("AVI", ".avi"));
            }
            // The reader walks `movi` where idx1 is missing, cut or stops
            // matching the file; the writer gives the output a new idx1.
            Ok(Route::Read {
                format: RemuxFormat::Avi,
                method: "AVI",
                clean_end: None,
                fragmented: false,
            })
        }
        other => Err(RepairError::Unsupported(other.name())),
    }
}

/// The muxer format and scratch for writing `format` from an input of
/// `input_len` bytes: the index may take half the input's size, at least
/// [`MIN_INDEX_BYTES`].
fn mux_setup(format: RemuxFormat, input_len: u64) -> (mediaslice::MuxFormat, Vec<u8>) {
    let index = usize::try_from(input_len / 2)
        .unwrap_or(usize::MAX)
        .clamp(MIN_INDEX_BYTES, isize::MAX as usize / 2);
    if matches!(format, RemuxFormat::Fmp4) {
        crate::fragmented::mux_setup(format.mux_format(), None, false, index)
    } else {
        (format.mux_format(), vec![0u8; index])
    }
}

/// Repairs `input` into `output` (see the module notes).
///
/// Errors: see [`RepairError`]; on any error no file is left under
/// `output`'s name (an existing one is untouched) and `input` is never
/// written.
pub fn repair(input: &Path, output: &Path, opts: &RepairOptions) -> Result<RepairReport, RepairError> {
    // Renaming the result over the input would replace the recording.
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
        if a == b {
            return Err(RepairError::SameFile);
        }
    }
    with_input!(opts.read, S => repair_from::<S>(input, output, opts))
}

/// [`repair`] through the source `S`.
fn repair_from<S: InputSource>(input: &Path, output: &Path, opts: &RepairOptions) -> Result<RepairReport, RepairError> {
    let src = S::open_path(input).map_err(RepairError::Io)?;
    let file = std::fs::File::open(input).map_err(RepairError::Io)?;
    let headers = FileHeaders {
        file: &file,
        len: file.metadata().map_err(RepairError::Io)?.len(),
    };
    // What `plan` looks at of the data itself: the first box's type, a
    // Matroska DocType.
    let mut head = [0u8; 64];
    let head_len = head.len().min(usize::try_from(headers.len).unwrap_or(usize::MAX));
    let data = head.get_mut(..head_len).unwrap_or_default();
    if !headers.read(0, data) {
        return Err(RepairError::Io(std::io::Error::other("the input could not be read")));
    }
    let data = &*data;
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let open = || crate::remux::open_input::<S>(input, ext.as_deref());
    let mov = output.extension().is_some_and(|e| e.eq_ignore_ascii_case("mov"));
    let kind = open().map(|d| d.format());
    let (format, method, clean_end, fragmented) =
        match plan(data, &headers, kind, RemuxFormat::from_path(output), mov, opts)? {
            Route::Read {
                format,
                method,
                clean_end,
                fragmented,
            } => (format, method, clean_end, fragmented),
            Route::Mdat(start, end) => {
                let reference = opts.reference.as_deref().ok_or(RepairError::NeedsReference)?;
                return mdat::repair_mdat(src, (start, end), reference, output);
            }
        };
    drop(src);
    let input_len = headers.len;
    let tracks = prepare_tracks(&open).map_err(RepairError::Input)?;
    let sink = FileSink::create(output).map_err(RepairError::Io)?;
    let (mux_format, scratch) = mux_setup(format, input_len);
    // Past its memory bound the index (MP4 sample records, AVI idx1
    // entries) goes to an unnamed temporary file beside the output.
    let mut spill = crate::TempSpill::beside(output);
    let muxer = Muxer::with_scratch(sink, mux_format, scratch)
        .map_err(|e| RepairError::Output(RemuxError::Output(e)))?
        .with_index_spill(&mut spill, crate::remux::DEFAULT_INDEX_MEMORY);
    let fragments = fragmented.then_some(&headers as &dyn Headers);
    let out = Output {
        format,
        method,
        clean_end,
        fragments,
    };
    let (report, sink) = read_and_write(&open, input_len, &tracks, muxer, out)?;
    sink.commit().map_err(RepairError::Io)?;
    Ok(report)
}

/// Repairs `data` into `sink`, all in memory: the routes of [`repair`] but
/// the `mdat` walk (which reads a reference file: `NeedsReference`), the
/// input read through a [`SliceSource`] without scratch, the output's
/// index kept in the muxer's scratch (half the input's size, at least
/// [`MIN_INDEX_BYTES`]; no spill). `out` is the output's format as OUT's
/// extension would choose it (`None`: the input's family). What the
/// `repair` fuzz target runs (docs/fuzzing.md).
///
/// Returns the report and the sink after the muxer has finished.
pub fn repair_in_memory<K: Sink>(
    data: &[u8],
    out: Option<RemuxFormat>,
    opts: &RepairOptions,
    sink: K,
) -> Result<(RepairReport, K), RepairError> {
    let open = || Demuxer::open(SliceSource::new(data), None);
    let mov = matches!(out, Some(RemuxFormat::Mov));
    let kind = open().map(|d| d.format());
    let Route::Read {
        format,
        method,
        clean_end,
        fragmented,
    } = plan(data, &data, kind, out, mov, opts)?
    else {
        return Err(RepairError::NeedsReference);
    };
    let tracks = prepare_tracks(&open).map_err(RepairError::Input)?;
    let (mux_format, scratch) = mux_setup(format, data.len() as u64);
    let muxer =
        Muxer::with_scratch(sink, mux_format, scratch).map_err(|e| RepairError::Output(RemuxError::Output(e)))?;
    let out = Output {
        format,
        method,
        clean_end,
        fragments: fragmented.then_some(&data as &dyn Headers),
    };
    read_and_write(&open, data.len() as u64, &tracks, muxer, out)
}

/// What [`read_and_write`] writes and how the input ended.
struct Output<'a> {
    format: RemuxFormat,
    method: &'static str,
    clean_end: Option<bool>,
    /// A fragmented MP4's top-level boxes, to count unread `mdat` bytes.
    fragments: Option<&'a dyn Headers>,
}

/// Per-stream counts kept during the packet loop, in a fixed table.
#[derive(Debug, Clone, Copy, Default)]
struct Count {
    packets: u64,
    bytes: u64,
    first: Option<i64>,
    end: i64,
}

impl Count {
    /// Counts a packet of `size` bytes from `ts` lasting `duration`.
    fn add(&mut self, size: usize, ts: Option<i64>, duration: Option<u64>) {
        self.packets += 1;
        self.bytes += size as u64;
        if let Some(t) = ts {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            let d = i64::try_from(duration.unwrap_or(0)).unwrap_or(0);
            self.end = self.end.max(t.saturating_add(d));
        }
    }

    /// The report line of stream `index`, its times in `time_base`.
    fn recovery(&self, index: usize, codec: &'static str, time_base: Rational) -> StreamRecovery {
        let span = self.first.map_or(0, |f| self.end.saturating_sub(f));
        let seconds = if time_base.den == 0 {
            0.0
        } else {
            span as f64 * f64::from(time_base.num) / f64::from(time_base.den)
        };
        StreamRecovery {
            index,
            codec,
            packets: self.packets,
            bytes: self.bytes,
            seconds,
        }
    }
}

/// The readers' diagnostics that mean bytes were skipped (a damaged unit
/// passed over), as opposed to facts about the file (unknown sizes, no
/// Cues); see `docs/diagnostics.md`.
pub const SKIP_CODES: [&str; 16] = [
    "avi.resync",
    "mkv.resync",
    "mkv.bad-block",
    "mkv.bad-block-group",
    "mkv.bad-lacing",
    "mkv.element-overflow",
    "mkv.bad-zlib-frame",
    "mkv.bad-webvtt-cue",
    "mkv.element-exceeds-segment",
    "mp4.bad-top-level-box",
    "mp4.traf-unknown-track",
    "mp4.traf-without-tfhd",
    "mp4.trun-count-mismatch",
    "mp4.unfinished-fragment",
    "mp4.stsz-count-mismatch",
    "mp4.stco-too-short",
];

/// How often the reader has reported each of [`SKIP_CODES`] so far.
fn skip_counts<S: Source>(d: &Demuxer<S>) -> [u32; SKIP_CODES.len()] {
    let mut out = [0u32; SKIP_CODES.len()];
    for (diag, n) in d.diagnostics().iter() {
        if let Some(at) = SKIP_CODES.iter().position(|c| *c == diag.code) {
            if let Some(slot) = out.get_mut(at) {
                *slot = n;
            }
        }
    }
    out
}

/// The first of [`SKIP_CODES`] whose count grew from `before` to `now`.
fn grown(before: &[u32], now: &[u32]) -> Option<&'static str> {
    let at = before.iter().zip(now).position(|(b, n)| n > b)?;
    SKIP_CODES.get(at).copied()
}

/// The route for an input the reader can still read: every whole packet
/// of the `tracks` prepared from it through `muxer` (the family's), counted.
/// Returns the report and the sink after `finish`; on an error the muxer
/// and its sink are dropped unfinished (a file sink then leaves no file).
fn read_and_write<S: Source, K: Sink, B: AsMut<[u8]>, P: SpillStore>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    input_len: u64,
    tracks: &[PreparedTrack],
    mut muxer: Muxer<K, B, P>,
    out: Output<'_>,
) -> Result<(RepairReport, K), RepairError> {
    let Output {
        format,
        method,
        clean_end,
        fragments,
    } = out;
    let mut remux_report = RemuxReport::default();
    let map = declare_tracks(&mut muxer, tracks, &mut remux_report).map_err(RepairError::Output)?;
    let mut report = RepairReport {
        method,
        output_format: Some(format),
        input_bytes: input_len,
        ..Default::default()
    };
    for (i, why) in &remux_report.skipped {
        report.left_out.push((*i, (*why).to_owned()));
    }
    let mut demuxer = open().map_err(RepairError::Input)?;
    let mut counts = [Count::default(); mediaslice::MAX_TRACKS];
    // The end of the last whole packet read, and the diagnostics' count
    // then: a count that grows before the next packet marks a skip.
    let mut last_end = 0u64;
    let mut diags = skip_counts(&demuxer);
    // Payload bytes of every whole packet read (left-out streams too).
    let mut read_bytes = 0u64;
    // The reader gave a packet the input ends inside (left out).
    let mut cut_packet = false;
    let stopped = loop {
        let p = match demuxer.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        if p.flags.truncated {
            cut_packet = true;
            continue;
        }
        let (pos, size) = (p.pos, p.data.len() as u64);
        if let Some(&Some(track)) = map.get(p.track) {
            if let Some(c) = counts.get_mut(p.track) {
                c.add(p.data.len(), p.dts.or(p.pts), p.duration);
            }
            muxer
                .write_packet(&Packet { track, ..p })
                .map_err(|e| RepairError::Output(RemuxError::Output(e)))?;
        }
        let now = skip_counts(&demuxer);
        if let (Some(pos), Some(code)) = (pos, grown(&diags, &now)) {
            if pos > last_end {
                report.drop_range(
                    last_end,
                    pos - last_end,
                    format!("damaged ({code}): the reader skipped to the next unit it could read"),
                );
            }
        }
        if let Some(pos) = pos {
            last_end = last_end.max(pos + size);
            read_bytes += size;
        }
        diags = now;
    };
    let at = last_end.min(input_len);
    let tail_code = grown(&diags, &skip_counts(&demuxer));
    match (stopped, tail_code) {
        (Some(e), _) if e.is_truncation() => {
            report.drop_range(at, input_len - at, format!("the input ends inside a unit: {e}"))
        }
        (Some(e), _) => report.drop_range(at, input_len - at, format!("unreadable from here on: {e}")),
        (None, Some(code)) => report.drop_range(
            at,
            input_len - at,
            format!("damaged ({code}): nothing readable after the last whole packet"),
        ),
        (None, None) => {
            // The reader ended quietly, but the input may still end inside
            // a unit's header: an MP4 whose last box does not end at the
            // end of the file, a Matroska Segment of unknown size (a live
            // recording) or one cut by the end of the file.
            let diags = demuxer.diagnostics();
            let cut = clean_end.map_or_else(
                || cut_packet || diags.contains("mkv.unknown-size-segment") || diags.contains("mkv.segment-beyond-eof"),
                |clean| !clean,
            );
            if cut && at < input_len {
                report.drop_range(
                    at,
                    input_len - at,
                    "after the last whole packet: the start of a unit cut by the end of the input",
                );
            }
        }
    }
    // A fragmented MP4 whose moof is damaged: the reader passes over
    // the fragment, reporting `mp4.moof-damaged` (not a skip code: the
    // bytes lost are the fragment's samples, counted here) or, for a
    // damaged `moof` type, nothing. Sample bytes inside mdat boxes that
    // no packet read are counted; when there are some, a second pass finds
    // the first mdat they are in.
    if let Some(data) = fragments {
        let unread = mdat_bytes_before(data, last_end).saturating_sub(read_bytes);
        if unread > 0 {
            let first = first_unread_mdat(open, data, last_end);
            report.drop_range(
                first,
                unread,
                "inside mdat boxes but in no sample the reader could read (a damaged or missing moof, or padding); offset: the first such mdat",
            );
        }
    }
    report.diagnostics = demuxer
        .diagnostics()
        .iter()
        .map(|(d, n)| (d.code, d.offset, n))
        .collect();
    for (i, t) in tracks.iter().enumerate() {
        if map.get(i).is_some_and(Option::is_some) {
            let c = counts.get(i).copied().unwrap_or_default();
            report
                .streams
                .push(c.recovery(i, t.track.codec.ffmpeg_name(), t.track.time_base));
        }
    }
    if report.packets() == 0 {
        // Dropping the muxer drops the sink: its temporary file goes.
        return Err(RepairError::NothingRecovered);
    }
    let sink = muxer.finish().map_err(|e| RepairError::Output(RemuxError::Output(e)))?;
    report.output_bytes = sink.position();
    Ok((report, sink))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A box: size, type, payload.
    fn mp4_box(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut out = ((payload.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn top_level_boxes_decide_the_route() {
        let mut f = mp4_box(b"ftyp", b"isom\0\0\0\0");
        f.extend(mp4_box(b"moov", &[0; 16]));
        f.extend(mp4_box(b"moof", &[0; 8]));
        let mdat_at = f.len() as u64 + 8;
        f.extend(mp4_box(b"mdat", &[7; 100]));
        let l = mp4_layout(&f[..]);
        assert!(l.moov && l.moof && l.clean_end);
        assert_eq!(l.mdat, Some((mdat_at, mdat_at + 100)));
        // Cut inside the mdat: its end is the file's, the end is not clean.
        let cut = &f[..f.len() - 30];
        let l = mp4_layout(cut);
        assert_eq!(l.mdat, Some((mdat_at, cut.len() as u64)));
        assert!(!l.clean_end);
        // A moov cut short does not count; a size below its header stops
        // the walk.
        let mut g = mp4_box(b"ftyp", b"isom");
        g.extend(mp4_box(b"mdat", &[1; 10]));
        g.extend(&mp4_box(b"moov", &[0; 64])[..20]);
        assert!(!mp4_layout(&g[..]).moov);
        assert!(!mp4_layout(&[0, 0, 0, 3, b'f', b'r', b'e', b'e', 0, 0][..]).clean_end);
    }

    /// The file walk (positioned reads) sees what the slice walk sees,
    /// 64-bit box sizes and a cut last box included.
    #[test]
    fn file_walk_matches_slice_walk() {
        let mut f = mp4_box(b"ftyp", b"isom\0\0\0\0");
        f.extend(mp4_box(b"moof", &[0; 8]));
        // A 64-bit `mdat` (size 1, then the size in 8 bytes).
        f.extend(1u32.to_be_bytes());
        f.extend(b"mdat");
        f.extend(40u64.to_be_bytes());
        f.extend([9u8; 24]);
        f.extend(&mp4_box(b"moov", &[0; 64])[..30]);
        let path = std::env::temp_dir().join(format!("mediaslice-std-{}-walk.mp4", std::process::id()));
        std::fs::write(&path, &f).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let on_file = FileHeaders {
            file: &file,
            len: f.len() as u64,
        };
        let (a, b) = (mp4_layout(&f[..]), mp4_layout(&on_file));
        assert_eq!(
            (a.moov, a.moof, a.mdat, a.clean_end),
            (b.moov, b.moof, b.mdat, b.clean_end)
        );
        assert_eq!(a.mdat, Some((48, 72)));
        assert!(a.moof && !a.moov && !a.clean_end);
        assert_eq!(mdat_bytes_before(&f[..], 50), mdat_bytes_before(&on_file, 50));
        assert_eq!(mdat_bytes_before(&on_file, 50), 2);
    }

    #[test]
    fn skip_codes_are_documented() {
        let docs =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/diagnostics.md")).unwrap_or_default();
        for code in SKIP_CODES {
            assert!(
                docs.contains(&format!("`{code}`")),
                "{code} is not in docs/diagnostics.md"
            );
        }
    }
}
