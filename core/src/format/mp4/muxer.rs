//! The progressive MP4 / MOV muxer ([`crate::MuxFormat::Mp4`],
//! [`crate::MuxFormat::Mov`]): `ftyp`, then the samples in one `mdat` whose
//! size is patched at the end (64-bit when it passes 4 GiB), then `moov`
//! (ISO/IEC 14496-12 §8.1.1, §8.2.1, §4.3).
//!
//! Files: this one (the `FormatMuxer` and the per-track state),
//! `muxer_index.rs` (the compact sample index in the caller's scratch),
//! `muxer_records.rs` (reading it back, spilled blocks included),
//! `muxer_box.rs` (box writer), `muxer_moov.rs` (`moov` and the sample
//! tables), `muxer_entry.rs` (`stsd` sample entries).
//!
//! Payloads go from the packet's borrow to the sink: as they are when the
//! input is already length-prefixed H.264/HEVC or raw AAC; H.264/HEVC in
//! Annex B (TS, elementary streams) are written NAL unit by NAL unit with a
//! 4-byte length before each ([`crate::codec::convert::to_length`]), their
//! `avcC`/`hvcC` built from the in-band parameter sets; ADTS frames lose
//! their header ([`crate::codec::convert::adts`]) and give the
//! `AudioSpecificConfig`.
//!
//! The sample index needs the caller's scratch
//! ([`crate::mux::Muxer::with_scratch`]), about 4 bytes per sample (see
//! `muxer_index.rs`); with the `alloc` feature and no scratch it grows on
//! the heap instead. Given a spill store
//! ([`crate::mux::Muxer::with_index_spill`]), the index keeps at most the
//! caller's bound in the scratch and spills full blocks to the store. A sink that cannot patch is `Unsupported` (fragmented
//! MP4 is for such sinks).

use super::muxer_box::BoxWriter;
use super::muxer_entry::{entry_kind, needs_config};
use super::muxer_index::{self, Growing, RunState, Sample};
use super::muxer_pcm::{self, qt_pcm};
use super::muxer_records::Index;
use super::muxer_times;
use crate::codec::adts::AdtsHeader;
use crate::codec::convert::to_length::{length_prefixed_size, write_length_prefixed, LengthPrefixOptions};
use crate::codec::convert::{adts, avcc, dac3, hvcc, NalCodec};
use crate::error::{Error, Result};
use crate::format::mux_traits::{FormatMuxer, MuxContext, TrackSpec};
use crate::limits::MAX_TRACKS;
use crate::sink::{Sink, Spill, SpillStore};
use crate::types::{Codec, Packet, Track, TrackKind};
use core::cell::Cell;

/// Bytes for codec configuration records the muxer builds itself (an
/// `avcC`/`hvcC` from in-band parameter sets, an `AudioSpecificConfig` from
/// ADTS), all tracks together: 1 KiB. A record that does not fit is
/// `CapacityExceeded`.
pub const MAX_BUILT_CONFIG: usize = 1024;

/// Bytes before the first sample: `free` (8, becomes the 64-bit `mdat`
/// header when needed, as ffmpeg does) and the `mdat` header (8).
pub(crate) const MDAT_HEADER: u64 = 16;

/// How a track's packets become samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Input {
    /// Written as they are.
    #[default]
    AsIs,
    /// Annex B H.264/HEVC, written length-prefixed.
    AnnexB(NalCodec),
    /// ADTS frames, written without their header.
    Adts,
    /// AC-3 / E-AC-3 sync frames with no configuration given: written as
    /// they are, `dac3`/`dec3` built from the first packet.
    SyncFrames,
}

/// What the muxer keeps per track.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TrackState {
    pub input: Input,
    pub samples: u32,
    pub keys: u32,
    /// First decode time, in the media time scale (the track's time base
    /// denominator; times are multiplied by its numerator).
    pub first_dts: Option<i64>,
    pub last_dts: i64,
    pub min_pts: i64,
    pub max_end: i64,
    pub last_duration: u64,
    pub any_cts: bool,
    pub negative_cts: bool,
    pub first_size: u64,
    pub same_size: bool,
    pub run: RunState,
    /// Range of the built configuration in `Mp4Muxer::built`, or none.
    pub built: Option<(u16, u16)>,
    /// The input gave presentation times only and they went back (B-frames
    /// in Matroska): the index holds provisional decode times, rebuilt at
    /// `finish` (`muxer_times.rs`).
    pub reordered: bool,
    /// How they are rebuilt, once measured (`muxer_times::settle`).
    pub rebuild: Option<muxer_times::Rebuild>,
    /// A packet of the track came without a decode time (Matroska gives
    /// none for the first packets of a reordering track).
    pub dts_missing: bool,
}

