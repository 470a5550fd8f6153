//! The muxer on hand-built tracks: its output read back by the demuxer,
//! the live mode, and every refusal an error (never a panic).

extern crate std;
use crate::error::ErrorKind;
use crate::format::mux_traits::{TrackSpec, MAX_CONFIG_BYTES};
use crate::kind::MuxFormat;
use crate::mux::Muxer;
use crate::sink::{Sink, SliceSink, WriterSink};
use crate::source::SliceSource;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use crate::Demuxer;

fn opus() -> Track {
    Track {
        kind: TrackKind::Audio,
        codec: Codec::Opus,
        time_base: Rational::new(1, 48_000),
        sample_rate: 48_000,
        channels: 2,
        ..Track::default()
    }
}

fn vp9() -> Track {
    Track {
        kind: TrackKind::Video,
        codec: Codec::Vp9,
        time_base: Rational::new(1, 90_000),
        width: 64,
        height: 48,
        ..Track::default()
    }
}

const OPUS_HEAD: &[u8] = b"OpusHead\x01\x02\x38\x01\x80\xbb\0\0\0\0\0";

/// Writes 400 packets: video every 40 ms (a keyframe every 50), audio
/// every 20 ms; returns the bytes written.
fn write_sample<K: Sink>(sink: K, format: MuxFormat) -> K {
    let mut m = Muxer::new(sink, format).unwrap();
    assert_eq!(m.add_track(&TrackSpec::new(&vp9())).unwrap(), 0);
    assert_eq!(m.add_track(&TrackSpec::new(&opus()).with_config(OPUS_HEAD)).unwrap(), 1);
    let payload = [0x5Au8; 300];
    for i in 0..400i64 {
        let (track, pts, key) = if i % 3 == 0 {
            (0, (i / 3) * 3600, (i / 3) % 50 == 0)
        } else {
            (1, (i - i / 3) * 960, true)
        };
        let n = 1 + (i as usize % 299);
        let p = Packet::contiguous(track, 0, &payload[..n])
            .with_times(Some(pts), Some(pts), None)
            .with_flags(PacketFlags::keyframe(key));
        m.write_packet(&p).unwrap();
    }
    m.finish().unwrap()
}

#[test]
fn output_reads_back_with_the_same_packets() {
    let mut buf = std::vec![0u8; 1 << 20];
    let out = write_sample(SliceSink::new(&mut buf), MuxFormat::WebM).into_written();
    let mut d = Demuxer::open(SliceSource::new(out), Some("webm")).unwrap();
    assert_eq!(d.tracks().len(), 2);
    assert_eq!(d.tracks()[0].codec, Codec::Vp9);
    assert_eq!(d.codec_config(1).unwrap(), OPUS_HEAD);
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        assert!(p.data.iter().all(|&b| b == 0x5A));
        n += 1;
    }
    assert_eq!(n, 400);
    // Cues were written: a seek lands on a keyframe.
    d.seek(0, 5_000).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert!(p.flags.keyframe);
}

#[test]
fn a_stream_gets_the_live_form_and_the_same_packets() {
    let mut buf = std::vec![0u8; 1 << 20];
    let slice = write_sample(SliceSink::new(&mut buf), MuxFormat::Matroska)
        .into_written()
        .to_vec();
    let mut out = std::vec![0u8; 1 << 20];
    let len = write_sample(WriterSink::new(&mut out[..]), MuxFormat::Matroska).position() as usize;
    let live = &out[..len];
    assert!(live.windows(8).any(|w| w == super::UNKNOWN_SIZE));
    let pull = |b: &[u8]| {
        let mut d = Demuxer::open(SliceSource::new(b), Some("mkv")).unwrap();
        let mut v = std::vec::Vec::new();
        while let Some(p) = d.next_packet().unwrap() {
            v.push((p.track, p.pts, p.flags.keyframe, p.data.len()));
        }
        v
    };
    assert_eq!(pull(&slice), pull(live));
}

