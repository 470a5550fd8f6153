//! `mediaslice remux`: rewraps an input into another container without
//! touching its payload.
//!
//! [`remux_file`] opens the input (memory-mapped), declares its tracks to a
//! [`Muxer`], runs the packet loop ([`write_packets`], which allocates
//! nothing) and finishes. A file output goes through [`FileSink`]: it is
//! written under a temporary name beside `OUT` and renamed only when the
//! muxer has finished, so a failed run leaves nothing under `OUT`'s name and
//! never touches the input. `-` writes to standard output, a stream: the
//! Matroska muxer then writes its live form (unknown sizes).
//!
//! Track configurations are taken from the demuxer
//! ([`Demuxer::codec_config`]), completed where the input keeps them in the
//! stream or in header packets: the parameter sets of an Annex B H.264/H.265
//! track from its first packet, the ADTS header of an AAC track from its
//! first frame, and the three Vorbis/Theora headers of an Ogg track
//! Xiph-laced into one CodecPrivate. Attached pictures (cover art) are left
//! out and reported.
//!
//! [`RemuxFormat`] names the targets; a new muxer adds a variant there (its
//! extensions and its [`MuxFormat`]) and nothing else here.

use crate::input::{with_input, InputRead, InputSource};
use crate::{FileSink, StdoutSink};
use mediaslice::types::rescale_q;
use mediaslice::{
    Codec, Demuxer, MuxFormat, Muxer, NullSink, Packet, Rational, Sink, Source, SpillStore, TagKey, TagScope, TagValue,
    TrackSpec,
};
use std::fmt;
use std::path::Path;

pub mod carry;
mod prepare;
pub use prepare::{prepare_tracks, select_streams, start_us, PreparedTrack};
use prepare::{start_of, AAC_WITHOUT_CONFIG, FIRST_PACKET_SEARCH};

/// A target container of `remux`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemuxFormat {
    /// Matroska (`.mkv`, `.mka`, `.mk3d`).
    Matroska,
    /// WebM (`.webm`): VP8, VP9, AV1, Opus, Vorbis only.
    WebM,
    /// MP4 (`.mp4`, `.m4a`, `.m4v`): progressive, `moov` after the media;
    /// needs an output that seeks (a file, not standard output).
    Mp4,
    /// QuickTime movie (`.mov`): the MP4 muxer with the `qt  ` brand.
    Mov,
    /// Fragmented MP4 / CMAF (`--format fmp4`, or `--fragmented`): no
    /// extension of its own (`.mp4` names the progressive form).
    Fmp4,
    /// Hybrid MP4 (`--format hybrid`, or `--hybrid`): fragmented while it
    /// is written, so a cut recording keeps every complete fragment, and a
    /// normal MP4 once finished; needs an output that seeks.
    HybridMp4,
    /// AVI (`.avi`): `idx1` after the media, OpenDML past 1 GiB; needs an
    /// output that seeks.
    Avi,
    /// MPEG transport stream (`.ts`, `.m2ts`, `.mts`): 188-byte packets,
    /// written to a file or a stream (`-`). H.264, H.265, MPEG-1/2/4
    /// video, AAC, MPEG audio, AC-3, E-AC-3.
    Ts,
}

