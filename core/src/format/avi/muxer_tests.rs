//! The AVI muxer on hand-built tracks: its output read back by the
//! demuxer (times, flags, payloads), the gap filling, the spilled index,
//! and every refusal an error.

extern crate std;
use crate::error::ErrorKind;
use crate::format::mux_traits::TrackSpec;
use crate::kind::MuxFormat;
use crate::mux::Muxer;
use crate::sink::{NoSpill, Sink, SliceSink, SpillStore, WriterSink};
use crate::source::SliceSource;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use crate::{Demuxer, FormatKind};
use std::vec::Vec;

fn mpeg4() -> Track {
    Track {
        kind: TrackKind::Video,
        codec: Codec::Mpeg4,
        codec_tag: u32::from_be_bytes(*b"XVID"),
        time_base: Rational::new(1, 12_800),
        width: 64,
        height: 48,
        ..Track::default()
    }
}

fn pcm() -> Track {
    Track {
        kind: TrackKind::Audio,
        codec: Codec::PcmS16Le,
        time_base: Rational::new(1, 8000),
        sample_rate: 8000,
        channels: 2,
        bits_per_sample: 16,
        ..Track::default()
    }
}

/// A VOP start code and `vop_coding_type` I (0) or P (1).
fn vop(key: bool, n: usize) -> Vec<u8> {
    let mut v = std::vec![0, 0, 1, 0xB6, if key { 0x00 } else { 0x40 }];
    v.resize(n, 0x33);
    v
}

/// Writes 30 video frames of 512 ticks (frame 10 missing: a gap) and PCM
/// audio in 1000-byte chunks; returns the file's length.
fn write_sample<S: SpillStore>(buf: &mut [u8], scratch: Vec<u8>, store: S, memory: usize) -> usize {
    let mut m = Muxer::with_scratch(SliceSink::new(buf), MuxFormat::Avi, scratch)
        .unwrap()
        .with_index_spill(store, memory);
    m.add_track(&TrackSpec::new(&mpeg4()).with_config(&[0, 0, 1, 0xB0, 1]))
        .unwrap();
    m.add_track(&TrackSpec::new(&pcm())).unwrap();
    m.add_tag("title", "a title").unwrap();
    let audio = [7u8; 1000];
    for i in 0..30i64 {
        if i == 10 {
            continue;
        }
        let data = vop(i % 12 == 0, 101 + i as usize);
        let p = Packet::contiguous(0, 0, &data)
            .with_times(Some(i * 512), Some(i * 512), Some(512))
            .with_flags(PacketFlags::keyframe(i % 12 == 0));
        m.write_packet(&p).unwrap();
        let a = Packet::contiguous(1, 0, &audio).with_flags(PacketFlags::keyframe(true));
        m.write_packet(&a).unwrap();
    }
    m.finish().unwrap().position() as usize
}