#[test]
fn refusals_are_errors() {
    let mut buf = [0u8; 4096];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::WebM).unwrap();
    let h264 = Track {
        codec: Codec::H264,
        ..vp9()
    };
    let e = m.add_track(&TrackSpec::new(&h264).with_config(&[1, 2, 3])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    // Matroska takes H.264, but not without parameter sets.
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Matroska).unwrap();
    assert_eq!(
        m.add_track(&TrackSpec::new(&h264)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    let data = Track {
        kind: TrackKind::Data,
        codec: Codec::BinData,
        ..opus()
    };
    assert_eq!(
        m.add_track(&TrackSpec::new(&data)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    let mut big = std::vec![0u8; MAX_CONFIG_BYTES + 1];
    big[..8].copy_from_slice(b"OpusHead");
    let e = m.add_track(&TrackSpec::new(&opus()).with_config(&big)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded);
    m.add_track(&TrackSpec::new(&opus()).with_config(OPUS_HEAD)).unwrap();
    // Unknown track: refused, the muxer stays usable.
    let p = Packet::contiguous(3, 0, b"x").with_times(Some(0), None, None);
    assert_eq!(m.write_packet(&p).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let p = Packet::contiguous(0, 0, b"x").with_times(Some(9600), None, None);
    m.write_packet(&p).unwrap();
    // Back in time on the same track.
    let p = Packet::contiguous(0, 0, b"x").with_times(Some(960), None, None);
    assert_eq!(m.write_packet(&p).unwrap_err().kind(), ErrorKind::InvalidArgument);
    // A timestamp that does not fit milliseconds.
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Matroska).unwrap();
    let slow = Track {
        time_base: Rational::new(u32::MAX, 1),
        ..opus()
    };
    m.add_track(&TrackSpec::new(&slow).with_config(OPUS_HEAD)).unwrap();
    let p = Packet::contiguous(0, 0, b"x").with_times(Some(i64::MAX / 2), None, None);
    assert_eq!(m.write_packet(&p).unwrap_err().kind(), ErrorKind::InvalidArgument);
    // A full sink.
    let mut small = [0u8; 40];
    let mut m = Muxer::new(SliceSink::new(&mut small), MuxFormat::Matroska).unwrap();
    m.add_track(&TrackSpec::new(&opus()).with_config(OPUS_HEAD)).unwrap();
    let p = Packet::contiguous(0, 0, b"x").with_times(Some(0), None, None);
    assert_eq!(m.write_packet(&p).unwrap_err().kind(), ErrorKind::SinkFull);
}

#[test]
fn annexb_and_adts_are_reframed() {
    // One SPS, PPS, IDR access unit in Annex B; the config is its SPS+PPS.
    let sps = [0x67, 0x42, 0xC0, 0x1E, 0xD9, 0x00, 0xA0, 0x47, 0xFE, 0xC8];
    let pps = [0x68, 0xCE, 0x38, 0x80];
    let mut au = std::vec::Vec::new();
    for nal in [&sps[..], &pps[..], &[0x65, 0x88, 0x84, 0x21][..]] {
        au.extend_from_slice(&[0, 0, 0, 1]);
        au.extend_from_slice(nal);
    }
    let h264 = Track {
        codec: Codec::H264,
        ..vp9()
    };
    let aac = Track {
        codec: Codec::Aac,
        sample_rate: 44_100,
        time_base: Rational::new(1, 44_100),
        ..opus()
    };
    // ADTS: AAC LC, 44.1 kHz, stereo, 12 bytes, no CRC.
    let adts = [0xFF, 0xF1, 0x50, 0x80, 0x01, 0x9F, 0xFC, 1, 2, 3, 4, 5];
    let mut buf = std::vec![0u8; 8192];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Matroska).unwrap();
    m.add_track(&TrackSpec::new(&h264).with_config(&au[..22])).unwrap();
    m.add_track(&TrackSpec::new(&aac).with_config(&adts[..7])).unwrap();
    let p = Packet::contiguous(0, 0, &au)
        .with_times(Some(0), None, None)
        .with_flags(PacketFlags::keyframe(true));
    m.write_packet(&p).unwrap();
    let p = Packet::contiguous(1, 0, &adts).with_times(Some(0), None, None);
    m.write_packet(&p).unwrap();
    let out = m.finish().unwrap().into_written();
    let mut d = Demuxer::open(SliceSource::new(out), Some("mkv")).unwrap();
    assert_eq!(d.codec_config(0).unwrap()[..4], [1, 0x42, 0xC0, 0x1E]);
    assert_eq!(d.codec_config(1).unwrap(), [0x12, 0x10]);
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!(&p.data[..4], &[0, 0, 0, 10]);
    assert_eq!(p.data.len(), au.len());
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!(p.data, [1, 2, 3, 4, 5]);
}

#[test]
fn untimed_packets_follow_the_previous_duration() {
    let t = Track {
        time_base: Rational::new(1, 1000),
        ..vp9()
    };
    let mut buf = std::vec![0u8; 4096];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Matroska).unwrap();
    m.add_track(&TrackSpec::new(&t)).unwrap();
    for _ in 0..3 {
        let p = Packet::contiguous(0, 0, b"frame").with_times(None, None, Some(40));
        m.write_packet(&p).unwrap();
    }
    let out = m.finish().unwrap().into_written();
    let mut d = Demuxer::open(SliceSource::new(out), Some("mkv")).unwrap();
    let mut pts = std::vec::Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        pts.push(p.pts);
    }
    assert_eq!(pts, [Some(0), Some(40), Some(80)]);
}

