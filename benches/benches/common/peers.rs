//! Drivers for the Rust peers, one function per crate, each doing what its
//! API offers for "open, then every packet" over the same mapped bytes as
//! mediaslice, with the same CRC code (`mediaslice::crc::Crc32`) in CRC
//! mode. `None` means the peer cannot do that mode or cannot read the file.
//!
//! What each peer does per packet is listed in `benches/README.md`: where a
//! crate has no headers-only path (it copies every payload), its headers
//! mode is that copy; the mp4 crate has no headers-only path at all and runs
//! in CRC mode only.

use mediaslice::crc::Crc32;
use mediaslice_benches::{Counts, Family, Mode, Peer};
use std::hint::black_box;
use std::io::Cursor;

/// Runs `peer` on `data` (a file of `family`) in `mode`.
pub fn run(peer: Peer, family: &Family, data: &'static [u8], mode: Mode) -> Option<Counts> {
    match peer {
        Peer::Symphonia => symphonia_run(family.name, data, mode),
        Peer::ReMp4 => re_mp4_run(data, mode),
        Peer::Mp4 => mp4_run(data, mode),
        Peer::Mpeg2tsReader => ts::run(data, mode),
        Peer::Hound => hound_run(data, mode),
        Peer::MatroskaDemuxer => mkv_run(data, mode),
        Peer::Ogg => ogg_run(data, mode),
    }
}

struct Acc {
    c: Counts,
    crc: Crc32,
    mode: Mode,
    hdr: u64,
}

impl Acc {
    fn new(mode: Mode) -> Self {
        Acc {
            c: Counts::default(),
            crc: Crc32::new(),
            mode,
            hdr: 0,
        }
    }
    #[inline(always)]
    fn packet(&mut self, header: u64, data: &[u8]) {
        self.c.packets += 1;
        self.c.bytes += data.len() as u64;
        match self.mode {
            Mode::Headers => self.hdr = self.hdr.wrapping_add(header),
            Mode::Crc => self.crc.update(data),
        }
    }
    fn finish(mut self) -> Counts {
        black_box(self.hdr);
        if self.mode == Mode::Crc {
            self.c.crc = self.crc.finish();
        }
        self.c
    }
}

fn symphonia_run(family: &str, data: &'static [u8], mode: Mode) -> Option<Counts> {
    use symphonia::core::formats::{FormatOptions, FormatReader};
    use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
    use symphonia::default::formats as f;

    fn go<R: FormatReader>(data: &'static [u8], mode: Mode) -> Option<Counts> {
        let mss = MediaSourceStream::new(Box::new(Cursor::new(data)), MediaSourceStreamOptions::default());
        let mut r = R::try_new(mss, &FormatOptions::default()).ok()?;
        let mut acc = Acc::new(mode);
        while let Ok(p) = r.next_packet() {
            acc.packet(p.ts.wrapping_add(p.track_id() as u64).wrapping_add(p.dur), p.buf());
        }
        Some(acc.finish())
    }
    match family {
        "mp4" => go::<f::IsoMp4Reader>(data, mode),
        "wav" => go::<f::WavReader>(data, mode),
        "aiff" => go::<f::AiffReader>(data, mode),
        "caf" => go::<f::CafReader>(data, mode),
        "mkv" => go::<f::MkvReader>(data, mode),
        "ogg" => go::<f::OggReader>(data, mode),
        "flac" => go::<f::FlacReader>(data, mode),
        "mp3" => go::<f::MpaReader>(data, mode),
        "adts" => go::<f::AdtsReader>(data, mode),
        _ => None,
    }
}

fn re_mp4_run(data: &'static [u8], mode: Mode) -> Option<Counts> {
    let mp4 = re_mp4::Mp4::read_bytes(data).ok()?;
    let mut acc = Acc::new(mode);
    for track in mp4.tracks().values() {
        for s in &track.samples {
            let payload: &[u8] = match mode {
                // Headers mode: the sample's range is known without touching
                // it; count its length only.
                Mode::Headers => {
                    acc.c.packets += 1;
                    acc.c.bytes += s.size;
                    acc.hdr = acc
                        .hdr
                        .wrapping_add(s.decode_timestamp as u64)
                        .wrapping_add(s.composition_timestamp as u64)
                        .wrapping_add(s.is_sync as u64);
                    continue;
                }
                Mode::Crc => data.get(s.byte_range())?,
            };
            acc.packet(0, payload);
        }
    }
    Some(acc.finish())
}

fn mp4_run(data: &'static [u8], mode: Mode) -> Option<Counts> {
    if mode == Mode::Headers {
        return None;
    }
    let mut r = mp4::Mp4Reader::read_header(Cursor::new(data), data.len() as u64).ok()?;
    let mut ids: Vec<u32> = r.tracks().keys().copied().collect();
    ids.sort_unstable();
    let mut acc = Acc::new(mode);
    for id in ids {
        let n = r.sample_count(id).ok()?;
        for s in 1..=n {
            match r.read_sample(id, s) {
                Ok(Some(sample)) => acc.packet(sample.start_time, &sample.bytes),
                _ => break,
            }
        }
    }
    Some(acc.finish())
}

