//! `package --live`: HLS from an input that is still arriving (a pipe, a
//! growing file; see [`crate::live`]). Each segment is renamed into place
//! as soon as its `mdat` is complete (MPEG-TS segments, `--ts`: once the
//! next one starts, [`super::ts`]), then `media.m3u8` is rewritten
//! (temporary name and rename, so a player never reads half a playlist)
//! with its `#EXTINF`; `#EXT-X-ENDLIST` only once the input has ended.
//! Without a window the playlist is an `EVENT` playlist (RFC 8216
//! §4.3.3.5) that keeps every segment; with `--window N` it lists the last
//! N, `#EXT-X-MEDIA-SEQUENCE` counts those that left, and a segment's file
//! is deleted N segments after it left the playlist (§6.2.2: a removed
//! segment stays available for about a playlist's duration).
//!
//! Memory: with a window, the N segments listed; without one, the
//! segments go to a [`SegmentLog`] whose records pass to a temporary file
//! beside the segments past the first 256, and each rewrite of the
//! playlist reads them back into a buffered file write, so nothing grows
//! with the length of the input (the `EVENT` playlist itself does, on
//! disk: about 40 bytes a segment). With `--dash`, the same for each
//! track's records of the MPD ([`LiveDash`]).

use super::live_dash::LiveDash;
use super::{
    child, children, codecs_of, logged_playlist, master_playlist, media_playlist, resolution, split_passes, Form,
    PackageReport, Segment, SegmentLog,
};
use crate::live::{LiveInput, LiveSource};
use crate::remux::RemuxError;
use mediaslice::{Demuxer, FormatKind, Limits};
use std::collections::VecDeque;
use std::io::{BufWriter, Error, ErrorKind, Write};
use std::path::{Path, PathBuf};

/// The live playlist: the segments listed and the running figures.
pub(crate) struct LiveHls {
    dir: PathBuf,
    window: Option<usize>,
    /// With a window: the segments listed.
    segments: VecDeque<Segment>,
    /// Without one (`EVENT`): every segment, spilled past the first few;
    /// made with the first segment, when the form is known.
    event: Option<SegmentLog>,
    /// Media sequence number of the first segment listed.
    sequence: u64,
    target: u64,
    codecs: String,
    resolution: Option<(u16, u16)>,
    peak: u64,
    bytes: u64,
    seconds: f64,
    /// The peak the master playlist states, once written.
    master_peak: Option<u64>,
    /// With `--dash`: the dynamic MPD's state.
    dash: Option<LiveDash>,
    /// CMAF or MPEG-TS segments.
    form: Form,
}

/// Writes `data` to `path` by a temporary name and a rename.
pub(super) fn write_atomic(path: &Path, data: impl AsRef<[u8]>) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(data.as_ref()))
}

/// Writes what `fill` writes (through a buffer) to `path` by a temporary
/// name and a rename.
pub(super) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let mut w = BufWriter::new(std::fs::File::create(&tmp)?);
    fill(&mut w)?;
    w.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    std::fs::rename(&tmp, path)
}

impl LiveHls {
    pub(crate) fn new(dir: &Path, window: Option<usize>, segment_ms: u32) -> Self {
        LiveHls {
            dir: dir.to_path_buf(),
            window: window.map(|w| w.max(1)),
            segments: VecDeque::new(),
            event: None,
            sequence: 0,
            target: u64::from(segment_ms).div_ceil(1000).max(1),
            codecs: String::new(),
            resolution: None,
            peak: 0,
            bytes: 0,
            seconds: 0.0,
            master_peak: None,
            dash: None,
            form: Form::CMAF,
        }
    }

    /// Also writes `manifest.mpd` (see [`LiveDash`]).
    pub(crate) fn with_dash(mut self) -> Self {
        self.dash = Some(LiveDash::new(self.window.is_some()));
        self
    }

    /// The init segment is known: the variant's `CODECS` and size.
    ///
    /// Errors: `Unsupported` for a codec with no `CODECS` string here.
    pub(super) fn start(&mut self, init: &[u8]) -> std::io::Result<()> {
        let codecs = codecs_of(init).map_err(|e| Error::new(ErrorKind::Unsupported, e.to_string()))?;
        self.begin(codecs.join(","), resolution(init), Form::CMAF);
        if let Some(d) = self.dash.as_mut() {
            d.start(&self.dir, init)?;
        }
        Ok(())
    }

