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

use crate::{FileSink, MmapSource, StdoutSink};
use mediaslice::types::rescale_q;
use mediaslice::{
    Codec, Demuxer, MuxFormat, Muxer, NullSink, Packet, Rational, Sink, Source, SpillStore, TagKey, TagScope, TagValue,
    TrackSpec,
};
use std::fmt;
use std::path::Path;

pub mod carry;

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

/// An input track prepared for the muxer: its facts and the configuration
/// to give it, or why it is left out.
pub struct PreparedTrack {
    /// The input's track.
    pub track: mediaslice::Track,
    /// The configuration for [`TrackSpec::with_config`].
    pub config: Vec<u8>,
    /// `Some(reason)` when the track is not written.
    pub skip: Option<&'static str>,
    /// The time of its first packet (pts, or dts), in microseconds.
    pub first_us: Option<i64>,
}

/// The time `remux` moves to 0, in microseconds: the least first-packet
/// time of the tracks written, as ffmpeg's `start_time`, when it is
/// positive (an MPEG-TS clock, an FLV that starts late); otherwise 0. A
/// negative start (AAC priming before an MP4 edit list) is left to the
/// Matroska muxer, which moves its first Block time to 0 in milliseconds
/// as ffmpeg's muxer does (ffmpeg's `start_time` does not count the
/// priming, so ffmpeg itself moves nothing there).
pub fn start_us(tracks: &[PreparedTrack]) -> i64 {
    start_of(tracks, false)
}

/// [`start_us`]; with `all_selected`, also over the tracks left out by
/// `--streams` alone ([`RemuxOptions::start_of_all_streams`]).
fn start_of(tracks: &[PreparedTrack], all_selected: bool) -> i64 {
    tracks
        .iter()
        .filter(|t| t.skip.is_none() || all_selected && t.skip == Some(NOT_SELECTED))
        .filter_map(|t| t.first_us)
        .min()
        .unwrap_or(0)
        .max(0)
}

/// Why an AAC track with neither an AudioSpecificConfig nor ADTS packets
/// is refused rather than given a made-up config (docs/write-side.md).
const AAC_WITHOUT_CONFIG: &str = "AAC without an AudioSpecificConfig (an esds with no DecoderSpecificInfo) and with raw, not ADTS, packets: its audioObjectType is in neither, so no config can be written (ISO/IEC 14496-3 1.6.2.1); ffprobe shows profile -1 for it and ffmpeg's Matroska muxer refuses it too";

/// Most packets read looking for the first packet of a track whose
/// configuration is in the stream.
const FIRST_PACKET_SEARCH: usize = 10_000;

/// The parameter sets (H.264 SPS/PPS, H.265 VPS/SPS/PPS) among the NAL
/// units of an Annex B access unit, each with a 4-byte start code.
fn annexb_parameter_sets(codec: Codec, au: &[u8]) -> Vec<u8> {
    use mediaslice::codec::convert::to_length::AnnexBNalUnits;
    let mut out = Vec::new();
    for nal in AnnexBNalUnits::new(au) {
        let ps = match (codec, nal.first()) {
            (Codec::H264, Some(h)) => matches!(h & 0x1F, 7 | 8),
            (Codec::Hevc, Some(h)) => matches!((h >> 1) & 0x3F, 32..=34),
            _ => false,
        };
        if ps {
            out.extend_from_slice(&[0, 0, 0, 1]);
            out.extend_from_slice(nal);
        }
    }
    out
}

/// The picture size of an MPEG-1/2 video track from the sequence header in
/// its first packet (ISO/IEC 13818-2 §6.2.2.1), for inputs whose container
/// gives none (MPEG-TS, MPEG-PS).
fn mpeg_video_size(codec: Codec, data: &[u8]) -> Option<(u32, u32)> {
    if !matches!(codec, Codec::Mpeg1Video | Codec::Mpeg2Video) {
        return None;
    }
    let at = data.windows(4).position(|w| w == [0, 0, 1, 0xB3])?;
    let h = mediaslice::codec::mpegvideo::SequenceHeader::parse(data.get(at + 4..)?)?;
    (h.width > 0 && h.height > 0).then_some((h.width, h.height))
}