fn hound_run(data: &'static [u8], mode: Mode) -> Option<Counts> {
    if mode == Mode::Headers {
        // No packets to walk: only the header, which is not comparable.
        return None;
    }
    let r = hound::WavReader::new(Cursor::new(data)).ok()?;
    let spec = r.spec();
    let samples = r.len() as u64;
    black_box(r.duration());
    let start = r.into_inner().position() as usize;
    let len = samples * spec.bits_per_sample.div_ceil(8) as u64;
    let payload = data.get(start..start.checked_add(len as usize)?)?;
    // hound has no packets: the data chunk is one range (its sample
    // iterators decode to integers, which is not demuxing).
    let mut acc = Acc::new(mode);
    acc.packet(samples, payload);
    Some(acc.finish())
}

fn mkv_run(data: &'static [u8], mode: Mode) -> Option<Counts> {
    let mut m = matroska_demuxer::MatroskaFile::open(Cursor::new(data)).ok()?;
    let mut frame = matroska_demuxer::Frame::default();
    let mut acc = Acc::new(mode);
    while let Ok(true) = m.next_frame(&mut frame) {
        acc.packet(frame.timestamp.wrapping_add(frame.track), &frame.data);
    }
    Some(acc.finish())
}

fn ogg_run(data: &'static [u8], mode: Mode) -> Option<Counts> {
    let mut r = ogg::PacketReader::new(Cursor::new(data));
    let mut acc = Acc::new(mode);
    while let Ok(Some(p)) = r.read_packet() {
        acc.packet(p.absgp_page().wrapping_add(p.stream_serial() as u64), &p.data);
    }
    Some(acc.finish())
}

/// mpeg2ts-reader needs a demux context type; its counters live there.
mod ts {
    use super::Acc;
    use mediaslice_benches::{Counts, Mode};
    use mpeg2ts_reader::demultiplex::{
        self, DemuxContext, FilterChangeset, FilterRequest, NullPacketFilter, PatPacketFilter, PmtPacketFilter,
    };
    use mpeg2ts_reader::{packet_filter_switch, pes, psi};

    packet_filter_switch! {
        Filters<Ctx> {
            Pat: PatPacketFilter<Ctx>,
            Pmt: PmtPacketFilter<Ctx>,
            Null: NullPacketFilter<Ctx>,
            Pes: pes::PesPacketFilter<Ctx, Consumer>,
        }
    }

    pub struct Ctx {
        changeset: FilterChangeset<Filters>,
        acc: Acc,
    }

    impl DemuxContext for Ctx {
        type F = Filters;
        fn filter_changeset(&mut self) -> &mut FilterChangeset<Filters> {
            &mut self.changeset
        }
        fn construct(&mut self, req: FilterRequest<'_, '_>) -> Filters {
            match req {
                FilterRequest::ByPid(psi::pat::PAT_PID) => Filters::Pat(PatPacketFilter::default()),
                FilterRequest::ByPid(_) | FilterRequest::Nit { .. } => Filters::Null(NullPacketFilter::default()),
                FilterRequest::ByStream { .. } => Filters::Pes(pes::PesPacketFilter::new(Consumer)),
                FilterRequest::Pmt { pid, program_number } => Filters::Pmt(PmtPacketFilter::new(pid, program_number)),
            }
        }
    }

    pub struct Consumer;

    impl pes::ElementaryStreamConsumer<Ctx> for Consumer {
        fn start_stream(&mut self, _: &mut Ctx) {}
        fn begin_packet(&mut self, ctx: &mut Ctx, header: pes::PesHeader<'_>) {
            // One PES packet; its first payload piece is in this TS packet.
            ctx.acc.c.packets += 1;
            if let pes::PesContents::Parsed(Some(content)) = header.contents() {
                let ts = match content.pts_dts() {
                    Ok(pes::PtsDts::PtsOnly(Ok(t))) => t.value(),
                    Ok(pes::PtsDts::Both { pts: Ok(t), .. }) => t.value(),
                    _ => 0,
                };
                ctx.acc.hdr = ctx.acc.hdr.wrapping_add(ts);
                piece(ctx, content.payload());
            }
        }
        fn continue_packet(&mut self, ctx: &mut Ctx, data: &[u8]) {
            piece(ctx, data);
        }
        fn end_packet(&mut self, _: &mut Ctx) {}
        fn continuity_error(&mut self, _: &mut Ctx) {}
    }

    #[inline(always)]
    fn piece(ctx: &mut Ctx, data: &[u8]) {
        ctx.acc.c.bytes += data.len() as u64;
        if ctx.acc.mode == Mode::Crc {
            ctx.acc.crc.update(data);
        }
    }

    pub fn run(data: &[u8], mode: Mode) -> Option<Counts> {
        let mut ctx = Ctx {
            changeset: FilterChangeset::default(),
            acc: Acc::new(mode),
        };
        let mut demux = demultiplex::Demultiplex::new(&mut ctx);
        demux.push(&mut ctx, data);
        Some(ctx.acc.finish())
    }
}
