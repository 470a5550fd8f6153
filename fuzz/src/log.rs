//! The event log.

use super::*;

/// A packet as logged: everything but the payload, which is kept as length
/// and CRC-32 (and, within a byte budget, the bytes themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketSum {
    /// Track index.
    pub track: usize,
    /// Presentation timestamp.
    pub pts: Option<i64>,
    /// Decoding timestamp.
    pub dts: Option<i64>,
    /// Duration.
    pub duration: Option<u64>,
    /// Flags.
    pub flags: PacketFlags,
    /// Position in the input.
    pub pos: Option<u64>,
    /// Whether the payload is the input range at `pos`.
    pub contiguous: bool,
    /// Payload length.
    pub len: usize,
    /// Payload CRC-32.
    pub crc: u32,
    /// The payload, when [`Plan::keep_bytes`] allowed.
    pub bytes: Option<Kept>,
}

/// Payload bytes kept for a later comparison (printed by length only).
#[derive(Clone, PartialEq, Eq)]
pub struct Kept(pub Vec<u8>);

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} bytes>", self.0.len())
    }
}

/// A tag as logged, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagSum {
    /// Scope.
    pub scope: TagScope,
    /// Key: text or FourCC bytes.
    pub key: Result<String, [u8; 4]>,
    /// Common name.
    pub name: Option<&'static str>,
    /// Value: text, integer or bytes.
    pub value: TagValueSum,
}

/// A tag value, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagValueSum {
    /// Text.
    Text(String),
    /// Integer.
    Int(i64),
    /// Bytes: length and CRC-32.
    Bytes(usize, u32),
}

/// One step of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The demuxer opened.
    Opened {
        /// Format.
        kind: FormatKind,
        /// Tracks.
        tracks: Vec<Track>,
        /// Whole-file facts.
        info: FormatInfo,
        /// `max_packet_size()`.
        max_packet: Option<usize>,
    },
    /// Opening failed.
    OpenFailed(Error),
    /// `codec_config(track)`: length and CRC-32, or the error.
    Config(usize, Result<(usize, u32), Error>),
    /// A tag.
    Tag(TagSum),
    /// The tag walk failed.
    TagErr(Error),
    /// The tag walk ended.
    TagsEnd,
    /// A packet.
    Packet(PacketSum),
    /// `next_packet` failed.
    PacketErr(Error),
    /// `next_packet` returned `Ok(None)`.
    End,
    /// The harness stopped pulling after [`DIFF_PACKET_CAP`] packets.
    Capped,
    /// A seek and its result.
    Seek(usize, i64, Result<(), Error>),
    /// Diagnostics at the end: (code, offset, count) and the dropped count.
    Diags(Vec<(&'static str, u64, u32)>, u32),
}

impl Event {
    /// The error this event carries, if any.
    pub fn error(&self) -> Option<&Error> {
        match self {
            Event::OpenFailed(e) | Event::TagErr(e) | Event::PacketErr(e) => Some(e),
            Event::Config(_, Err(e)) | Event::Seek(_, _, Err(e)) => Some(e),
            _ => None,
        }
    }
}

/// What a run does and keeps.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Keep every event (differential targets) or only count (parser targets).
    pub record: bool,
    /// Walk the tags (twice, the second after `rewind_tags`).
    pub tags: bool,
    /// Seek and pull more packets after the first pass.
    pub seeks: bool,
    /// An extra seek target chosen by the input.
    pub extra_ts: i64,
    /// Stop after this many packets in the first pass (`usize::MAX`: never).
    pub packet_cap: usize,
    /// Bytes of packet payload that may be kept in [`PacketSum::bytes`].
    pub keep_bytes: usize,
    /// Take packets with `next_packet_pieces`, reading every piece (the
    /// logged packet is the same: length and CRC-32 of the bytes in order).
    pub pieces: bool,
}

