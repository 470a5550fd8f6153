//! The truncation target: prefixes of an input against the whole.

use super::*;

/// Keep at most this many payload bytes of the whole input's packets for the
/// prefix checks of [`run_truncation`].
pub(crate) const TRUNCATION_KEEP: usize = 32 << 20;

/// Kinds whose packetisation is the reader's choice (fixed-size reads of a
/// PCM data chunk, PES units cut by the end, parser-split video): a prefix
/// may end with a shorter last packet without `flags.truncated` (as
/// `STREAM_EXACT_FAMILIES` in core/tests/common).
pub const STREAM_EXACT: &[FormatKind] = &[
    FormatKind::Wav,
    FormatKind::Rf64,
    FormatKind::Wave64,
    FormatKind::MpegTs,
    FormatKind::MpegPs,
    FormatKind::Aiff,
    // One packet, the body chunk: a cut leaves its prefix.
    FormatKind::Iff,
    FormatKind::Au,
    // Monkey's Audio: the last frame runs to the end of the input (ffmpeg's
    // rule), so a cut inside it gives a shorter one that only the 3.98+
    // descriptor's audio length can tell from a whole one.
    FormatKind::Ape,
    // Parser-split video elementary streams: a cut inside the last access
    // unit or frame cannot be told from its end.
    FormatKind::H264,
    FormatKind::Hevc,
    FormatKind::MpegVideo,
    FormatKind::M4v,
];

/// Kinds that interleave units of several streams, so a cut may leave a
/// partial last packet in each stream: their prefixes are compared stream by
/// stream (each stream's packets a prefix of its packets in the whole input).
pub const PER_TRACK_PREFIX: &[FormatKind] = &[FormatKind::MpegTs, FormatKind::MpegPs];

/// Diagnostics that mark a prefix as a known truncation exception (listed in
/// core/tests/truncation_exceptions.tsv with the files that show them): the
/// prefix still runs for the invariants, but its packets are not compared.
/// Remove a code when its demuxer is fixed.
pub const KNOWN_TRUNCATION_EXCEPTIONS: &[&str] = &[
    // moov cut inside stbl: the cut tables yield samples at wrong offsets.
    "mp4.moov-truncated",
    // MPEG-TS started on fewer than five synced packets (a file that short
    // must open): a longer input may reject that start or packet size.
    "ts.unconfirmed-sync",
    // MPEG audio whose input ends within ffmpeg's 64 KiB search for the
    // first pair of frames without one: it starts after the tags, where a
    // longer input may start at a pair further on.
    "mp3.unconfirmed-start",
    // H.264 whose input ends before the probe found an SPS with VUI timing:
    // 25 fps, where a longer input may time every access unit by an SPS
    // further on.
    "annexb.unconfirmed-rate",
    // MPEG-TS whose input ends before the first PES of an undescribed
    // private stream: a data track, which a longer input may identify as
    // audio from that PES.
    "ts.unconfirmed-codec",
    // MPEG-4 Part 2 whose VOL header the end of the input cuts before its
    // time resolution: 25 fps, where a longer input times frames by the VOL.
    "m4v.unconfirmed-rate",
    // MXF whose footer partition (where ffmpeg's OP1a muxer writes the
    // index table) the end of the input cut off or into: video is timed
    // by decode count, where the whole input has the temporal offsets
    // (core/tests/truncation_exceptions.tsv: mxf/mpeg2_pcm.mxf).
    "mxf.partition-missing",
    "mxf.index-cut",
];

/// Diagnostics that say a prefix cannot know its video keyframe flags: its
/// packets are compared without them. AVI without an index in the input,
/// whose end comes before the end of `movi` or of the RIFF: the whole input's
/// index (after `movi`) marks the keyframes, the walk of a prefix (as
/// ffmpeg's) takes every video frame for one (fuzz finding 48).
pub const KEYFRAME_UNDECIDED: &[&str] = &["avi.unconfirmed-keyframe"];

/// Kinds with open truncation findings (docs/fuzzing.md, "Findings and
/// fixes"): their prefixes run for the invariants but are not compared, so
/// the smoke run stays green on the seeds until the owner fixes them. Remove
/// a kind when its findings are fixed.
///
/// Empty. AVI left it on 7 December 2026: a prefix cut before `idx1` walks
/// `movi`, so the whole file must give the packets of that walk too. The
/// reader now takes packets from an index (`idx1`, OpenDML) only while each
/// entry names the chunk the walk gives next, and walks on from the first
/// that does not (an index that leaves out, reorders or repeats chunks:
/// `avi.index-mismatch`); an index contributes keyframe flags, never which
/// chunks are packets (docs/formats/avi.md). That is a property of the
/// format as ffmpeg reads an interleaved file, not an allowance of this
/// check: the prefix's packets stay a prefix of the whole's.
pub const KNOWN_TRUNCATION_KINDS: &[(FormatKind, &str)] = &[];