/// The MP4 / MOV muxer's state: fixed size, no payload.
#[derive(Debug)]
pub struct Mp4Muxer {
    /// QuickTime (`qt  ` brand) rather than ISO (`isom`).
    pub(crate) qt: bool,
    /// Where the `free` box before `mdat` starts.
    pub(crate) mdat_at: u64,
    /// Bytes of the index used in the scratch.
    pub(crate) index_len: usize,
    /// Bytes of the index spilled to the caller's store before them
    /// (`muxer_index::append_growing`).
    pub(crate) spilled: u64,
    /// Room reserved for `moov` ahead of the media, and where it starts
    /// (`muxer_ahead.rs`); 0 bytes: `moov` after the media.
    pub(crate) ahead: (u64, u64),
    /// Decode times that the input lacks and whose presentation times go
    /// back may be provisional, rebuilt at `finish` (`muxer_times.rs`):
    /// the progressive muxer, which writes every table at the end; not the
    /// fragmented one, whose fragments are out before the end.
    pub(crate) rebuilds_times: bool,
    pub(crate) tracks: [TrackState; MAX_TRACKS],
    pub(crate) built: heapless::Vec<u8, MAX_BUILT_CONFIG>,
    /// The index on the heap when there is no scratch (feature `alloc`).
    #[cfg(feature = "alloc")]
    pub(crate) heap: alloc::vec::Vec<u8>,
}

impl Mp4Muxer {
    /// A muxer writing MOV (`qt`) when `qt`, MP4 otherwise.
    pub(crate) fn with_brand(qt: bool) -> Self {
        Mp4Muxer {
            qt,
            mdat_at: 0,
            index_len: 0,
            spilled: 0,
            ahead: (0, 0),
            rebuilds_times: true,
            tracks: [TrackState::default(); MAX_TRACKS],
            built: heapless::Vec::new(),
            #[cfg(feature = "alloc")]
            heap: alloc::vec::Vec::new(),
        }
    }

    /// The configuration record of track `i`: built or given.
    pub(crate) fn config<'a>(&'a self, ctx: &'a MuxContext, i: usize) -> &'a [u8] {
        match self.tracks.get(i).and_then(|t| t.built) {
            Some((a, b)) => self.built.get(usize::from(a)..usize::from(b)).unwrap_or(&[]),
            None => ctx.config(i),
        }
    }

    /// Track `i` as its boxes describe it: with the picture size taken
    /// from the SPS of its configuration when the input gave none
    /// (MPEG-TS, elementary streams).
    pub(crate) fn sized_track(&self, ctx: &MuxContext, i: usize) -> Track {
        let mut t = ctx.tracks.get(i).cloned().unwrap_or_default();
        if t.kind == TrackKind::Video && (t.width == 0 || t.height == 0) {
            if let Some((w, h)) = crate::codec::convert::picture_size(t.codec, self.config(ctx, i)) {
                (t.width, t.height) = (w, h);
            }
        }
        t
    }

    /// The used part of the sample index.
    pub(crate) fn index<'a>(&'a self, scratch: &'a [u8]) -> &'a [u8] {
        #[cfg(feature = "alloc")]
        if scratch.is_empty() {
            return &self.heap;
        }
        scratch.get(..self.index_len).unwrap_or(&[])
    }