#[test]
fn cues_are_thinned_when_full_and_stay_ordered() {
    use super::{MkvMuxer, MAX_CUES};
    use crate::format::mux_traits::{FormatMuxer, MuxContext};
    let mut m = MkvMuxer::with_doc_type(false);
    let mut ctx = MuxContext::default();
    let t = Track {
        time_base: Rational::new(1, 1000),
        ..vp9()
    };
    m.add_track(&mut ctx, &TrackSpec::new(&t)).unwrap();
    let mut buf = std::vec![0u8; 1 << 20];
    let mut sink = SliceSink::new(&mut buf);
    m.write_header(&mut sink, &mut [], &mut ctx).unwrap();
    // 3000 keyframes, one every 100 ms: more than MAX_CUES cue points.
    for i in 0..3000i64 {
        let p = Packet::contiguous(0, 0, b"k")
            .with_times(Some(i * 100), None, None)
            .with_flags(PacketFlags::keyframe(true));
        m.write_packet(&mut sink, &mut [], &mut ctx, &p).unwrap();
    }
    assert!(
        m.cues.len() <= MAX_CUES && m.cues.len() > MAX_CUES / 4,
        "{}",
        m.cues.len()
    );
    assert!(m.cues.windows(2).all(|w| w[0].time < w[1].time));
    assert!(m.cue_spacing >= 1000);
    // The last cue point is near the end: later keyframes still get some.
    assert!(m.cues.last().unwrap().time > 290_000 - 2 * m.cue_spacing);
    m.finish(&mut sink, &mut [], &mut ctx).unwrap();
    let out = sink.into_written();
    let mut d = Demuxer::open(SliceSource::new(out), Some("mkv")).unwrap();
    d.seek(0, 150_000).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert!(p.pts.unwrap() <= 150_000 && p.pts.unwrap() > 150_000 - 2 * m.cue_spacing as i64);
}