#[test]
fn written_avi_reads_back_with_times_flags_and_payloads() {
    let mut buf = std::vec![0u8; 1 << 16];
    let n = write_sample(&mut buf, std::vec![0u8; 4096], NoSpill, usize::MAX);
    let file = &buf[..n];
    assert_eq!(&file[..4], b"RIFF");
    assert_eq!(u32::from_le_bytes(file[4..8].try_into().unwrap()) as usize, n - 8);
    let mut d = Demuxer::open(SliceSource::new(file), None).unwrap();
    assert_eq!(d.format(), FormatKind::Avi);
    let t = d.tracks().to_vec();
    assert_eq!((t[0].codec, t[0].width, t[0].height), (Codec::Mpeg4, 64, 48));
    assert_eq!(t[0].time_base, Rational::new(1, 25));
    assert_eq!(t[0].codec_tag, u32::from_be_bytes(*b"XVID"));
    // 30 frames counted: 29 packets and one empty chunk for the gap.
    assert_eq!(t[0].frames, Some(30));
    assert_eq!(
        (t[1].codec, t[1].sample_rate, t[1].channels),
        (Codec::PcmS16Le, 8000, 2)
    );
    assert_eq!(d.codec_config(0).unwrap(), &[0, 0, 1, 0xB0, 1]);
    let (mut video, mut audio) = (Vec::new(), 0usize);
    while let Some(p) = d.next_packet().unwrap() {
        if p.track == 0 {
            video.push((p.dts.unwrap(), p.flags.keyframe, p.data.len()));
        } else {
            audio += p.data.len();
        }
    }
    let want: Vec<_> = (0..30i64)
        .filter(|&i| i != 10)
        .map(|i| (i, i % 12 == 0, 101 + i as usize))
        .collect();
    assert_eq!(video, want);
    assert_eq!(audio, 29 * 1000);
    let mut title = None;
    while let Some(tag) = d.next_tag().unwrap() {
        if tag.name == Some("title") {
            title = Some(std::format!("{:?}", tag.value));
        }
    }
    assert!(title.is_some_and(|v| v.contains("a title")));
}

#[test]
fn a_spilled_index_gives_the_same_file() {
    let mut a = std::vec![0u8; 1 << 16];
    let n = write_sample(&mut a, std::vec![0u8; 4096], NoSpill, usize::MAX);
    let mut b = std::vec![0u8; 1 << 16];
    let mut store_buf = [0u8; 2048];
    let mut store = SliceSink::new(&mut store_buf);
    let m = write_sample(&mut b, std::vec![0u8; 4096], &mut store, 64);
    assert!(store.written().len() >= 16 * 50, "the index went to the store");
    assert_eq!(&a[..n], &b[..m]);
}

/// avcC with one SPS `67 42` and one PPS `68 ce`, 4-byte lengths.
const AVCC: &[u8] = &[1, 0x42, 0xC0, 0x0B, 0xFF, 0xE1, 0, 2, 0x67, 0x42, 1, 0, 2, 0x68, 0xCE];

/// H.264 from MP4 (length-prefixed, `avcC`) is written as Annex B with the
/// parameter sets before the IDR picture and as the configuration; AAC
/// from ADTS loses its headers and gets its AudioSpecificConfig.
#[test]
fn avcc_and_adts_are_converted() {
    let avc = Track {
        codec: Codec::H264,
        codec_tag: u32::from_be_bytes(*b"avc1"),
        ..mpeg4()
    };
    let aac = Track {
        codec: Codec::Aac,
        time_base: Rational::new(1, 1000),
        sample_rate: 48_000,
        ..pcm()
    };
    // ADTS: AAC LC (profile 1), 48 kHz (index 3), 2 channels, frame 7 + 3 bytes.
    let adts = |len: u16| crate::codec::adts::test_header(0x4C, 7 + len);
    let mut buf = std::vec![0u8; 1 << 14];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut buf), MuxFormat::Avi, [0u8; 256]).unwrap();
    m.add_track(&TrackSpec::new(&avc).with_config(AVCC)).unwrap();
    m.add_track(&TrackSpec::new(&aac).with_config(&adts(3))).unwrap();
    m.write_header().unwrap();
    let samples: [&[u8]; 3] = [
        &[0, 0, 0, 2, 0x65, 0x88],
        &[0, 0, 0, 2, 0x41, 0x9A],
        &[0, 0, 0, 2, 0x65, 0x88],
    ];
    for (i, s) in samples.iter().enumerate() {
        let p = Packet::contiguous(0, 0, s)
            .with_times(Some(i as i64 * 512), Some(i as i64 * 512), Some(512))
            .with_flags(PacketFlags::keyframe(i != 1));
        m.write_packet(&p).unwrap();
        // AAC frames 21 ms apart as Matroska rounds them: counted as 1024 samples.
        let mut frame = adts(3).to_vec();
        frame.extend_from_slice(&[i as u8, 2, 3]);
        let p = Packet::contiguous(1, 0, &frame).with_times(Some(i as i64 * 21), Some(i as i64 * 21), Some(21));
        m.write_packet(&p).unwrap();
    }
    let n = m.finish().unwrap().position() as usize;
    let mut d = Demuxer::open(SliceSource::new(&buf[..n]), None).unwrap();
    let t = d.tracks().to_vec();
    assert_eq!(t[0].codec_tag, u32::from_be_bytes(*b"H264"));
    assert_eq!(
        d.codec_config(0).unwrap(),
        &[0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xCE]
    );
    assert_eq!((t[1].codec, t[1].sample_rate, t[1].channels), (Codec::Aac, 48_000, 2));
    // 1024 / 48000 s a frame, reduced.
    assert_eq!(t[1].time_base, Rational::new(8, 375));
    // AudioSpecificConfig: LC (2), 48 kHz (3), 2 channels.
    assert_eq!(d.codec_config(1).unwrap(), &[0x11, 0x90]);
    let idr: &[u8] = &[0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xCE, 0, 0, 1, 0x65, 0x88];
    let want: [&[u8]; 3] = [idr, &[0, 0, 0, 1, 0x41, 0x9A], idr];
    let (mut video, mut audio) = (Vec::new(), Vec::new());
    while let Some(p) = d.next_packet().unwrap() {
        if p.track == 0 {
            video.push(p.data.to_vec());
        } else {
            audio.push((p.dts, p.data.to_vec()));
        }
    }
    assert_eq!(video, want.map(<[u8]>::to_vec));
    let want: Vec<_> = (0..3u8).map(|i| (Some(i64::from(i)), std::vec![i, 2, 3])).collect();
    assert_eq!(audio, want);
}