/// Sample rate and channels of an audio track from the frame header of its
/// first packet (ADTS, MPEG audio, AC-3/E-AC-3), for inputs whose container
/// gives none (MPEG-TS, MPEG-PS): Matroska's SamplingFrequency defaults to
/// 8000 Hz and Channels to 1 when absent (RFC 9559 §5.1.4.1.29).
fn audio_params(codec: Codec, data: &[u8]) -> Option<(u32, u16)> {
    use mediaslice::codec::{ac3::Ac3Header, adts::AdtsHeader, mpa::MpaHeader};
    let (rate, channels) = match codec {
        Codec::Aac => {
            let h = AdtsHeader::parse(data)?;
            let ch = match h.channel_config {
                7 => 8,
                c => u16::from(c),
            };
            (h.sample_rate, ch)
        }
        Codec::Mp1 | Codec::Mp2 | Codec::Mp3 => {
            let h = MpaHeader::parse_bytes(data)?;
            (h.sample_rate, u16::from(h.channels))
        }
        Codec::Ac3 | Codec::Eac3 => {
            let h = Ac3Header::parse(data)?;
            (h.sample_rate, h.channels)
        }
        _ => return None,
    };
    (rate > 0 && channels > 0).then_some((rate, channels))
}

/// The Sequence Header OBU among the OBUs of an AV1 Temporal Unit (empty
/// when there is none), from which the muxer builds `av1C`.
fn av1_sequence_header(tu: &[u8]) -> Vec<u8> {
    use mediaslice::codec::av1::ObuHeader;
    let mut rest = tu;
    while let Some(h) = ObuHeader::parse(rest) {
        let Some(end) = h.size.and_then(|s| usize::try_from(s).ok()).map(|s| s + h.header_len) else {
            break;
        };
        if h.obu_type == 1 {
            return rest.get(..end).map(<[u8]>::to_vec).unwrap_or_default();
        }
        rest = rest.get(end..).unwrap_or(&[]);
    }
    Vec::new()
}

/// Xiph lacing of header packets (RFC 9559 §10.4.3 / the Matroska codec
/// mapping of Vorbis and Theora): count - 1, the sizes of all but the last
/// in 255-runs, then the packets.
fn xiph_lace(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![packets.len().saturating_sub(1) as u8];
    for p in packets.iter().take(packets.len().saturating_sub(1)) {
        let mut n = p.len();
        while n >= 255 {
            out.push(255);
            n -= 255;
        }
        out.push(n as u8);
    }
    for p in packets {
        out.extend_from_slice(p);
    }
    out
}

/// Whether track `t` with configuration `config` needs its first packet to
/// complete the configuration.
fn needs_first_packet(t: &mediaslice::Track, config: &[u8]) -> bool {
    match t.codec {
        Codec::H264 | Codec::Hevc => config.first() != Some(&1),
        Codec::Aac | Codec::Av1 => config.is_empty(),
        _ => false,
    }
}

/// The tracks of the input `open` opens, with their configurations
/// completed (see the module notes). Opens the input a second time and
/// reads packets until each track that needs one has its first (at most
/// `FIRST_PACKET_SEARCH`).
///
/// Errors: the demuxer's.
pub fn prepare_tracks<S: Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
) -> mediaslice::Result<Vec<PreparedTrack>> {
    let mut d = open()?;
    let mut out = Vec::new();
    for i in 0..d.tracks().len() {
        let track = d.tracks().get(i).cloned().unwrap_or_default();
        let mut config = d.codec_config(i)?.to_vec();
        if matches!(track.codec, Codec::Vorbis | Codec::Theora) && config.first() != Some(&2) {
            let mut headers = Vec::new();
            for h in 0..3 {
                if let Some(p) = d.header_packet(i, h)? {
                    headers.push(p.to_vec());
                }
            }
            if headers.len() == 3 {
                config = xiph_lace(&headers);
            }
        }
        let skip = if track.attached_picture {
            Some("an attached picture (cover art); Matroska stores it as an attachment, this target does not")
        } else if track.codec == Codec::BinData {
            Some("binary data (bin_data): a QuickTime chapter track, whose titles go out as chapters, or data no target carries")
        } else {
            None
        };
        out.push(PreparedTrack {
            track,
            config,
            skip,
            first_us: None,
        });
    }
    // Every track's first packet: its time, and the configuration of the
    // tracks that keep it in the stream.
    let mut pending: Vec<usize> = (0..out.len()).collect();
    let mut d = open()?;
    let mut seen = 0usize;
    while let Ok(Some(p)) = d.next_packet() {
        seen += 1;
        if let Some(t) = out
            .get_mut(p.track)
            .filter(|t| t.first_us.is_none() && !p.flags.discard)
        {
            // ffprobe's start_time: packets to be discarded (before an
            // edit list's start) do not count.
            t.first_us = p
                .pts
                .or(p.dts)
                .map(|ts| rescale_q(ts, t.track.time_base, Rational::new(1, 1_000_000)));
        }
        if let Some(at) = pending.iter().position(|&i| i == p.track) {
            if let Some(t) = out.get_mut(p.track) {
                t.first_us = t.first_us.or(p
                    .pts
                    .or(p.dts)
                    .map(|ts| rescale_q(ts, t.track.time_base, Rational::new(1, 1_000_000))));
                if t.track.kind == mediaslice::TrackKind::Video && t.track.width == 0 {
                    if let Some((w, h)) = mpeg_video_size(t.track.codec, p.data) {
                        (t.track.width, t.track.height) = (w, h);
                    }
                }
                if t.track.kind == mediaslice::TrackKind::Audio && t.track.sample_rate == 0 {
                    if let Some((rate, channels)) = audio_params(t.track.codec, p.data) {
                        (t.track.sample_rate, t.track.channels) = (rate, channels);
                    }
                }
                if needs_first_packet(&t.track, &t.config) {
                    t.config = match t.track.codec {
                        // Only an ADTS header: raw AAC (an MP4 whose esds
                        // has no DecoderSpecificInfo) stays without one.
                        Codec::Aac => p
                            .data
                            .get(..7)
                            .filter(|h| mediaslice::codec::adts::AdtsHeader::parse(h).is_some())
                            .map(<[u8]>::to_vec)
                            .unwrap_or_default(),
                        Codec::Av1 => av1_sequence_header(p.data),
                        c => annexb_parameter_sets(c, p.data),
                    };
                }
            }
            pending.swap_remove(at);
        }
        if pending.is_empty() || seen >= FIRST_PACKET_SEARCH {
            break;
        }
    }
    pending.retain(|&i| out.get(i).is_some_and(|t| needs_first_packet(&t.track, &t.config)));
    for i in pending {
        if let Some(t) = out.get_mut(i) {
            t.skip = t.skip.or(Some(
                "no packet within the first 10,000 to take its codec configuration from",
            ));
        }
    }
    Ok(out)
}