    /// The whole index: the spilled bytes in `store`, then the part in
    /// `scratch`. A read error of the store goes to `failed`.
    pub(crate) fn index_view<'a>(
        &'a self,
        scratch: &'a [u8],
        store: Option<&'a dyn SpillStore>,
        failed: &'a Cell<Option<Error>>,
    ) -> Index<'a> {
        Index::spilled(store, self.spilled, self.index(scratch), failed)
    }

    fn append(&mut self, scratch: &mut [u8], spill: &mut Spill<'_>, s: &Sample, pos: u64) -> Result<()> {
        let run = &mut self
            .tracks
            .get_mut(usize::from(s.track))
            .ok_or(Error::capacity(pos, &"mp4 muxer: track index beyond MAX_TRACKS"))?
            .run;
        #[cfg(feature = "alloc")]
        if scratch.is_empty() {
            let mut rec = [0u8; muxer_index::MAX_RECORD];
            let n = muxer_index::encode(s, run, &mut rec);
            self.heap.extend_from_slice(rec.get(..n).unwrap_or(&[]));
            return Ok(());
        }
        let mut g = Growing::new(scratch, &mut self.index_len, &mut self.spilled, spill);
        muxer_index::append_growing(&mut g, s, run, pos)
    }

    /// Builds and keeps the `dac3`/`dec3` payload of AC-3/E-AC-3 track `i`
    /// from its first packet (`codec::convert::dac3`).
    fn build_sync_frame_config(&mut self, i: usize, ctx: &MuxContext, first: &[u8], pos: u64) -> Result<()> {
        let (mut ac3, mut eac3) = (None, None);
        match ctx.tracks.get(i).map(|t| t.codec) {
            Some(Codec::Ac3) => ac3 = dac3::dac3(first),
            _ => eac3 = dac3::dec3(first),
        }
        let record = match (&ac3, &eac3) {
            (Some(a), _) => &a[..],
            (_, Some(e)) => &e[..],
            _ => {
                return Err(Error::unsupported(
                    pos,
                    &"mp4 muxer: the first AC-3/E-AC-3 packet gives no dac3/dec3 (not a sync frame, or E-AC-3 with dependent or several substreams) (ETSI TS 102 366 F.4, F.6)",
                ))
            }
        };
        self.keep_built(i, record, pos)
    }

    /// Keeps a configuration record built for track `i`.
    fn keep_built(&mut self, i: usize, record: &[u8], pos: u64) -> Result<()> {
        let start = self.built.len();
        self.built
            .extend_from_slice(record)
            .map_err(|_| Error::capacity(pos, &"mp4 muxer: built codec configurations beyond MAX_BUILT_CONFIG"))?;
        let range = (
            u16::try_from(start).unwrap_or(u16::MAX),
            u16::try_from(self.built.len()).unwrap_or(u16::MAX),
        );
        if let Some(t) = self.tracks.get_mut(i) {
            t.built = Some(range);
        }
        Ok(())
    }

    /// Builds the `avcC`/`hvcC` of an Annex B track from the parameter sets
    /// in `au` (its configuration, or a packet) when it has none yet.
    fn build_nal_config(&mut self, i: usize, codec: NalCodec, au: &[u8], pos: u64) -> Result<()> {
        let mut out = [0u8; MAX_BUILT_CONFIG];
        let n = match codec {
            NalCodec::H264 => avcc::write_avcc_from_annexb(au, &mut out),
            NalCodec::H265 => hvcc::write_hvcc_from_annexb(au, true, &mut out),
        };
        match n {
            Ok(n) => self.keep_built(i, out.get(..n).unwrap_or(&[]), pos),
            // No parameter sets in this access unit: wait for one that has.
            Err(_) => Ok(()),
        }
    }
}

/// A packet as a sample: its payload as the sample holds it and its times
/// in the media time scale (the track's time base denominator).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared<'p> {
    /// What `write_payload` writes: the packet's bytes, or its raw frame.
    pub data: &'p [u8],
    /// How `data` becomes the sample.
    pub input: Input,
    /// Bytes of the sample.
    pub size: u64,
    pub dts: i64,
    pub pts: i64,
    /// Decode time minus the track's previous one (0 for its first).
    pub delta: u64,
    /// Presentation minus decode time.
    pub cts: i64,
    pub key: bool,
    /// The packet's duration, or else `delta`, or else the previous one.
    pub duration: u64,
    /// The decode time is provisional (see `TrackState::reordered`).
    pub reorder: bool,
    /// The track has had a packet without a decode time.
    pub dts_missing: bool,
}

/// Writes a prepared payload to `sink`: as it is, or NAL unit by NAL unit
/// with 4-byte lengths (Annex B input). Never copied.
pub(crate) fn write_payload<K: Sink>(sink: &mut K, input: Input, data: &[u8]) -> Result<()> {
    match input {
        Input::AnnexB(_) => write_length_prefixed(sink, data, LengthPrefixOptions::default()).map(|_| ()),
        _ => sink.write_all(data),
    }
}