#[test]
fn refusals_are_errors() {
    // No scratch and no store: the idx1 has no room.
    let mut buf = std::vec![0u8; 1 << 16];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Avi).unwrap();
    m.add_track(&TrackSpec::new(&pcm())).unwrap();
    let e = m.write_packet(&Packet::contiguous(0, 0, &[1, 2])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded);
    // A stream sink cannot be patched.
    let mut out = [0u8; 512];
    let mut m = Muxer::new(WriterSink::new(&mut out[..]), MuxFormat::Avi).unwrap();
    m.add_track(&TrackSpec::new(&pcm())).unwrap();
    assert_eq!(m.write_header().unwrap_err().kind(), ErrorKind::Unsupported);
    // Codecs AVI is not given.
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Avi).unwrap();
    let opus = Track {
        codec: Codec::Opus,
        ..pcm()
    };
    assert_eq!(
        m.add_track(&TrackSpec::new(&opus)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    let avc = Track {
        codec: Codec::H264,
        ..mpeg4()
    };
    // An avcC cut short does not parse.
    let e = m
        .add_track(&TrackSpec::new(&avc).with_config(&[1, 0x64, 0, 0x1F]))
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Malformed | ErrorKind::Truncated), "{e:?}");
    // AAC with no configuration, and an ADTS header that does not parse.
    let aac = Track {
        codec: Codec::Aac,
        ..pcm()
    };
    let e = m.add_track(&TrackSpec::new(&aac)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    let e = m
        .add_track(&TrackSpec::new(&aac).with_config(&[0xFF, 0xF1, 0, 0]))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_eq!(
        m.add_track(&TrackSpec::new(&avc).with_config(&[0, 0, 0, 1, 0x67]))
            .unwrap(),
        0
    );
    // A jump of more than MAX_GAP frames.
    let mut m = Muxer::with_scratch(SliceSink::new(&mut buf), MuxFormat::Avi, [0u8; 256]).unwrap();
    m.add_track(&TrackSpec::new(&mpeg4())).unwrap();
    let p = Packet::contiguous(0, 0, &[1]).with_times(None, Some(0), Some(1));
    m.write_packet(&p).unwrap();
    let far = super::muxer::MAX_GAP as i64 + 2;
    let p = Packet::contiguous(0, 0, &[1]).with_times(None, Some(far), Some(1));
    assert_eq!(m.write_packet(&p).unwrap_err().kind(), ErrorKind::Unsupported);
}