    /// The variant is known: its `CODECS`, its picture size and the form
    /// of its segments (CMAF ones begin at [`LiveHls::start`], MPEG-TS
    /// ones with their first segment).
    pub(super) fn begin(&mut self, codecs: String, resolution: Option<(u16, u16)>, form: Form) {
        self.codecs = codecs;
        self.resolution = resolution;
        self.form = form;
    }

    /// A complete segment: listed, the window moved, the playlists
    /// rewritten.
    pub(super) fn push(&mut self, seg: Segment) -> std::io::Result<()> {
        if let Some(d) = self.dash.as_mut() {
            d.push(&self.dir, &seg, self.sequence + self.segments.len() as u64)?;
        }
        let rate = (seg.bytes as f64 * 8.0 / seg.seconds.max(0.001)).ceil() as u64;
        self.peak = self.peak.max(rate);
        self.bytes += seg.bytes;
        self.seconds += seg.seconds;
        self.target = self.target.max(seg.seconds.ceil() as u64);
        if self.window.is_none() {
            let log = self
                .event
                .get_or_insert_with(|| SegmentLog::spilled(&self.dir, self.form.ext));
            log.push(log.len() as u64 + 1, &seg)?;
            return self.write(false);
        }
        self.segments.push_back(seg);
        if let Some(w) = self.window {
            while self.segments.len() > w {
                self.segments.pop_front();
                if let Some(gone) = self.sequence.checked_sub(w as u64) {
                    // Media sequence number `gone` is segment file `gone + 1`.
                    let _ = std::fs::remove_file(self.dir.join(self.form.segment_name(gone + 1)));
                    if let Some(d) = self.dash.as_mut() {
                        d.drop_through(&self.dir, gone);
                    }
                }
                self.sequence += 1;
            }
        }
        self.write(false)
    }

    /// The input has ended: `#EXT-X-ENDLIST`, and the final rates; the
    /// `report` of the run completed with the segments still listed, the
    /// `CODECS` and the media sequence number.
    ///
    /// Errors: writing the playlists.
    pub(super) fn finish(mut self, report: PackageReport) -> std::io::Result<PackageReport> {
        self.master_peak = None;
        self.write(true)?;
        Ok(PackageReport {
            segments: match self.event.take() {
                Some(log) => log,
                None => {
                    let mut log = SegmentLog::held(self.form.ext);
                    for (n, s) in (self.sequence + 1..).zip(&self.segments) {
                        log.push(n, s)?;
                    }
                    log
                }
            },
            codecs: self.codecs,
            media_sequence: self.sequence,
            ..report
        })
    }

    fn write(&mut self, end: bool) -> std::io::Result<()> {
        let path = self.dir.join("media.m3u8");
        match self.event.as_ref() {
            Some(log) => write_atomic_with(&path, |w| logged_playlist(w, log, self.target, "EVENT", end, self.form))?,
            None => {
                let media = media_playlist(self.segments.iter(), self.target, self.sequence, end, self.form);
                write_atomic(&path, &media)?;
            }
        }
        if self.master_peak != Some(self.peak) {
            let average = (self.bytes as f64 * 8.0 / self.seconds.max(0.001)).ceil() as u64;
            let master = master_playlist(self.peak, average, &self.codecs, self.resolution, self.form);
            write_atomic(&self.dir.join("master.m3u8"), &master)?;
            self.master_peak = Some(self.peak);
        }
        if let Some(d) = self.dash.as_mut() {
            let depth = self.window.map(|w| w as f64 * self.target as f64);
            let update = self.target as f64;
            write_atomic_with(&self.dir.join("manifest.mpd"), |w| d.write_mpd(w, update, depth, end))?;
        }
        Ok(())
    }
}

/// Why a live input is refused: the formats that need the end of the
/// file, or more than the first bytes, when they open.
fn refuse(kind: Option<FormatKind>) -> RemuxError {
    let what = kind.map_or("not a container this tool reads", |k| k.name());
    let why = match kind {
        Some(FormatKind::Mp4) => {
            "a progressive MP4/MOV lists its samples in its moov (often at the end of the file), \
             which an input still being written does not have; a fragmented MP4 (a moov with mvex \
             first, then moof + mdat fragments) is read live"
        }
        _ => "only MPEG-TS, Matroska/WebM and fragmented MP4 are read live",
    };
    RemuxError::Io(Error::new(
        ErrorKind::Unsupported,
        format!(
            "package --live reads MPEG-TS, Matroska/WebM or fragmented MP4 (what an encoder, a tuner \
             or a recorder writes as it goes); this input is {what}: {why}; package the finished file \
             without --live"
        ),
    ))
}

