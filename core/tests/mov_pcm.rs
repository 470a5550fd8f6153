//! Uncompressed audio in MOV output (`core/src/format/mp4/muxer_pcm.rs`):
//! the sound description version and type each codec and rate get, the
//! frame-per-sample tables read back by our demuxer with every byte in
//! order, and the inputs refused (MP4 output, a time base that is not the
//! sample rate, a packet of part of a frame). ffmpeg's view of the same
//! files: `std-adapter/tests/remux_mov_pcm.rs`.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mediaslice::{
    Codec, Demuxer, ErrorKind, MuxFormat, Muxer, Packet, Rational, SliceSink, SliceSource, Track, TrackKind, TrackSpec,
};

fn pcm(codec: Codec, rate: u32, channels: u16) -> Track {
    Track {
        kind: TrackKind::Audio,
        codec,
        time_base: Rational::new(1, rate),
        sample_rate: rate,
        channels,
        ..Track::default()
    }
}

/// A MOV of `t` from packets of `sizes` bytes (counting bytes as data).
fn write(t: &Track, sizes: &[usize]) -> Vec<u8> {
    let mut out = vec![0u8; 1 << 20];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mov, vec![0u8; 4096]).unwrap();
    m.add_track(&TrackSpec::new(t)).unwrap();
    let frame = t.channels as usize * bytes_of(t.codec);
    let (mut at, mut n) = (0usize, 0u8);
    for &size in sizes {
        let data: Vec<u8> = (0..size)
            .map(|_| {
                n = n.wrapping_add(1);
                n
            })
            .collect();
        let ts = (at / frame) as i64;
        m.write_packet(&Packet::contiguous(0, 0, &data).with_times(Some(ts), Some(ts), None))
            .unwrap();
        at += size;
    }
    let sink = m.finish().unwrap();
    sink.written().to_vec()
}

fn bytes_of(c: Codec) -> usize {
    match c {
        Codec::PcmU8 | Codec::PcmS8 | Codec::PcmAlaw | Codec::PcmMulaw => 1,
        Codec::PcmS16Le | Codec::PcmS16Be => 2,
        Codec::PcmS24Le | Codec::PcmS24Be => 3,
        Codec::PcmF64Le | Codec::PcmF64Be => 8,
        _ => 4,
    }
}

/// The first sample entry of `stsd`: its type and sound description version.
fn entry(file: &[u8]) -> ([u8; 4], u16) {
    let at = file.windows(4).position(|w| w == b"stsd").expect("an stsd box");
    // stsd: type, version/flags, entry count; then the entry's size, type,
    // 6 reserved bytes, data reference index, version.
    let e = &file[at + 12..];
    (e[4..8].try_into().unwrap(), u16::from_be_bytes([e[16], e[17]]))
}

#[test]
fn each_codec_gets_the_quicktime_description_and_reads_back_whole() {
    let cases: &[(Codec, u32, u16, &[u8; 4], u16)] = &[
        (Codec::PcmU8, 8_000, 1, b"raw ", 0),
        (Codec::PcmS8, 8_000, 1, b"twos", 0),
        (Codec::PcmS16Le, 44_100, 2, b"sowt", 0),
        (Codec::PcmS16Be, 44_100, 2, b"twos", 0),
        (Codec::PcmS24Le, 48_000, 2, b"in24", 1),
        (Codec::PcmS24Be, 48_000, 2, b"in24", 1),
        (Codec::PcmS32Le, 48_000, 6, b"in32", 1),
        (Codec::PcmF32Le, 48_000, 1, b"fl32", 1),
        (Codec::PcmF64Be, 44_100, 1, b"fl64", 1),
        (Codec::PcmAlaw, 8_000, 1, b"alaw", 0),
        (Codec::PcmMulaw, 8_000, 2, b"ulaw", 0),
        (Codec::PcmS24Le, 96_000, 2, b"lpcm", 2),
        (Codec::PcmF32Le, 192_000, 1, b"lpcm", 2),
    ];
    for &(codec, rate, channels, fourcc, version) in cases {
        let t = pcm(codec, rate, channels);
        let frame = channels as usize * bytes_of(codec);
        // Uneven packets, as WAV and AIFF readers give at the end.
        let sizes = [frame * 1024, frame * 1024, frame * 300, frame * 7];
        let file = write(&t, &sizes);
        let label = format!("{codec:?} {rate} Hz {channels} ch");
        assert_eq!(entry(&file), (*fourcc, version), "{label}");
        let mut d = Demuxer::open(SliceSource::new(&file), Some("mov")).unwrap();
        let got = d.tracks()[0].clone();
        assert_eq!(
            (got.codec, got.sample_rate, got.channels),
            (codec, rate, channels),
            "{label}"
        );
        // The reader cuts the one chunk into its own packets; the bytes,
        // in order, and the frame count are the input's.
        let (mut bytes, mut n, mut next_pts) = (Vec::new(), 0u8, 0i64);
        while let Some(p) = d.next_packet().unwrap() {
            assert_eq!(p.pts, Some(next_pts), "{label}: packets follow each other");
            assert_eq!(p.data.len() % frame, 0, "{label}: whole frames");
            next_pts += (p.data.len() / frame) as i64;
            bytes.extend_from_slice(p.data);
        }
        let want: Vec<u8> = (0..sizes.iter().sum::<usize>())
            .map(|_| {
                n = n.wrapping_add(1);
                n
            })
            .collect();
        assert_eq!(bytes, want, "{label}: the bytes in order");
        assert_eq!(next_pts, (want.len() / frame) as i64, "{label}: frames");
    }
}

#[test]
fn mp4_output_a_foreign_time_base_and_part_frames_are_refused() {
    let t = pcm(Codec::PcmS16Le, 48_000, 2);
    let mut out = vec![0u8; 1 << 16];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mp4, vec![0u8; 64]).unwrap();
    let e = m.add_track(&TrackSpec::new(&t)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(format!("{e}").contains("MOV"), "{e}");

    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mov, vec![0u8; 4096]).unwrap();
    let ms = Track {
        time_base: Rational::new(1, 1000),
        ..t.clone()
    };
    assert_eq!(
        m.add_track(&TrackSpec::new(&ms)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    let silent = Track {
        channels: 0,
        ..t.clone()
    };
    assert_eq!(
        m.add_track(&TrackSpec::new(&silent)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    assert_eq!(m.add_track(&TrackSpec::new(&t)).unwrap(), 0);
    m.write_packet(&Packet::contiguous(0, 0, &[0u8; 8]).with_times(Some(0), Some(0), None))
        .unwrap();
    // 4 bytes a frame: 6 bytes is a frame and a half.
    let e = m
        .write_packet(&Packet::contiguous(0, 0, &[0u8; 6]).with_times(Some(2), Some(2), None))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(format!("{e}").contains("whole frames"), "{e}");
}