/// RIFFs of at most 16 KiB: the movie goes on in `RIFF AVIX`es with `ix##`
/// standard indexes and an `indx` super index per stream, which our
/// reader reads (OpenDML mode) to the same packets; the idx1 covers the
/// first RIFF. The index is spilled past 64 bytes.
#[test]
fn opendml_riffs_read_back_through_their_indexes() {
    use super::muxer::AviMuxer;
    use crate::format::mux_traits::{FormatMuxer, MuxContext};
    use crate::sink::Spill;
    let mut buf = std::vec![0u8; 1 << 20];
    let mut store_buf = std::vec![0u8; 1 << 16];
    let mut store = SliceSink::new(&mut store_buf);
    let mut scratch = [0u8; 256];
    let mut ctx = MuxContext::default();
    let mut m = AviMuxer::with_riff_limit(16 << 10);
    m.add_track(&mut ctx, &TrackSpec::new(&mpeg4())).unwrap();
    m.add_track(&mut ctx, &TrackSpec::new(&pcm())).unwrap();
    let mut sink = SliceSink::new(&mut buf);
    let mut spill = Spill {
        store: Some(&mut store),
        memory: 64,
    };
    m.write_header(&mut sink, &mut scratch, &mut ctx).unwrap();
    let audio = [9u8; 400];
    let mut want = Vec::new();
    for i in 0..120i64 {
        let data = vop(i % 10 == 0, 150 + (i as usize * 37) % 700);
        let p = Packet::contiguous(0, 0, &data)
            .with_times(Some(i), Some(i), Some(1))
            .with_flags(PacketFlags::keyframe(i % 10 == 0));
        m.write_packet_spilling(&mut sink, &mut scratch, &mut spill, &mut ctx, &p)
            .unwrap();
        want.push((0usize, i, i % 10 == 0, data.len()));
        let a = Packet::contiguous(1, 0, &audio).with_flags(PacketFlags::keyframe(true));
        m.write_packet_spilling(&mut sink, &mut scratch, &mut spill, &mut ctx, &a)
            .unwrap();
        want.push((1usize, i * 100, true, 400));
    }
    m.finish_spilling(&mut sink, &mut scratch, &mut spill, &mut ctx)
        .unwrap();
    let file = sink.written();
    let count = |pat: &[u8]| file.windows(4).filter(|w| *w == pat).count();
    assert!(count(b"AVIX") >= 5, "{} AVIX", count(b"AVIX"));
    assert_eq!(count(b"indx"), 2);
    assert_eq!(count(b"idx1"), 1);
    let mut d = Demuxer::open(SliceSource::new(file), None).unwrap();
    assert_eq!(d.tracks()[0].frames, Some(120));
    let mut got = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        got.push((p.track, p.dts.unwrap(), p.flags.keyframe, p.data.len()));
    }
    let diags: Vec<_> = d.diagnostics().iter().map(|(x, _)| x.code).collect();
    assert!(
        diags.iter().all(|c| !c.starts_with("avi.odml") && *c != "avi.no-index"),
        "{diags:?}"
    );
    assert_eq!(got, want);
    // RIFFs over one at their limit: each RIFF's size is at most 16 KiB.
    let mut at = 0usize;
    while at + 8 <= file.len() {
        let size = u32::from_le_bytes(file[at + 4..at + 8].try_into().unwrap()) as usize;
        assert_eq!(&file[at..at + 4], b"RIFF");
        assert!(size + 8 <= 16 << 10, "a RIFF of {size} bytes at {at}");
        at += 8 + size;
    }
    assert_eq!(at, file.len());
}