/// Why a track left out by [`select_streams`] is.
const NOT_SELECTED: &str = "not among --streams";

/// Leaves out every track whose index is not in `streams` (`--streams
/// 0,2`); `None` keeps them all.
///
/// Errors: `InvalidArgument` naming a stream the input does not have.
pub fn select_streams(tracks: &mut [PreparedTrack], streams: Option<&[usize]>) -> Result<(), RemuxError> {
    let Some(keep) = streams else {
        return Ok(());
    };
    if keep.iter().any(|&i| i >= tracks.len()) {
        return Err(RemuxError::Output(mediaslice::Error::new(
            mediaslice::ErrorKind::InvalidArgument,
            0,
            &"--streams names a stream the input does not have",
        )));
    }
    for (i, t) in tracks.iter_mut().enumerate() {
        if !keep.contains(&i) {
            t.skip = t.skip.or(Some(NOT_SELECTED));
        }
    }
    Ok(())
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
    for_each_packet(demuxer, map, start_us, progress, &mut |p| muxer.write_packet(p))
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
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The least sample-index scratch the MP4 target gets: 1 MiB, about
/// 250,000 samples.
pub const MIN_INDEX_BYTES: usize = 1 << 20;

/// A demuxer over `input` mapped (read sequentially), the format detected
/// with `ext` as the hint: what remux and repair open the input with, once
/// per pass.
pub(crate) fn open_mapped(input: &Path, ext: Option<&str>) -> mediaslice::Result<Demuxer<MmapSource>> {
    let src = MmapSource::open(input)
        .map_err(|_| mediaslice::Error::new(mediaslice::ErrorKind::InvalidArgument, 0, &"cannot open the input"))?;
    src.advise_sequential();
    Demuxer::open(src, ext)
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
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    // Mapped once; each demuxer gets its own view of the same pages.
    let open = || open_mapped(input, ext.as_deref());
    // A clear I/O message when the input cannot be opened at all.
    let first = MmapSource::open(input).map_err(RemuxError::Io)?;
    if to_stdout {
        let (_, report) = remux_into(&open, &opts, StdoutSink::stdout())?;
        return Ok(report);
    }
    let mut sink = FileSink::create(output).map_err(RemuxError::Io)?;
    if opts.kernel_copy {
        if let Some(mapped) = first.mapped_input().map_err(RemuxError::Io)? {
            sink.set_input(mapped, opts.kernel_copy_min);
        }
    }
    // The writing pass reads that map, whose addresses the sink knows.
    let first = std::cell::Cell::new(Some(first));
    let main = || match first.take() {
        Some(src) => {
            src.advise_sequential();
            Demuxer::open(src, ext.as_deref())
        }
        None => open(),
    };
    let (sink, mut report) = if opts.live {
        let (NoPatch(sink), report) = remux_passes(&open, &main, &opts, NoPatch(sink))?;
        (sink, report)
    } else {
        remux_passes(&open, &main, &opts, sink)?
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
        assert_eq!(xiph_lace(&[vec![1; 300], vec![2; 3], vec![3]])[..4], [2, 255, 45, 3]);
    }
}