impl RemuxFormat {
    /// Every target, for help texts.
    pub const ALL: &'static [RemuxFormat] = &[
        RemuxFormat::Matroska,
        RemuxFormat::WebM,
        RemuxFormat::Mp4,
        RemuxFormat::Mov,
        RemuxFormat::Fmp4,
        RemuxFormat::HybridMp4,
        RemuxFormat::Avi,
        RemuxFormat::Ts,
    ];

    /// The names `--format` takes for this target.
    pub const fn names(self) -> &'static [&'static str] {
        match self {
            RemuxFormat::Matroska => &["mkv", "matroska", "mka"],
            RemuxFormat::WebM => &["webm"],
            RemuxFormat::Mp4 => &["mp4", "m4a", "m4v"],
            RemuxFormat::Mov => &["mov", "qt"],
            RemuxFormat::Fmp4 => &["fmp4", "cmaf"],
            RemuxFormat::HybridMp4 => &["hybrid", "hybrid-mp4"],
            RemuxFormat::Avi => &["avi"],
            RemuxFormat::Ts => &["ts", "mpegts", "m2ts", "mts"],
        }
    }

    /// The file extensions that choose this target.
    pub const fn extensions(self) -> &'static [&'static str] {
        match self {
            RemuxFormat::Matroska => &["mkv", "mka", "mk3d"],
            RemuxFormat::WebM => &["webm"],
            RemuxFormat::Mp4 => &["mp4", "m4a", "m4v"],
            RemuxFormat::Mov => &["mov", "qt"],
            RemuxFormat::Avi => &["avi"],
            RemuxFormat::Ts => &["ts", "m2ts", "mts"],
            RemuxFormat::Fmp4 | RemuxFormat::HybridMp4 => &[],
        }
    }

    /// The core muxer that writes it.
    pub const fn mux_format(self) -> MuxFormat {
        match self {
            RemuxFormat::Matroska => MuxFormat::Matroska,
            RemuxFormat::WebM => MuxFormat::WebM,
            RemuxFormat::Mp4 => MuxFormat::Mp4,
            RemuxFormat::Mov => MuxFormat::Mov,
            RemuxFormat::Fmp4 => MuxFormat::Fmp4(mediaslice::Fragmenting::DEFAULT),
            RemuxFormat::HybridMp4 => MuxFormat::HybridMp4(mediaslice::Fragmenting::DEFAULT),
            RemuxFormat::Avi => MuxFormat::Avi,
            RemuxFormat::Ts => MuxFormat::Ts,
        }
    }

    /// Whether the format patches sizes and writes its index after the
    /// media, so that it needs an output that seeks (no standard output,
    /// no `--live`).
    pub const fn needs_seek(self) -> bool {
        matches!(
            self,
            RemuxFormat::Mp4 | RemuxFormat::Mov | RemuxFormat::HybridMp4 | RemuxFormat::Avi
        )
    }

    /// Whether the format's only scratch is an index that grows with the
    /// packets (MP4/MOV sample records, AVI `idx1` entries), spilled past
    /// [`RemuxOptions::index_memory`].
    pub const fn index_scratch(self) -> bool {
        matches!(self, RemuxFormat::Mp4 | RemuxFormat::Mov | RemuxFormat::Avi)
    }

    /// Whether the format is progressive MP4/MOV, whose only scratch is the
    /// sample index and which can place it ahead (`--faststart`).
    const fn progressive(self) -> bool {
        matches!(self, RemuxFormat::Mp4 | RemuxFormat::Mov)
    }

    /// The target a `--format` name names (case-insensitive).
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.to_ascii_lowercase();
        Self::ALL.iter().copied().find(|f| f.names().contains(&name.as_str()))
    }

    /// The target a path's extension names.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Self::ALL
            .iter()
            .copied()
            .find(|f| f.extensions().contains(&ext.as_str()))
    }
}

/// Why a remux failed. Nothing is left under the output's name.
#[derive(Debug)]
pub enum RemuxError {
    /// No format given and none known for the output's extension.
    NoFormat,
    /// Opening the input or creating the output.
    Io(std::io::Error),
    /// The demuxer could not open the input.
    Input(mediaslice::Error),
    /// The muxer refused a track (its codec) or a packet, or the sink failed.
    Output(mediaslice::Error),
    /// No track of the input can be written.
    NoTracks,
    /// The format writes its index after the media and patches sizes, so it
    /// cannot go to standard output or be written live.
    NeedsSeek(RemuxFormat),
    /// Input stream `.0` cannot be written, for reason `.1`; `--streams`
    /// can leave it out.
    Track(usize, &'static str),
}

impl fmt::Display for RemuxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemuxError::NoFormat => write!(
                f,
                "no output format: give --format, or an output name ending in .mkv, .mka, .webm, .mp4, .m4a, .mov, .avi, .ts, .m2ts or .mts"
            ),
            RemuxError::Io(e) => write!(f, "{e}"),
            RemuxError::Input(e) => write!(f, "reading: {e}"),
            RemuxError::Output(e) => write!(f, "writing: {e}"),
            RemuxError::NoTracks => write!(f, "no track of the input can be written"),
            RemuxError::NeedsSeek(t) => write!(
                f,
                "{} writes its index after the media: it needs an output file (not standard output, not --live); use mkv for a stream",
                t.names().first().copied().unwrap_or("this format")
            ),
            RemuxError::Track(i, why) => write!(f, "stream {i}: {why}; leave it out with --streams"),
        }
    }
}