impl Mp4Muxer {
    /// The sample `packet` becomes (bitstream conversion, times), shared by
    /// the progressive and the fragmented muxer; builds the track's
    /// configuration from the first packet that carries it. Changes no
    /// counter: [`Mp4Muxer::commit`] does once the sample is written.
    pub(crate) fn prepare<'p>(&mut self, ctx: &MuxContext, packet: &Packet<'p>, pos: u64) -> Result<Prepared<'p>> {
        let i = packet.track;
        let num = ctx.tracks.get(i).map_or(1, |t| t.time_base.num);
        let st = *self
            .tracks
            .get(i)
            .ok_or(Error::capacity(pos, &"mp4 muxer: no such track"))?;
        // The payload as the sample will hold it.
        let (data, size) = match st.input {
            Input::AsIs | Input::SyncFrames => {
                if st.input == Input::SyncFrames && st.built.is_none() {
                    self.build_sync_frame_config(i, ctx, packet.data, pos)?;
                }
                (packet.data, packet.data.len() as u64)
            }
            Input::Adts => {
                let (h, raw) = adts::adts_to_raw(packet.data)?;
                if st.built.is_none() {
                    let asc = adts::audio_specific_config(&h)?;
                    self.keep_built(i, &asc, pos)?;
                }
                (raw, raw.len() as u64)
            }
            Input::AnnexB(nal) => {
                if st.built.is_none() {
                    self.build_nal_config(i, nal, packet.data, pos)?;
                }
                (
                    packet.data,
                    length_prefixed_size(packet.data, LengthPrefixOptions::default())?,
                )
            }
        };
        if u32::try_from(size).is_err() {
            return Err(Error::unsupported(
                pos,
                &"mp4 muxer: a sample over 4 GiB (ISO/IEC 14496-12 8.7.3)",
            ));
        }
        // Uncompressed audio in MOV: whole frames, lasting one tick each.
        let frame = ctx.tracks.get(i).map_or(0, muxer_pcm::frame_bytes);
        let pcm_frames = if self.qt && frame > 0 {
            if size % frame != 0 {
                return Err(Error::unsupported(
                    pos,
                    &"mov muxer: an uncompressed audio packet that is not whole frames (QuickTime File Format, Sound Sample Descriptions)",
                ));
            }
            Some(size / frame)
        } else {
            None
        };
        // Times in the media time scale.
        let mut dts = match packet.dts.or(packet.pts) {
            Some(t) => scaled(t, num, pos)?,
            None if st.first_dts.is_none() => 0,
            None => st.last_dts.saturating_add(st.last_duration as i64),
        };
        let pts = match packet.pts {
            Some(t) => scaled(t, num, pos)?,
            None => dts,
        };
        // Times going back where the input lacks decode times (Matroska
        // B-frames): a provisional one until `finish` rebuilds them
        // (muxer_times.rs); given decode times that go back are refused.
        // (A packet with no time at all, a PES without PTS, says nothing.)
        let dts_missing = st.dts_missing || (packet.dts.is_none() && packet.pts.is_some());
        let reorder = self.rebuilds_times && dts_missing && st.first_dts.is_some() && dts < st.last_dts;
        if reorder {
            dts = st.last_dts;
        }
        let delta = match st.first_dts {
            None => 0,
            Some(_) => u64::try_from(dts.checked_sub(st.last_dts).unwrap_or(-1)).map_err(|_| {
                Error::unsupported(
                    pos,
                    &"mp4 muxer: decode times go back (stts deltas are unsigned, ISO/IEC 14496-12 8.6.1.2)",
                )
            })?,
        };
        let cts = pts.checked_sub(dts).ok_or(Error::unsupported(
            pos,
            &"mp4 muxer: composition offset overflows (ISO/IEC 14496-12 8.6.1.3)",
        ))?;
        let duration = match packet.duration {
            _ if pcm_frames.is_some() => pcm_frames.unwrap_or(0),
            Some(d) if d > 0 => d.saturating_mul(u64::from(num)),
            // Unknown: the time since the previous sample, or the previous
            // duration (as ffmpeg does for a last sample).
            _ if delta > 0 => delta,
            _ => st.last_duration,
        };
        Ok(Prepared {
            data,
            input: st.input,
            size,
            dts,
            pts,
            delta,
            cts,
            key: packet.flags.keyframe,
            duration,
            reorder,
            dts_missing,
        })
    }

    /// Counts sample `p` of track `i`, written.
    pub(crate) fn commit(&mut self, i: usize, p: &Prepared<'_>, pos: u64) -> Result<()> {
        let t = self
            .tracks
            .get_mut(i)
            .ok_or(Error::capacity(pos, &"mp4 muxer: no such track"))?;
        t.samples = t.samples.checked_add(1).ok_or(Error::capacity(
            pos,
            &"mp4 muxer: more than 2^32 samples in a track (ISO/IEC 14496-12 8.7.3)",
        ))?;
        t.keys += u32::from(p.key);
        t.first_dts.get_or_insert(p.dts);
        if t.samples == 1 {
            t.first_size = p.size;
        }
        t.same_size &= t.first_size == p.size;
        t.last_dts = p.dts;
        t.last_duration = p.duration;
        t.min_pts = t.min_pts.min(p.pts);
        t.max_end = t.max_end.max(p.pts.saturating_add(p.duration as i64));
        t.any_cts |= p.cts != 0;
        t.negative_cts |= p.cts < 0;
        t.reordered |= p.reorder;
        t.dts_missing = p.dts_missing;
        Ok(())
    }
}