/// Whether the input's first bytes (the snapshot the demuxer opens on,
/// [`crate::live::LiveOptions::probe`]) hold a fragmented MP4's header: a
/// whole `moov`, before any `mdat` or `moof`, with an `mvex` (ISO/IEC
/// 14496-12 §8.8.1: movie fragments follow).
///
/// Errors: reading the input.
fn fragmented_mp4(input: &LiveInput) -> Result<bool, RemuxError> {
    let n = mediaslice::Source::len(&input.source().map_err(RemuxError::Input)?);
    let head = input
        .head(usize::try_from(n).unwrap_or(usize::MAX))
        .map_err(RemuxError::Input)?;
    for (kind, body) in children(&head) {
        match &kind {
            b"moov" => return Ok(child(body, b"mvex").is_some()),
            b"mdat" | b"moof" => return Ok(false),
            _ => {}
        }
    }
    Ok(false)
}

/// A live packaging run: `run` gets the two openers of `input` that
/// [`crate::remux::remux_passes`] takes (the passes before the writing
/// pass, and the writing pass, which lets the ring drop the input's first
/// bytes). Only MPEG-TS, Matroska/WebM and fragmented MP4 are read live.
///
/// Errors: another input is refused (`Io` with `Unsupported`) before
/// anything is written; `run`'s.
pub(super) fn with_live_input<T>(
    input: &LiveInput,
    run: impl FnOnce(
        &dyn Fn() -> mediaslice::Result<Demuxer<LiveSource>>,
        &dyn Fn() -> mediaslice::Result<Demuxer<LiveSource>>,
    ) -> Result<T, RemuxError>,
) -> Result<T, RemuxError> {
    let head = input.head(4096).map_err(RemuxError::Input)?;
    let kind = match mediaslice::detect(&head, None) {
        Some(k @ (FormatKind::MpegTs | FormatKind::Matroska)) => k,
        Some(FormatKind::Mp4) if fragmented_mp4(input)? => FormatKind::Mp4,
        other => return Err(refuse(other)),
    };
    // The delivery bound (Limits::max_delivery_ratio) is set at open from
    // the length, here the snapshot's: MPEG-TS, Matroska and MP4 fragments
    // are read forward (a fragment's moof and mdat once each), so a live
    // input lifts it (to about 2 PiB after a 512 KiB snapshot).
    let limits = Limits {
        max_delivery_ratio: u32::MAX,
        ..Limits::default()
    };
    let open = || -> mediaslice::Result<Demuxer<LiveSource>> {
        let mut d = Demuxer::open_as(input.source()?, kind, limits)?;
        d.source_mut().go_live();
        Ok(d)
    };
    let main = || {
        input.unpin();
        open()
    };
    run(&open, &main)
}

/// `mediaslice package - OUTDIR --hls --live [--window N]`: packages the
/// live `input` (MPEG-TS; Matroska/WebM: a stream's Segment and Clusters
/// of unknown size, as a muxer writes to a pipe; fragmented MP4: a `moov`
/// with `mvex`, then `moof` + `mdat` fragments) into `outdir`
/// as it arrives (see the module). The report lists the segments still in
/// the playlist.
///
/// Errors: as [`super::package`]; another input is refused (`Io` with
/// `Unsupported`) before anything is written.
pub fn package_live(
    input: &LiveInput,
    outdir: &Path,
    segment_ms: u32,
    window: Option<usize>,
    dash: bool,
) -> Result<PackageReport, RemuxError> {
    with_live_input(input, |open, main| {
        std::fs::create_dir_all(outdir).map_err(RemuxError::Io)?;
        let mut live = LiveHls::new(outdir, window, segment_ms);
        if dash {
            live = live.with_dash();
        }
        let (sp, live) = split_passes(open, main, outdir, segment_ms, None, Some(live))?;
        let live = live.ok_or(RemuxError::NoTracks)?;
        let report = PackageReport {
            packets: sp.packets,
            timescale: sp.timescale,
            start: sp.start,
            stopped: sp.stopped,
            ..PackageReport::default()
        };
        live.finish(report).map_err(RemuxError::Io)
    })
}