impl std::error::Error for RemuxError {}

/// What a remux did.
#[derive(Debug, Default)]
pub struct RemuxReport {
    /// Packets written.
    pub packets: u64,
    /// Bytes in the output.
    pub bytes: u64,
    /// Tracks written.
    pub tracks: usize,
    /// Input tracks left out, with the reason.
    pub skipped: Vec<(usize, &'static str)>,
    /// File-level tags carried (see [`input_tags`]).
    pub tags: usize,
    /// File-level tags left out: beyond the muxer's
    /// [`mediaslice::mux::tags::MAX_TAG_BYTES`].
    pub tags_dropped: usize,
    /// Chapters carried (Matroska targets; see [`carry::input_chapters`]).
    pub chapters: usize,
    /// Chapters left out: beyond the muxer's
    /// [`mediaslice::mux::chapters::MAX_MUX_CHAPTERS`] or title bytes.
    pub chapters_dropped: usize,
    /// Attached pictures written as attachments (Matroska targets; see
    /// [`carry::input_pictures`]).
    pub attachments: usize,
    /// The input error that ended the packet loop early (damage,
    /// truncation): the output holds every packet before it.
    pub stopped: Option<mediaslice::Error>,
    /// Fragmented and hybrid MP4: the fragments and, for hybrid, the
    /// progressive index as they stood after the last packet (the last
    /// fragment closes in `finish`).
    pub fragments: Option<mediaslice::format::mux_traits::FragmentStats>,
    /// MP4, MOV, hybrid MP4: bytes of the sample index spilled to a
    /// temporary file (past [`RemuxOptions::index_memory`]).
    pub index_spilled: u64,
    /// Payload handed to the kernel by a file output
    /// ([`crate::FileSink::set_input`]), and the fallbacks.
    pub kernel_copy: crate::KernelCopyStats,
}

/// Declares the prepared tracks to `muxer`; returns, per input track, its
/// index in the output (`None` when left out).
///
/// Errors: the muxer's refusal of a track (a codec the target cannot
/// carry), `NoTracks` when none is written.
pub fn declare_tracks<K: Sink, B: AsMut<[u8]>, P: SpillStore>(
    muxer: &mut Muxer<K, B, P>,
    tracks: &[PreparedTrack],
    report: &mut RemuxReport,
) -> Result<Vec<Option<usize>>, RemuxError> {
    let mut map = Vec::with_capacity(tracks.len());
    for (i, t) in tracks.iter().enumerate() {
        if let Some(reason) = t.skip {
            report.skipped.push((i, reason));
            map.push(None);
            continue;
        }
        if t.track.codec == Codec::Aac && t.config.is_empty() {
            return Err(RemuxError::Track(i, AAC_WITHOUT_CONFIG));
        }
        let spec = TrackSpec::new(&t.track).with_config(&t.config);
        map.push(Some(muxer.add_track(&spec).map_err(RemuxError::Output)?));
    }
    report.tracks = map.iter().flatten().count();
    if report.tracks == 0 {
        return Err(RemuxError::NoTracks);
    }
    Ok(map)
}

/// The packet loop: every packet of `demuxer`, of a track `map` keeps,
/// written to `muxer` under its output index. Allocates nothing. Returns
/// the input error that ended it early, if any (the packets before it are
/// written).
///
/// Errors: the muxer's (a refused packet, a sink error).
///
/// Times are moved so that the input's start time (`start_us`, see
/// [`start_us`]) becomes 0, as `ffmpeg -c copy` moves them (its `-copyts`
/// not given): each track's times less the start time in its own time
/// base ([`rescale_q`]).
pub fn write_packets<S: Source, K: Sink, B: AsMut<[u8]>, P: SpillStore>(
    demuxer: &mut Demuxer<S>,
    muxer: &mut Muxer<K, B, P>,
    map: &[Option<usize>],
    start_us: i64,
) -> mediaslice::Result<Option<mediaslice::Error>> {
    write_packets_with_progress(demuxer, muxer, map, start_us, None)
}

/// [`write_packets`], calling `progress(position, input length)` every
/// [`PROGRESS_EVERY`] packets (no allocation: the callback is borrowed).
pub fn write_packets_with_progress<S: Source, K: Sink, B: AsMut<[u8]>, P: SpillStore>(
    demuxer: &mut Demuxer<S>,
    muxer: &mut Muxer<K, B, P>,
    map: &[Option<usize>],
    start_us: i64,
    progress: Option<&(dyn Fn(u64, u64) + Send + Sync)>,
) -> mediaslice::Result<Option<mediaslice::Error>> {
    // A track declared with another time base than the input's (PCM to
    // MOV, see `prepare::pcm_in_frames`) has its times rescaled to it.
    let mut retime = [None; mediaslice::MAX_TRACKS];
    for (input, out) in map.iter().enumerate() {
        let (Some(out), Some(from)) = (*out, demuxer.tracks().get(input)) else {
            continue;
        };
        if let (Some(to), Some(slot)) = (muxer.tracks().get(out), retime.get_mut(out)) {
            if to.time_base != from.time_base {
                *slot = Some((from.time_base, to.time_base));
            }
        }
    }
    for_each_packet(demuxer, map, start_us, progress, &mut |p| match retime.get(p.track) {
        Some(&Some((from, to))) => muxer.write_packet(&Packet {
            pts: p.pts.map(|t| rescale_q(t, from, to)),
            dts: p.dts.map(|t| rescale_q(t, from, to)),
            duration: p
                .duration
                .and_then(|d| i64::try_from(d).ok())
                .and_then(|d| u64::try_from(rescale_q(d, from, to)).ok()),
            ..*p
        }),
        _ => muxer.write_packet(p),
    })
}

/// The packet loop of [`write_packets_with_progress`] with what is done
/// to each packet given: `each` gets every packet of a track `map` keeps,
/// under its output index and with its times moved by `start_us` (so
/// `package --ts` can cut its segments between two packets). Allocates
/// nothing.
///
/// Errors: `each`'s.
pub fn for_each_packet<S: Source>(
    demuxer: &mut Demuxer<S>,
    map: &[Option<usize>],
    start_us: i64,
    progress: Option<&(dyn Fn(u64, u64) + Send + Sync)>,
    each: &mut dyn FnMut(&Packet<'_>) -> mediaslice::Result<()>,
) -> mediaslice::Result<Option<mediaslice::Error>> {
    let start = start_us;
    let total = demuxer.source().len();
    let mut count = 0u32;
    let mut offsets = [0i64; mediaslice::MAX_TRACKS];
    for (o, t) in offsets.iter_mut().zip(demuxer.tracks()) {
        *o = rescale_q(start, Rational::new(1, 1_000_000), t.time_base);
    }
    let mut cut: Option<u64> = None;
    loop {
        let p = match demuxer.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => {
                return Ok(cut.map(|at| {
                    mediaslice::Error::truncated(at, &"the input ends inside its last packet, which is left out")
                }))
            }
            Err(e) => return Ok(Some(e)),
        };
        // A packet the input ends inside is left out: the output ends
        // with whole packets, and the report says so.
        if p.flags.truncated {
            cut = Some(p.pos.unwrap_or(0));
            continue;
        }
        count = count.wrapping_add(1);
        if let (Some(f), 0) = (progress, count % PROGRESS_EVERY) {
            f(p.pos.unwrap_or(0), total);
        }
        if let Some(&Some(track)) = map.get(p.track) {
            let off = offsets.get(p.track).copied().unwrap_or(0);
            let pts = p.pts.map(|t| t.saturating_sub(off));
            let dts = p.dts.map(|t| t.saturating_sub(off));
            each(&Packet { track, pts, dts, ..p })?;
        }
    }
}

/// Remuxes the input `open` opens into `sink`; gives back the finished
/// sink and the report.
///
/// Errors: see [`RemuxError`].
pub fn remux_into<S: Source, K: Sink>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    opts: &RemuxOptions,
    sink: K,
) -> Result<(K, RemuxReport), RemuxError> {
    remux_passes(open, open, opts, sink)
}