impl Plan {
    /// Everything, counted only: the parser and `any` targets.
    pub fn full(extra_ts: i64) -> Self {
        Plan {
            record: false,
            tags: true,
            seeks: true,
            extra_ts,
            packet_cap: usize::MAX,
            keep_bytes: 0,
            pieces: false,
        }
    }
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Log {
    /// The events, when the plan records.
    pub events: Vec<Event>,
    /// Packets in the first pass.
    pub packets: usize,
    /// Whether the demuxer opened.
    pub opened: bool,
}

impl Log {
    fn push(&mut self, plan: &Plan, e: Event) {
        if plan.record {
            self.events.push(e);
        }
    }

    /// The packets of the first pass (before any seek), and how it ended.
    pub fn first_pass(&self) -> (Vec<&PacketSum>, Option<&Event>) {
        let mut v = Vec::new();
        for e in &self.events {
            match e {
                Event::Packet(p) => v.push(p),
                Event::PacketErr(_) | Event::End | Event::Capped => return (v, Some(e)),
                _ => {}
            }
        }
        (v, None)
    }
}

pub(crate) fn tag_sum(t: &mediaslice::Tag<'_>) -> TagSum {
    TagSum {
        scope: t.scope,
        key: match t.key {
            TagKey::Text(s) => Ok(s.to_owned()),
            TagKey::FourCc(k) => Err(k),
        },
        name: t.name,
        value: match t.value {
            TagValue::Text(s) => TagValueSum::Text(s.to_owned()),
            TagValue::Int(i) => TagValueSum::Int(i),
            TagValue::Bytes(b) => TagValueSum::Bytes(b.len(), crc32(b)),
        },
    }
}

/// Pulls one packet, checks the per-packet invariants and summarises it.
/// `None` when the pass ended (the end event is returned).
pub(crate) fn pull<S: Source>(
    d: &mut Demuxer<S>,
    input: &[u8],
    keep: &mut usize,
    pieces: bool,
) -> Result<PacketSum, Event> {
    if pieces {
        return pull_pieces(d, input, keep);
    }
    let ntracks = d.tracks().len();
    let max_packet = d.limits().max_packet as usize;
    let declared_max = d.max_packet_size();
    let before = allocated();
    let r = d.next_packet();
    let n = allocated().wrapping_sub(before);
    assert!(n == 0, "invariant: next_packet allocated {n} bytes");
    match r {
        Ok(Some(p)) => {
            check_contiguous(&p, input);
            check_len(p.track, p.data.len(), ntracks, max_packet, declared_max);
            let bytes = if p.data.len() <= *keep {
                *keep -= p.data.len();
                Some(Kept(p.data.to_vec()))
            } else {
                None
            };
            Ok(PacketSum {
                track: p.track,
                pts: p.pts,
                dts: p.dts,
                duration: p.duration,
                flags: p.flags,
                pos: p.pos,
                contiguous: p.contiguous,
                len: p.data.len(),
                crc: crc32(p.data),
                bytes,
            })
        }
        Ok(None) => Err(Event::End),
        Err(e) => {
            // The driver promises Ok(None) after the first error.
            assert!(
                matches!(d.next_packet(), Ok(None)),
                "invariant: next_packet after an error did not return Ok(None)"
            );
            Err(Event::PacketErr(e))
        }
    }
}

/// Walks the tags once, logging them; returns the summaries for comparison.
/// The per-packet invariants on the track index and the length.
fn check_len(track: usize, len: usize, ntracks: usize, max_packet: usize, declared_max: Option<usize>) {
    assert!(track < ntracks, "invariant: packet track {track} of {ntracks} tracks");
    assert!(
        len <= max_packet,
        "invariant: packet of {len} bytes over Limits::max_packet"
    );
    if let Some(m) = declared_max {
        assert!(len <= m, "invariant: packet of {len} bytes over max_packet_size() {m}");
    }
}

/// A `contiguous` packet's bytes are the input's bytes at `pos`.
fn check_contiguous(p: &mediaslice::Packet<'_>, input: &[u8]) {
    if p.contiguous {
        let pos = p.pos.expect("invariant: contiguous packet without pos");
        let start = usize::try_from(pos).expect("invariant: contiguous pos beyond usize");
        let within = start.checked_add(p.data.len()).and_then(|end| input.get(start..end));
        assert!(
            within == Some(p.data),
            "invariant: contiguous packet at {} ({} bytes) is not the input's bytes there",
            pos,
            p.data.len()
        );
    }
}

/// [`pull`] through `next_packet_pieces`: every piece read in order, no
/// allocation from the call to the last piece. A piece that fails ends the
/// pass as a failed `next_packet` would (`Event::PacketErr`).
fn pull_pieces<S: Source>(d: &mut Demuxer<S>, input: &[u8], keep: &mut usize) -> Result<PacketSum, Event> {
    let ntracks = d.tracks().len();
    let max_packet = d.limits().max_packet as usize;
    let declared_max = d.max_packet_size();
    // Room for the kept bytes before counting: the pieces borrow the demuxer.
    let mut kept: Vec<u8> = Vec::with_capacity(*keep);
    let before = allocated();
    let r = d.next_packet_pieces();
    let mut p = match r {
        Ok(Some(p)) => p,
        Ok(None) => return Err(Event::End),
        Err(e) => {
            drop(r);
            assert!(
                matches!(d.next_packet_pieces(), Ok(None)),
                "invariant: next_packet_pieces after an error did not return Ok(None)"
            );
            return Err(Event::PacketErr(e));
        }
    };
    let (len, facts, scattered) = (p.len(), p.packet, p.is_scattered());
    if scattered {
        assert!(
            facts.data.is_empty() && !facts.contiguous,
            "invariant: a packet in pieces has data or is contiguous"
        );
    } else {
        check_contiguous(&facts, input);
    }
    let mut crc = mediaslice::crc::Crc32::new();
    let mut size = 0usize;
    loop {
        match p.next_piece() {
            Ok(Some(piece)) => {
                crc.update(piece);
                size += piece.len();
                if len <= *keep && kept.len() + piece.len() <= *keep {
                    kept.extend_from_slice(piece);
                }
            }
            Ok(None) => break,
            Err(e) => return Err(Event::PacketErr(e)),
        }
    }
    let n = allocated().wrapping_sub(before);
    assert!(n == 0, "invariant: next_packet_pieces allocated {n} bytes");
    assert!(
        size == len,
        "invariant: the pieces hold {size} bytes, PacketPieces::len {len}"
    );
    check_len(facts.track, size, ntracks, max_packet, declared_max);
    let bytes = if size <= *keep {
        *keep -= size;
        Some(Kept(kept))
    } else {
        None
    };
    Ok(PacketSum {
        track: facts.track,
        pts: facts.pts,
        dts: facts.dts,
        duration: facts.duration,
        flags: facts.flags,
        pos: facts.pos,
        contiguous: facts.contiguous,
        len: size,
        crc: crc.finish(),
        bytes,
    })
}

pub(crate) fn walk_tags<S: Source>(d: &mut Demuxer<S>, bound: usize) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let before = allocated();
        let r = d.next_tag();
        let n = allocated().wrapping_sub(before);
        assert!(n == 0, "invariant: next_tag allocated {n} bytes");
        match r {
            Ok(Some(t)) => out.push(Event::Tag(tag_sum(&t))),
            Ok(None) => {
                out.push(Event::TagsEnd);
                break;
            }
            Err(e) => {
                out.push(Event::TagErr(e));
                break;
            }
        }
        assert!(out.len() <= bound, "invariant: more than {bound} tags from the input");
    }
    out
}