/// Random tracks, times (extremes included), flags, payloads and sink
/// sizes: errors or output, never a panic.
#[test]
fn noise_never_panics() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let times = [
        0i64,
        1,
        -1,
        32_767,
        -32_768,
        i64::MAX,
        i64::MIN,
        i64::MAX / 3,
        -(1 << 40),
    ];
    let payload = [0u8, 0, 1, 0x65, 0xFF, 0xF1, 0x50, 0x80, 1, 2, 3];
    for round in 0..400 {
        let mut buf = std::vec![0u8; (next() % 4096) as usize];
        let format = if round % 3 == 0 {
            MuxFormat::WebM
        } else {
            MuxFormat::Matroska
        };
        let mut m = Muxer::new(SliceSink::new(&mut buf), format).unwrap();
        let tb = Rational::new(
            (next() % 3) as u32 + 1,
            [1u32, 1000, 90_000, u32::MAX][(next() % 4) as usize],
        );
        let _ = m.add_track(&TrackSpec::new(&Track { time_base: tb, ..vp9() }));
        let _ = m.add_track(&TrackSpec::new(&opus()).with_config(&payload[..(next() % 12) as usize]));
        let h264 = Track {
            codec: Codec::H264,
            ..vp9()
        };
        let _ = m.add_track(&TrackSpec::new(&h264).with_config(&payload[..(next() % 12) as usize]));
        for _ in 0..(next() % 60) {
            let r = next();
            let t = |v: u64| {
                (v % 4 != 0).then(|| times[(v as usize / 4) % times.len()].wrapping_add((v >> 20) as i64 % 5000))
            };
            let p = Packet::contiguous((r % 4) as usize, 0, &payload[..((r >> 8) % 12) as usize])
                .with_times(t(next()), t(next()), (r % 5 == 0).then_some(r >> 40))
                .with_flags(PacketFlags::keyframe(r & 16 != 0));
            if m.write_packet(&p).is_err() && r % 7 == 0 {
                break;
            }
        }
        let _ = m.finish();
    }
}

#[cfg(feature = "chapters")]
#[test]
fn chapters_and_attachments_read_back() {
    use crate::mux::attachments::Attachment;
    use crate::mux::chapters::MuxChapter;
    use crate::tags::{TagKey, TagValue};
    let mut buf = std::vec![0u8; 1 << 16];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Matroska).unwrap();
    m.add_track(&TrackSpec::new(&opus()).with_config(OPUS_HEAD)).unwrap();
    let chapters = [
        MuxChapter {
            id: 7,
            start_ns: 0,
            end_ns: 1_000_000_000,
            title: Some("Intro"),
        },
        MuxChapter {
            id: 9,
            start_ns: 1_000_000_000,
            end_ns: 2_500_000_000,
            title: None,
        },
    ];
    for c in &chapters {
        m.add_chapter(c).unwrap();
    }
    let jpeg = [0xFFu8, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9];
    let files = [Attachment {
        name: "cover.jpg",
        mime: "image/jpeg",
        description: "",
        data: &jpeg,
    }];
    m.write_header_with_attachments(&files).unwrap();
    assert_eq!(
        m.add_chapter(&chapters[0]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let p = Packet::contiguous(0, 0, &[1, 2, 3]).with_times(Some(0), Some(0), Some(960));
    m.write_packet(&p).unwrap();
    let out = m.finish().unwrap().into_written();
    let mut d = Demuxer::open(SliceSource::new(out), None).unwrap();
    let mut got = std::vec::Vec::new();
    while let Some(c) = d.next_chapter().unwrap() {
        got.push((c.id, c.start, c.end, c.title.map(std::string::String::from)));
    }
    assert_eq!(
        got,
        [
            (7, 0, Some(1_000_000_000), Some("Intro".into())),
            (9, 1_000_000_000, Some(2_500_000_000), None)
        ]
    );
    let mut file = None;
    while let Some(t) = d.next_tag().unwrap() {
        if let (TagKey::Text("cover.jpg"), TagValue::Bytes(b)) = (t.key, t.value) {
            file = Some(b.to_vec());
        }
    }
    assert_eq!(file.as_deref(), Some(&jpeg[..]));
    // The image attachment is also an attached-picture track, as ffprobe
    // shows it; its one packet is the file.
    assert_eq!(d.tracks().len(), 2);
    assert!(d.tracks()[1].attached_picture);
    let mut n = [0usize; 2];
    while let Some(p) = d.next_packet().unwrap() {
        n[p.track] += 1;
        if p.track == 1 {
            assert_eq!(p.data, jpeg);
        }
    }
    assert_eq!(n, [1, 1]);
}

#[test]
fn formats_without_attachments_refuse_them() {
    use crate::mux::attachments::Attachment;
    let mut buf = std::vec![0u8; 1 << 12];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Dump).unwrap();
    m.add_track(&TrackSpec::new(&opus())).unwrap();
    let files = [Attachment {
        name: "a.bin",
        mime: "application/octet-stream",
        description: "",
        data: &[1],
    }];
    let e = m.write_header_with_attachments(&files).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
}