/// [`remux_into`] with the writing pass opened by `main` and the passes
/// before it (the tracks, their first packets, the tags) by `open`: a
/// live input ([`crate::live`]) lets go of its first bytes in between.
///
/// Errors: see [`RemuxError`].
pub fn remux_passes<S: Source, K: Sink>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    main: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    opts: &RemuxOptions,
    sink: K,
) -> Result<(K, RemuxReport), RemuxError> {
    let format = opts.format.unwrap_or(RemuxFormat::Matroska);
    let mut tracks = prepare_tracks(open).map_err(RemuxError::Input)?;
    select_streams(&mut tracks, opts.streams.as_deref())?;
    if format == RemuxFormat::Mov {
        prepare::pcm_in_frames(&mut tracks);
    }
    let mut report = RemuxReport::default();
    if format.needs_seek() && !sink.can_patch() {
        return Err(RemuxError::NeedsSeek(format));
    }
    // The MP4 muxer keeps its sample index (about 4 bytes a sample) in its
    // scratch, the fragmented one its fragment's records (and, on a stream,
    // its payload); zeroed memory that is never touched costs no RSS.
    let index = opts.index_bytes.max(MIN_INDEX_BYTES);
    let (mux_format, scratch) = if format.index_scratch() {
        (format.mux_format(), vec![0u8; index])
    } else {
        crate::fragmented::mux_setup(format.mux_format(), opts.fragment_ms, opts.sidx, index)
    };
    let ahead = if opts.faststart && format.progressive() {
        Some(index_size_ahead(open, opts, format, &tracks)?)
    } else {
        None
    };
    // Past its memory bound the index goes to an unnamed temporary file.
    let mut spill = spill_store(opts);
    let mut muxer = Muxer::with_scratch(sink, mux_format, scratch)
        .map_err(RemuxError::Output)?
        .with_index_spill(&mut spill, index_memory(opts));
    if let Some(bytes) = ahead {
        muxer.reserve_index(bytes).map_err(RemuxError::Output)?;
    }
    let map = declare_tracks(&mut muxer, &tracks, &mut report)?;
    add_tags_and_chapters(&mut muxer, open, format, &mut report);
    let start = start_of(&tracks, opts.start_of_all_streams);
    // WebM has no Attachments (WebM container guidelines).
    let pictures = if format == RemuxFormat::Matroska {
        carry::input_pictures(open, &tracks)
    } else {
        Vec::new()
    };
    let files: Vec<mediaslice::mux::attachments::Attachment<'_>> = pictures
        .iter()
        .map(|p| mediaslice::mux::attachments::Attachment {
            name: &p.name,
            mime: p.mime,
            description: "",
            data: &p.data,
        })
        .collect();
    report.attachments = files.len();
    // A picture written as an attachment is not left out.
    report.skipped.retain(|(i, _)| !pictures.iter().any(|p| p.track == *i));
    muxer
        .write_header_with_attachments(&files)
        .map_err(RemuxError::Output)?;
    let mut demuxer = main().map_err(RemuxError::Input)?;
    let progress = opts.progress.as_deref();
    report.stopped =
        write_packets_with_progress(&mut demuxer, &mut muxer, &map, start, progress).map_err(RemuxError::Output)?;
    report.packets = muxer.packets();
    report.fragments = muxer.fragment_stats();
    let sink = muxer.finish().map_err(RemuxError::Output)?;
    report.bytes = sink.position();
    report.index_spilled = spill.len();
    Ok((sink, report))
}