/// Whether `b` starts with an Annex B start code.
fn is_annexb(b: &[u8]) -> bool {
    b.starts_with(&[0, 0, 1]) || b.starts_with(&[0, 0, 0, 1])
}

/// `t` in the media time scale: multiplied by the time base numerator.
fn scaled(t: i64, num: u32, pos: u64) -> Result<i64> {
    t.checked_mul(i64::from(num)).ok_or(Error::unsupported(
        pos,
        &"mp4 muxer: a timestamp overflows the media time scale (ISO/IEC 14496-12 8.4.2)",
    ))
}

impl FormatMuxer for Mp4Muxer {
    fn new() -> Self {
        Mp4Muxer::with_brand(false)
    }

    fn add_track(&mut self, ctx: &mut MuxContext, spec: &TrackSpec<'_>) -> Result<usize> {
        let codec = spec.track.codec;
        match qt_pcm(codec) {
            // Uncompressed audio: MOV only, as ffmpeg 5.1 (muxer_pcm.rs).
            Some(_) if self.qt => muxer_pcm::check_track(spec.track)?,
            Some(_) => {
                return Err(Error::unsupported(
                    0,
                    &"mp4 muxer: uncompressed audio (PCM, A-law, mu-law) goes in MOV output, not MP4 (QuickTime File Format, Sound Sample Descriptions)",
                ))
            }
            None => {
                entry_kind(codec)?;
            }
        }
        if spec.track.time_base.den == 0 || spec.track.time_base.num == 0 {
            return Err(Error::unsupported(
                0,
                &"mp4 muxer: a track without a time base (ISO/IEC 14496-12 8.4.2)",
            ));
        }
        let input = match codec {
            Codec::H264 if spec.config.is_empty() || is_annexb(spec.config) => Input::AnnexB(NalCodec::H264),
            Codec::Hevc if spec.config.is_empty() || is_annexb(spec.config) => Input::AnnexB(NalCodec::H265),
            Codec::Aac if spec.config.is_empty() || AdtsHeader::has_sync(spec.config) => Input::Adts,
            Codec::Ac3 | Codec::Eac3 if spec.config.is_empty() => Input::SyncFrames,
            _ => Input::AsIs,
        };
        if input == Input::AsIs && needs_config(codec) && spec.config.is_empty() && codec != Codec::Aac {
            return Err(Error::unsupported(
                0,
                &"mp4 muxer: this codec needs its configuration record (dac3, dec3, dOps, dfLa) (ISO/IEC 14496-12 8.5.2)",
            ));
        }
        let i = ctx.push_track(spec)?;
        if let Some(t) = self.tracks.get_mut(i) {
            *t = TrackState {
                input,
                min_pts: i64::MAX,
                same_size: true,
                ..TrackState::default()
            };
        }
        if let Input::AnnexB(nal) = input {
            if !spec.config.is_empty() {
                self.build_nal_config(i, nal, spec.config, 0)?;
            }
        }
        // An ADTS header as configuration (what `remux` takes from a TS or
        // ADTS input's first frame): its AudioSpecificConfig now.
        if let Some(h) = AdtsHeader::parse(spec.config).filter(|_| input == Input::Adts) {
            self.keep_built(i, &adts::audio_specific_config(&h)?, 0)?;
        }
        Ok(i)
    }