/// Whether a tag walk after `rewind_tags` repeats the first: identically, or
/// up to the first event that carries an I/O error in either. A reader that
/// fails from some read on, or cannot seek back, may serve the first walk
/// and fail the second, which must read the tags again (the library keeps
/// no copy): the error is the honest answer (finding 47).
pub(crate) fn same_walk(a: &[Event], b: &[Event]) -> bool {
    let io = |e: &Event| matches!(e.error().map(|x| x.kind()), Some(mediaslice::ErrorKind::Io(_)));
    for (x, y) in a.iter().zip(b) {
        if io(x) || io(y) {
            return true;
        }
        if x != y {
            return false;
        }
    }
    a.len() == b.len()
}

/// Runs the whole exercise on an opened (or failed) demuxer over `input`
/// (the bytes the source serves, for the `contiguous` check).
pub fn exercise<S: Source>(input: &[u8], opened: mediaslice::Result<Demuxer<S>>, plan: &Plan) -> Log {
    let mut log = Log::default();
    let mut d = match opened {
        Ok(d) => d,
        Err(e) => {
            log.push(plan, Event::OpenFailed(e));
            return log;
        }
    };
    log.opened = true;
    let bound = work_bound(input.len());
    let tracks: Vec<Track> = d.tracks().to_vec();
    log.push(
        plan,
        Event::Opened {
            kind: d.format(),
            tracks: tracks.clone(),
            info: d.info().clone(),
            max_packet: d.max_packet_size(),
        },
    );
    // Codec configuration of every track, and of one past the end.
    for i in 0..=tracks.len() {
        let r = no_alloc("codec_config", || d.codec_config(i).map(|c| (c.len(), crc32(c))));
        if i == tracks.len() {
            assert!(r.is_err(), "invariant: codec_config of a track out of range succeeded");
        }
        log.push(plan, Event::Config(i, r));
    }
    if plan.tags {
        let first = walk_tags(&mut d, bound);
        d.rewind_tags();
        let second = walk_tags(&mut d, bound);
        assert!(
            same_walk(&first, &second),
            "invariant: the tag walk differs after rewind_tags"
        );
        for e in first {
            log.push(plan, e);
        }
    }
    // First pass: every packet.
    let mut keep = plan.keep_bytes;
    let mut last_ts: Vec<Option<i64>> = vec![None; tracks.len()];
    loop {
        if log.packets >= plan.packet_cap {
            log.push(plan, Event::Capped);
            break;
        }
        match pull(&mut d, input, &mut keep, plan.pieces) {
            Ok(p) => {
                log.packets += 1;
                assert!(
                    log.packets <= bound,
                    "invariant: more than {bound} packets from {} bytes",
                    input.len()
                );
                if let Some(slot) = last_ts.get_mut(p.track) {
                    if p.pts.is_some() {
                        *slot = p.pts;
                    }
                }
                log.push(plan, Event::Packet(p));
            }
            Err(end) => {
                log.push(plan, end);
                break;
            }
        }
    }
    if plan.seeks {
        // Out of range: must fail.
        assert!(
            d.seek(tracks.len(), 0).is_err(),
            "invariant: seek on a track out of range succeeded"
        );
        for (t, track) in tracks.iter().enumerate().take(4) {
            let mut points = vec![0i64, -1, i64::MIN, i64::MAX, plan.extra_ts];
            if let Some(dur) = track.duration {
                points.push((dur / 2).min(i64::MAX as u64) as i64);
                points.push(dur.min(i64::MAX as u64) as i64);
            }
            if let Some(Some(ts)) = last_ts.get(t) {
                points.push(*ts);
                points.push(ts / 2);
            }
            for ts in points {
                let r = no_alloc("seek", || d.seek(t, ts));
                let ok = r.is_ok();
                log.push(plan, Event::Seek(t, ts, r));
                if !ok {
                    continue;
                }
                for _ in 0..16 {
                    match pull(&mut d, input, &mut 0, plan.pieces) {
                        Ok(p) => log.push(plan, Event::Packet(p)),
                        Err(end) => {
                            log.push(plan, end);
                            break;
                        }
                    }
                }
            }
        }
    }
    let diags = d.diagnostics();
    log.push(
        plan,
        Event::Diags(
            diags.iter().map(|(g, n)| (g.code, g.offset, n)).collect(),
            diags.dropped(),
        ),
    );
    log
}

/// An input-chosen seek target: the last eight bytes as a little-endian i64.
pub(crate) fn extra_ts(data: &[u8]) -> i64 {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[data.len() - n..]);
    i64::from_le_bytes(b)
}