/// The input's file-level tags and its chapters into `muxer`, counted in
/// `report`: Matroska Chapters; MP4 and MOV a Nero `chpl` (not the
/// fragmented and hybrid forms, whose `moov` goes out first). Both passes
/// of `--faststart` add them, so the first one sizes the `moov` the second
/// writes.
fn add_tags_and_chapters<S: Source, K: Sink, B: AsMut<[u8]>, P: mediaslice::sink::SpillStore>(
    muxer: &mut Muxer<K, B, P>,
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    format: RemuxFormat,
    report: &mut RemuxReport,
) {
    for (name, value) in input_tags(open) {
        if muxer.add_tag(&name, &value).is_ok() {
            report.tags += 1;
        } else {
            report.tags_dropped += 1;
        }
    }
    if matches!(
        format,
        RemuxFormat::Matroska | RemuxFormat::WebM | RemuxFormat::Mp4 | RemuxFormat::Mov
    ) {
        for c in carry::input_chapters(open) {
            match muxer.add_chapter(&c.as_mux()) {
                Ok(()) => report.chapters += 1,
                Err(_) => report.chapters_dropped += 1,
            }
        }
    }
}

/// The file-level text tags of the input, as (name, value): the name
/// ffprobe gives a tag (`title`, `artist`, `track`, ...) or the
/// container's own text key; integer values as decimal text. Pictures and
/// other binary values, track-level tags and tags with a four-character key
/// and no common name are not carried; a tag walk that fails keeps the
/// tags before it.
pub fn input_tags<S: Source>(open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(mut d) = open() else { return out };
    while let Ok(Some(t)) = d.next_tag() {
        if t.scope != TagScope::Format {
            continue;
        }
        let name = match (t.name, t.key) {
            (Some(n), _) => n.to_owned(),
            (None, TagKey::Text(k)) if !k.is_empty() => k.to_owned(),
            _ => continue,
        };
        let value = match t.value {
            TagValue::Text(v) => v.to_owned(),
            TagValue::Int(i) => i.to_string(),
            TagValue::Bytes(_) => continue,
        };
        out.push((name, value));
    }
    out
}