    fn write_header<K: Sink>(&mut self, sink: &mut K, _scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        let pos = sink.position();
        if !sink.can_patch() {
            return Err(Error::unsupported(
                pos,
                &"mp4 muxer: needs a sink that can patch (mdat size, ISO/IEC 14496-12 8.1.1); use Matroska live or fragmented MP4 on a stream",
            ));
        }
        let mut w = BoxWriter::new(sink);
        w.open(b"ftyp")?;
        if self.qt {
            w.put(b"qt  ")?;
            w.u32(0x0200)?;
            w.put(b"qt  ")?;
        } else {
            w.put(b"isom")?;
            w.u32(0x0200)?;
            w.put(b"isomiso2")?;
            if ctx.tracks.iter().any(|t| t.codec == Codec::H264) {
                w.put(b"avc1")?;
            }
            w.put(b"mp41")?;
        }
        w.close()?;
        if self.ahead.1 > 0 {
            self.ahead.0 = w.position();
            super::muxer_ahead::write_reserve(&mut w, self.ahead.1)?;
        }
        self.mdat_at = w.position();
        w.put(&[0, 0, 0, 8])?;
        w.put(b"free")?;
        w.put(&[0, 0, 0, 0])?;
        w.put(b"mdat")?;
        w.flush()
    }

    fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        self.write_packet_spilling(sink, scratch, &mut Spill::none(), ctx, packet)
    }

    fn write_packet_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        let pos = sink.position();
        let p = self.prepare(ctx, packet, pos)?;
        let sample = Sample {
            track: u8::try_from(packet.track).unwrap_or(u8::MAX),
            key: p.key,
            size: p.size,
            delta: p.delta,
            cts: p.cts,
        };
        self.append(scratch, spill, &sample, pos)?;
        write_payload(sink, p.input, p.data)?;
        self.commit(packet.track, &p, pos)
    }

    fn finish<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        self.finish_spilling(sink, scratch, &mut Spill::none(), ctx)
    }

    fn finish_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
    ) -> Result<()> {
        let store = spill.store.as_deref();
        let end = sink.position();
        let mdat_size = end.saturating_sub(self.mdat_at).saturating_sub(8);
        match u32::try_from(mdat_size) {
            Ok(s) => sink.patch_at(self.mdat_at.saturating_add(8), &s.to_be_bytes())?,
            Err(_) => {
                // The `free` box and the 32-bit header become one 64-bit
                // header (largesize, §4.2).
                let mut h = [0u8; 16];
                let large = mdat_size.saturating_add(8).to_be_bytes();
                let parts = 1u32.to_be_bytes().into_iter().chain(*b"mdat").chain(large);
                for (d, s) in h.iter_mut().zip(parts) {
                    *d = s;
                }
                sink.patch_at(self.mdat_at, &h)?;
            }
        }
        for (i, t) in ctx.tracks.iter().enumerate() {
            let st = self.tracks.get(i).copied().unwrap_or_default();
            if st.samples > 0 && needs_config(t.codec) && self.config(ctx, i).is_empty() {
                return Err(Error::unsupported(
                    end,
                    &"mp4 muxer: no codec configuration found for a track (no in-band parameter sets) (ISO/IEC 14496-15 5.3.3)",
                ));
            }
        }
        if self.ahead.1 > 0 {
            return super::muxer_ahead::finish_ahead(self, sink, scratch, store, ctx, self.ahead);
        }
        super::muxer_moov::write_moov(self, sink, scratch, store, ctx, end)
    }

    fn reserve_index(&mut self, bytes: u64) -> Result<()> {
        self.ahead = (0, bytes);
        Ok(())
    }

    fn index_size_ahead(&self, scratch: &[u8], ctx: &MuxContext, end: u64) -> Result<Option<u64>> {
        self.index_size_ahead_spilling(scratch, None, ctx, end)
    }

    fn index_size_ahead_spilling(
        &self,
        scratch: &[u8],
        store: Option<&dyn SpillStore>,
        ctx: &MuxContext,
        end: u64,
    ) -> Result<Option<u64>> {
        super::muxer_ahead::size_ahead(self, scratch, store, ctx, end).map(Some)
    }
}
