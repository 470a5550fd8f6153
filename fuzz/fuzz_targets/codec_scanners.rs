#![no_main]
//! Fuzzes the reusable frame scanners of `mediaslice::codec` directly (the
//! MPEG-TS/PS readers feed them PES payloads): headers, SPS parsers, the
//! access-unit and frame splitters fed in uneven chunks; and the probe-time
//! picture facts (`codec::facts`, `codec::image`).
use libfuzzer_sys::fuzz_target;
use mediaslice::codec::{ac3, adts, annexb, av1, facts, h264, hevc, image, mpa, mpeg4v, mpegvideo};
use mediaslice::Codec;

fuzz_target!(|data: &[u8]| {
    let _ = mpa::MpaHeader::parse_bytes(data).map(|h| mpa::parse_vbr(data, &h));
    let _ = adts::AdtsHeader::parse(data);
    let _ = ac3::Ac3Header::parse(data);
    let _ = ac3::frame_crc_ok(data);
    let _ = h264::Sps::parse(data);
    let _ = hevc::Sps::parse(data);
    let _ = av1::ObuHeader::parse(data);
    let _ = av1::SequenceHeader::parse(data);
    let _ = av1::SequenceHeader::parse_color(data);
    // The probe-time header facts, over the input as a first packet and as
    // a configuration record.
    for codec in [
        Codec::H264,
        Codec::Hevc,
        Codec::Av1,
        Codec::Vp9,
        Codec::Mpeg2Video,
        Codec::Mpeg4,
        Codec::Theora,
        Codec::DvVideo,
    ] {
        let _ = facts::video(codec, data, &[]);
        let _ = facts::video(codec, &[], data);
    }
    for codec in [Codec::Mjpeg, Codec::Png, Codec::Bmp, Codec::Gif] {
        let _ = image::parse(codec, data);
    }
    let _ = mpegvideo::SequenceHeader::parse(data);
    let _ = annexb::NalUnits::new(data).count();
    let _ = mpeg4v::Mpeg4State::default().parse_frame(data);
    let chunk = (data.first().copied().unwrap_or(1) as usize % 13) + 1;
    let (mut a, mut b, mut c) = (
        h264::AuSplitter::default(),
        hevc::AuSplitter::default(),
        mpegvideo::FrameSplitter::default(),
    );
    for (i, piece) in data.chunks(chunk).enumerate() {
        let base = (i * chunk) as u64;
        if let Some(x) = a.feed(piece, base) {
            // A start code, NAL header and up to six bytes of first_mb_in_slice.
            assert!(x + 11 >= base);
            a = h264::AuSplitter::default();
        }
        if let Some(x) = b.feed(piece, base) {
            assert!(x + 6 >= base);
            b = hevc::AuSplitter::default();
        }
        if let Some(x) = c.feed(piece, base) {
            assert!(x + 4 >= base);
            c = mpegvideo::FrameSplitter::default();
        }
    }
});