impl Log {
    /// The tracks at open, if it opened (recorded logs only).
    pub fn tracks(&self) -> Option<&[Track]> {
        self.events.iter().find_map(|e| match e {
            Event::Opened { tracks, .. } => Some(&tracks[..]),
            _ => None,
        })
    }

    /// Whether a diagnostic with `code` was reported (recorded logs only).
    pub fn has_diag(&self, code: &str) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e, Event::Diags(d, _) if d.iter().any(|(c, _, _)| *c == code)))
    }
}

/// The truncation differential target.
pub fn run_truncation(data: &[u8]) {
    // The format: detected on the whole input, else forced by its last byte.
    let kind = detect(&data[..data.len().min(mediaslice::detect::DETECT_BYTES)], None)
        .unwrap_or(KINDS[data.last().copied().unwrap_or(0) as usize % KINDS.len()]);
    let plan = Plan {
        record: true,
        tags: false,
        seeks: false,
        extra_ts: 0,
        packet_cap: DIFF_PACKET_CAP,
        keep_bytes: TRUNCATION_KEEP,
        pieces: false,
    };
    let mut sc = scratch(data.len());
    let whole = exercise(
        data,
        Demuxer::open_as(SliceSource::with_scratch(data, &mut sc), kind, Limits::default()),
        &plan,
    );
    let (full, _) = whole.first_pass();
    // Cut points: every prefix of a small input; else packet edges and a few
    // chosen ones.
    let mut cuts: Vec<usize> = Vec::new();
    if data.len() <= 256 {
        cuts.extend(0..data.len());
    } else {
        let n = data.len();
        cuts.extend([0, 8, 12, 64, n / 3, n / 2, n - 1]);
        let pick = u16::from_le_bytes([data[n - 2], data[n - 1]]) as usize;
        cuts.push(pick % n);
        let step = (full.len() / 6).max(1);
        for p in full.iter().step_by(step).take(8) {
            if let Some(pos) = p.pos.and_then(|x| usize::try_from(x).ok()) {
                for c in [
                    pos,
                    pos + 1,
                    pos + p.len / 2,
                    (pos + p.len).saturating_sub(1),
                    pos + p.len,
                ] {
                    if c < n {
                        cuts.push(c);
                    }
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
    }
    // The prefixes take their packets in pieces (`next_packet_pieces`):
    // pieces of a cut input must give a prefix of the whole input's joined
    // packets too.
    let cut_plan = Plan {
        keep_bytes: 0,
        pieces: true,
        ..plan
    };
    // A whole input that hits the packet cap, or runs out of the scratch
    // (more split audio tracks than the carry room above), is a reference
    // only up to there: its prefixes may give more.
    let capped = whole.events.iter().any(|e| {
        matches!(e, Event::Capped)
            || matches!(e, Event::PacketErr(x) if x.kind() == mediaslice::ErrorKind::ScratchTooSmall)
    });
    let exact = !STREAM_EXACT.contains(&kind);
    let junk_joins = JUNK_JOINS_PREVIOUS.contains(&kind);
    for cut in cuts {
        let prefix = &data[..cut];
        let mut sc = scratch(prefix.len());
        let part = exercise(
            prefix,
            Demuxer::open_as(SliceSource::with_scratch(prefix, &mut sc), kind, Limits::default()),
            &cut_plan,
        );
        if !part.opened
            || KNOWN_TRUNCATION_EXCEPTIONS.iter().any(|c| part.has_diag(c))
            || KNOWN_TRUNCATION_KINDS.iter().any(|(k, _)| *k == kind)
        {
            continue;
        }
        let (got, _) = part.first_pass();
        let mut want = reference(&whole, &part);
        let unkeyed: Vec<PacketSum>;
        let got = if KEYFRAME_UNDECIDED.iter().any(|c| part.has_diag(c)) {
            let key_off = |p: &PacketSum| PacketSum {
                flags: PacketFlags {
                    keyframe: false,
                    ..p.flags
                },
                ..p.clone()
            };
            want = want.iter().map(key_off).collect();
            unkeyed = got.iter().map(|p| key_off(p)).collect();
            unkeyed.iter().collect()
        } else {
            got
        };
        if PER_TRACK_PREFIX.contains(&kind) {
            let ntracks = part.tracks().map_or(0, |t| t.len());
            for t in 0..ntracks {
                let w: Vec<PacketSum> = want.iter().filter(|p| p.track == t).cloned().collect();
                let g: Vec<&PacketSum> = got.iter().copied().filter(|p| p.track == t).collect();
                check_prefix(data, cut, &w, &g, capped, exact, junk_joins);
            }
        } else {
            check_prefix(data, cut, &want, &got, capped, exact, junk_joins);
        }
    }
}

/// Kinds whose packetisation appends junk after a frame to that frame
/// (ffmpeg's AC-3 parser; docs/formats/ac3.md): a cut exactly at the end of
/// such a frame gives it complete and unflagged, without the junk that only
/// the rest of the input shows. Accepted only as `whole_frames_before_junk`
/// checks it.
pub(crate) const JUNK_JOINS_PREVIOUS: &[FormatKind] = &[FormatKind::Ac3, FormatKind::Eac3];

/// Whether the prefix's last packet `p` is the whole input's packet `f`
/// without its trailing junk: `p` ends at the cut, its bytes are whole
/// AC-3/E-AC-3 sync frames (by their headers' frame lengths), and the bytes
/// that `f` has beyond it do not begin a frame.
pub(crate) fn whole_frames_before_junk(data: &[u8], cut: usize, p: &PacketSum, f: &PacketSum) -> bool {
    let (Some(pp), Some(fp)) = (p.pos, f.pos) else {
        return false;
    };
    let Ok(start) = usize::try_from(pp) else {
        return false;
    };
    if pp != fp || !p.contiguous || !f.contiguous || p.len >= f.len || start + p.len != cut {
        return false;
    }
    let mut at = start;
    while at < cut {
        match mediaslice::codec::ac3::Ac3Header::parse(&data[at..]) {
            Some(h) if h.frame_len > 0 => at += h.frame_len as usize,
            _ => return false,
        }
    }
    at == cut && mediaslice::codec::ac3::Ac3Header::parse(&data[cut..]).is_none()
}

/// The whole input's packets as a prefix should see them: renumbered to the
/// prefix's tracks, matched by id, kind and time base (a demuxer may salvage
/// fewer tracks from a cut index); packets of unmatched tracks dropped.
pub(crate) fn reference<'a>(whole: &'a Log, part: &Log) -> Vec<PacketSum> {
    let (full, _) = whole.first_pass();
    let (Some(ft), Some(pt)) = (whole.tracks(), part.tracks()) else {
        return Vec::new();
    };
    let key = |t: &Track| (t.id, t.kind, t.time_base);
    let mut map: Vec<Option<usize>> = vec![None; ft.len()];
    let mut taken = vec![false; pt.len()];
    for (fi, f) in ft.iter().enumerate() {
        if let Some(pi) = (0..pt.len()).find(|&pi| !taken[pi] && key(&pt[pi]) == key(f)) {
            taken[pi] = true;
            map[fi] = Some(pi);
        }
    }
    full.iter()
        .filter_map(|p| {
            let pi = (*map.get(p.track)?)?;
            Some(PacketSum {
                track: pi,
                ..(*p).clone()
            })
        })
        .collect()
}

pub(crate) fn check_prefix(
    data: &[u8],
    cut: usize,
    full: &[PacketSum],
    got: &[&PacketSum],
    capped: bool,
    exact: bool,
    junk_joins: bool,
) {
    for (i, p) in got.iter().enumerate() {
        let Some(f) = full.get(i) else {
            if capped {
                return;
            }
            panic!(
                "prefix of {cut} bytes yields packet {i} ({p:?}) but the whole input only {}",
                full.len()
            );
        };
        if (PacketSum {
            bytes: None,
            ..f.clone()
        }) == (PacketSum {
            bytes: None,
            ..(*p).clone()
        }) {
            continue;
        }
        let last = i + 1 == got.len();
        let same_head = p.track == f.track
            && p.pts == f.pts
            && p.dts == f.dts
            && p.pos == f.pos
            // Not the keyframe flag: formats that find it in the payload
            // cannot see it in a cut one.
            && p.len <= f.len;
        let same_bytes = match (&f.bytes, p.pos) {
            (Some(b), _) => b.0.get(..p.len).is_some_and(|x| crc32(x) == p.crc),
            (None, Some(pos)) if p.contiguous => {
                let s = pos as usize;
                data.get(s..s + p.len).is_some_and(|d| crc32(d) == p.crc)
            }
            _ => true,
        };
        // The last packet of the prefix may be flagged `truncated` where
        // the whole input's is not, with the same head and its bytes a
        // prefix (or all) of the whole's: a demuxer cannot always know at
        // the end of a cut input whether a packet ends (bytes after an AC-3
        // frame may be junk that the whole input appends to it, or the next
        // frame's header), and says so. core/tests/truncation.rs accepts
        // the same. Or the packetisation is the reader's own.
        let allowed = p.flags.truncated || !exact || (junk_joins && whole_frames_before_junk(data, cut, p, f));
        if !(last && allowed && same_head && same_bytes) {
            panic!(
                "prefix of {cut} bytes: packet {i} is not the whole input's (or its cut prefix)\n \
                 prefix: {p:?}\n whole:  {f:?}"
            );
        }
    }
}