/// The first pass of `--faststart`: every packet through the muxer into a
/// [`NullSink`] (nothing written, the payload only borrowed), for the size
/// of the index placed ahead of the media.
fn index_size_ahead<S: Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    opts: &RemuxOptions,
    format: RemuxFormat,
    tracks: &[PreparedTrack],
) -> Result<u64, RemuxError> {
    let scratch = vec![0u8; opts.index_bytes.max(MIN_INDEX_BYTES)];
    let mut spill = spill_store(opts);
    let mut muxer = Muxer::with_scratch(NullSink::new(), format.mux_format(), scratch)
        .map_err(RemuxError::Output)?
        .with_index_spill(&mut spill, index_memory(opts));
    let mut report = RemuxReport::default();
    let map = declare_tracks(&mut muxer, tracks, &mut report)?;
    add_tags_and_chapters(&mut muxer, open, format, &mut report);
    let mut demuxer = open().map_err(RemuxError::Input)?;
    write_packets(
        &mut demuxer,
        &mut muxer,
        &map,
        start_of(tracks, opts.start_of_all_streams),
    )
    .map_err(RemuxError::Output)?;
    let size = muxer.index_size_ahead().map_err(RemuxError::Output)?;
    Ok(size.unwrap_or(0))
}

/// What `remux` is asked to do beside its input and output.
#[derive(Clone, Default)]
pub struct RemuxOptions {
    /// The target; by default the one the output's extension names
    /// (Matroska for standard output).
    pub format: Option<RemuxFormat>,
    /// The input streams to write (`--streams 0,2`); all by default.
    pub streams: Option<Vec<usize>>,
    /// Write the form a stream gets even to a file (`--live`: Matroska
    /// unknown sizes, no patching), as a recorder that may be cut off does.
    pub live: bool,
    /// Bytes for the MP4 muxer's sample index (at least
    /// [`MIN_INDEX_BYTES`]); [`remux_file`] gives half the input's size.
    /// A sample's record takes 1 to 8 bytes on real inputs (31 at most), so
    /// only an input of packets of a few bytes each could fill it: the
    /// remux then fails with `CapacityExceeded` and leaves no output.
    /// Zeroed memory that is never written is never resident.
    pub index_bytes: usize,
    /// MP4/MOV: `moov` before `mdat` (`--faststart`), so that playback can
    /// start before the whole file has arrived. A first pass over the
    /// input sizes it; the payload is still written once.
    pub faststart: bool,
    /// Called with (input position, input length) every
    /// [`PROGRESS_EVERY`] packets of the writing pass.
    pub progress: Option<Progress>,
    /// Least fragment duration for fragmented MP4 (`--fragment-ms`).
    pub fragment_ms: Option<u32>,
    /// Fragmented MP4: a `styp` and a `sidx` before each fragment's `moof`
    /// (`--sidx`), so that each fragment is an indexed DASH media segment
    /// ([`mediaslice::Fragmenting::sidx`]).
    pub sidx: bool,
    /// MP4, MOV, hybrid MP4: most bytes of the sample index kept in memory
    /// (`--index-memory`); past it, full blocks of it go to a temporary
    /// file and are read back at the end (the output is the same). 0:
    /// [`DEFAULT_INDEX_MEMORY`].
    pub index_memory: usize,
    /// Where that temporary file is made; the system's temporary folder
    /// when `None` ([`remux_file`] gives the output's folder).
    pub spill_dir: Option<std::path::PathBuf>,
    /// With `streams`: move the times by the start of every stream the
    /// input has (that the target could carry), not only of those written,
    /// so that outputs of different streams of one input keep their
    /// relative timing (DASH: one Adaptation Set per stream). Off, the
    /// written streams start at 0, as `ffmpeg -map 0:a -c copy` does.
    pub start_of_all_streams: bool,
    /// A file output hands the payloads that go to it unchanged to the
    /// kernel instead of writing them itself (`--kernel-copy`; see
    /// [`crate::FileSink::set_input`]). Off by default: on ext4 it costs
    /// more time than it saves (`docs/bench/remux.md`, "Kernel copy").
    pub kernel_copy: bool,
    /// The least payload handed to the kernel, in bytes; 0:
    /// [`crate::DEFAULT_KERNEL_COPY_MIN`].
    pub kernel_copy_min: usize,
    /// How [`remux_file`] reads its input (`--source`); `kernel_copy`
    /// reads it through the map whatever this says.
    pub read: InputRead,
}