#[test]
fn subtitles_go_in_block_groups_with_their_duration() {
    let srt = Track {
        kind: TrackKind::Subtitle,
        codec: Codec::Subrip,
        time_base: Rational::new(1, 1000),
        ..Track::default()
    };
    let mut buf = std::vec![0u8; 1 << 14];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Matroska).unwrap();
    m.add_track(&TrackSpec::new(&opus()).with_config(OPUS_HEAD)).unwrap();
    m.add_track(&TrackSpec::new(&srt)).unwrap();
    let cues: [(i64, Option<u64>, &[u8]); 3] = [
        (500, Some(700), b"Hello"),
        (1500, Some(1250), b"World"),
        (3000, None, b"?"),
    ];
    for (i, &(pts, dur, text)) in cues.iter().enumerate() {
        let a = Packet::contiguous(0, 0, &[1, 2, 3]).with_times(Some(i as i64 * 48_000), None, Some(960));
        m.write_packet(&a.with_flags(PacketFlags::keyframe(true))).unwrap();
        let p = Packet::contiguous(1, 0, text)
            .with_times(Some(pts), Some(pts), dur)
            .with_flags(PacketFlags::keyframe(true));
        m.write_packet(&p).unwrap();
    }
    let out = m.finish().unwrap().into_written();
    let mut d = Demuxer::open(SliceSource::new(out), None).unwrap();
    let mut got = std::vec::Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        if p.track == 1 {
            got.push((p.pts, p.duration, p.flags.keyframe, p.data.to_vec()));
        } else {
            assert!(p.flags.keyframe);
        }
    }
    assert_eq!(
        got,
        [
            (Some(500), Some(700), true, b"Hello".to_vec()),
            (Some(1500), Some(1250), true, b"World".to_vec()),
            (Some(3000), None, true, b"?".to_vec()),
        ]
    );
}

/// Writes four CELT 20 ms Opus packets (960 samples each by their TOC
/// byte) of durations 960, 600, 960 and 312: the second and the last are
/// shorter than they hold.
fn write_trimmed<K: Sink>(sink: K) -> K {
    let mut m = Muxer::new(sink, MuxFormat::Matroska).unwrap();
    m.add_track(&TrackSpec::new(&opus()).with_config(OPUS_HEAD)).unwrap();
    let payload = [0xF8u8, 1, 2, 3];
    let mut pts = 0;
    for d in [960u64, 600, 960, 312] {
        let p = Packet::contiguous(0, 0, &payload)
            .with_times(Some(pts), Some(pts), Some(d))
            .with_flags(PacketFlags::keyframe(true));
        m.write_packet(&p).unwrap();
        pts += d as i64;
    }
    m.finish().unwrap()
}

/// How often `needle` is in `hay`.
fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

#[test]
fn an_opus_end_trim_becomes_the_last_blocks_discard_padding() {
    let mut buf = std::vec![0u8; 1 << 16];
    let out = write_trimmed(SliceSink::new(&mut buf)).into_written();
    // The last packet: 648 samples at 48 kHz past its duration, 13.5 ms
    // (RFC 9559 §5.1.3.5.6: DiscardPadding in ns, eight bytes here).
    let mut padding = std::vec![0x75, 0xA2, 0x88];
    padding.extend_from_slice(&13_500_000i64.to_be_bytes());
    assert_eq!(count(out, &padding), 1);
    assert_eq!(count(out, &[0x75, 0xA2]), 1, "only the last Block has one");
    // The second packet's padding, written before the third showed that
    // the track went on, became a Void of its 11 bytes.
    let void = [0xEC, 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(count(out, &void), 1);
    let mut d = Demuxer::open(SliceSource::new(out), Some("mkv")).unwrap();
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        assert_eq!(p.data, [0xF8, 1, 2, 3]);
        n += 1;
    }
    assert_eq!(n, 4);
    // A sink that cannot patch: no DiscardPadding at all.
    let mut out = std::vec![0u8; 1 << 16];
    let len = write_trimmed(WriterSink::new(&mut out[..])).position() as usize;
    assert_eq!(count(&out[..len], &[0x75, 0xA2]), 0);
}