/// The default of [`RemuxOptions::index_memory`]: 1 MiB, the index of
/// about 260,000 samples (2.3 hours of 30 fps video with AAC) or 65,536
/// AVI chunks; past it the index spills (a 4.5 GiB OpenDML repair: peak
/// RSS 24.9 MiB with 16 MiB, 9.5 MiB with 1 MiB, and faster).
pub const DEFAULT_INDEX_MEMORY: usize = 1 << 20;

/// The sample index's memory bound `opts` asks for.
fn index_memory(opts: &RemuxOptions) -> usize {
    match opts.index_memory {
        0 => DEFAULT_INDEX_MEMORY,
        n => n,
    }
}

/// The spill store of a remux: a temporary file, made only if the index
/// passes its bound, and unnamed as soon as it is made.
fn spill_store(opts: &RemuxOptions) -> crate::TempSpill {
    let dir = opts.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
    crate::TempSpill::new(dir, "mediaslice-remux")
}

/// A progress callback: (input position, input length) in bytes.
pub type Progress = std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Packets between two progress calls.
pub const PROGRESS_EVERY: u32 = 1024;

impl fmt::Debug for RemuxOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemuxOptions")
            .field("format", &self.format)
            .field("streams", &self.streams)
            .field("live", &self.live)
            .field("index_bytes", &self.index_bytes)
            .field("faststart", &self.faststart)
            .field("fragment_ms", &self.fragment_ms)
            .field("sidx", &self.sidx)
            .field("index_memory", &self.index_memory)
            .field("spill_dir", &self.spill_dir)
            .field("start_of_all_streams", &self.start_of_all_streams)
            .field("kernel_copy", &self.kernel_copy)
            .field("kernel_copy_min", &self.kernel_copy_min)
            .field("read", &self.read)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The least sample-index scratch the MP4 target gets: 1 MiB, about
/// 250,000 samples.
pub const MIN_INDEX_BYTES: usize = 1 << 20;

/// A demuxer over `input` through the source `S` (a map read
/// sequentially, positioned reads, the streaming reader), the format
/// detected with `ext` as the hint: what remux, package and repair open the
/// input with, once per pass.
pub(crate) fn open_input<S: InputSource>(input: &Path, ext: Option<&str>) -> mediaslice::Result<Demuxer<S>> {
    S::open_demuxer(input, ext)
}

/// A sink that says it cannot patch, over one that can: the muxer writes
/// its stream form (`--live`).
struct NoPatch<K>(K);

impl<K: Sink> Sink for NoPatch<K> {
    fn position(&self) -> u64 {
        self.0.position()
    }
    fn write_all(&mut self, data: &[u8]) -> mediaslice::Result<()> {
        self.0.write_all(data)
    }
    fn write_vectored(&mut self, parts: &[&[u8]]) -> mediaslice::Result<()> {
        self.0.write_vectored(parts)
    }
    fn can_patch(&self) -> bool {
        false
    }
    fn patch_at(&mut self, pos: u64, _data: &[u8]) -> mediaslice::Result<()> {
        Err(mediaslice::sink::cannot_patch(pos))
    }
    fn flush(&mut self) -> mediaslice::Result<()> {
        self.0.flush()
    }
    fn stats(&self) -> mediaslice::SinkStats {
        self.0.stats()
    }
}

/// `mediaslice remux IN OUT [--format F] [--streams 0,2] [--live]`: remuxes the
/// file `input` into `output` (`-`: standard output, live mode), in the
/// format `opts` names or the one `output`'s extension names.
///
/// Errors: see [`RemuxError`]; on any error no file is left under
/// `output`'s name (an existing one is untouched) and `input` is never
/// written.
pub fn remux_file(input: &Path, output: &Path, opts: &RemuxOptions) -> Result<RemuxReport, RemuxError> {
    let to_stdout = output.as_os_str() == "-";
    let format = opts
        .format
        .or_else(|| (!to_stdout).then(|| RemuxFormat::from_path(output)).flatten())
        .or(to_stdout.then_some(RemuxFormat::Matroska))
        .ok_or(RemuxError::NoFormat)?;
    if format.needs_seek() && (to_stdout || opts.live) {
        return Err(RemuxError::NeedsSeek(format));
    }
    let input_len = std::fs::metadata(input).map_err(RemuxError::Io)?.len();
    let opts = RemuxOptions {
        format: Some(format),
        index_bytes: usize::try_from(input_len / 2)
            .unwrap_or(usize::MAX)
            .clamp(MIN_INDEX_BYTES, isize::MAX as usize / 2),
        spill_dir: opts.spill_dir.clone().or_else(|| {
            let dir = output.parent().filter(|d| !d.as_os_str().is_empty());
            Some(dir.unwrap_or(Path::new(".")).to_path_buf())
        }),
        ..opts.clone()
    };
    // The kernel copy knows a payload by its address in the input's map.
    let read = if opts.kernel_copy { InputRead::Mmap } else { opts.read };
    with_input!(read, S => remux_path::<S>(input, output, &opts, to_stdout))
}

/// [`remux_file`] through the source `S`, with `opts` completed.
fn remux_path<S: InputSource>(
    input: &Path,
    output: &Path,
    opts: &RemuxOptions,
    to_stdout: bool,
) -> Result<RemuxReport, RemuxError> {
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let open = || open_input::<S>(input, ext.as_deref());
    // A clear I/O message when the input cannot be opened at all.
    let first = S::open_path(input).map_err(RemuxError::Io)?;
    if to_stdout {
        let (_, report) = remux_into(&open, opts, StdoutSink::stdout())?;
        return Ok(report);
    }
    let mut sink = FileSink::create(output).map_err(RemuxError::Io)?;
    if opts.kernel_copy {
        if let Some(mapped) = first.mapped_input().map_err(RemuxError::Io)? {
            sink.set_input(mapped, opts.kernel_copy_min);
        }
    }
    // The writing pass reads that source (a map whose addresses the sink
    // knows).
    let first = std::cell::Cell::new(Some(first));
    let main = || match first.take() {
        Some(src) => src.demuxer(ext.as_deref()),
        None => open(),
    };
    let (sink, mut report) = if opts.live {
        let (NoPatch(sink), report) = remux_passes(&open, &main, opts, NoPatch(sink))?;
        (sink, report)
    } else {
        remux_passes(&open, &main, opts, sink)?
    };
    report.kernel_copy = sink.kernel_copy_stats();
    sink.commit().map_err(RemuxError::Io)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_names_and_paths() {
        assert_eq!(RemuxFormat::from_name("MKV"), Some(RemuxFormat::Matroska));
        assert_eq!(RemuxFormat::from_name("webm"), Some(RemuxFormat::WebM));
        assert_eq!(RemuxFormat::from_name("AVI"), Some(RemuxFormat::Avi));
        assert_eq!(RemuxFormat::from_path(Path::new("o.avi")), Some(RemuxFormat::Avi));
        assert_eq!(RemuxFormat::from_name("MpegTS"), Some(RemuxFormat::Ts));
        for ext in ["ts", "m2ts", "MTS"] {
            let p = format!("o.{ext}");
            assert_eq!(RemuxFormat::from_path(Path::new(&p)), Some(RemuxFormat::Ts), "{p}");
        }
        assert!(!RemuxFormat::Ts.needs_seek());
        assert_eq!(RemuxFormat::from_name("flv"), None);
        assert_eq!(
            RemuxFormat::from_path(Path::new("a/b.Mka")),
            Some(RemuxFormat::Matroska)
        );
        assert_eq!(RemuxFormat::from_path(Path::new("x")), None);
    }
}
