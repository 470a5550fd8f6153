//! The MPEG-TS muxer (`format/mpeg/ts_mux/`): corpus and sample files
//! remuxed to TS in memory and read back by our demuxer (every packet's
//! payload after the expected conversion, times in exact seconds,
//! keyframes), the packet structure (188-byte packets, continuity
//! counters, PCR spacing), by ffprobe when installed, and a truncated input.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::mux::{ffprobe_dir, ffprobe_packets, round_trip_families};
use common::*;
use mediaslice::codec::adts::AdtsHeader;
use mediaslice::codec::convert::to_annexb::ToAnnexB;
use mediaslice::codec::convert::NalCodec;
use mediaslice::crc::crc32;
use mediaslice::format::mpeg::ts_mux::START_OFFSET;
use mediaslice::mux::copy::add_tracks;
use mediaslice::types::rescale_q;
use mediaslice::{
    Codec, Demuxer, ErrorKind, MuxFormat, Muxer, Packet, Rational, Sink, SliceSink, SliceSource, Track, TrackKind,
    TrackSpec, WriterSink,
};

/// Corpus and sample families whose codecs TS may carry.
const FAMILIES: &[&str] = &["mp4", "matroska", "mpegts", "adts", "h264", "h265", "mp3", "ac3"];

const TS_TB: Rational = Rational::new(1, 90_000);

/// One packet as compared: payload CRC and size, times in 90 kHz, key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    crc: u32,
    size: usize,
    pts: Option<i64>,
    dts: Option<i64>,
    key: bool,
}

/// How a track's payload is expected to change.
enum Expect<'a> {
    AsIs,
    /// Annex B input: an AUD first when the access unit has none.
    AnnexB(NalCodec),
    /// Length-prefixed input: AUD when missing, then ffmpeg's conversion.
    Length(NalCodec, ToAnnexB<'a>, usize),
    /// Raw AAC: an ADTS header (checked field by field) before the frame.
    Adts(AdtsHeader),
    /// MPEG-4 Part 2 with its headers in the configuration: they go before
    /// a keyframe that does not start with a VOS/VO/VOL start code.
    Mpeg4(Vec<u8>),
}

fn nal_codec(c: Codec) -> Option<NalCodec> {
    match c {
        Codec::H264 => Some(NalCodec::H264),
        Codec::Hevc => Some(NalCodec::H265),
        _ => None,
    }
}

fn aud(n: NalCodec) -> &'static [u8] {
    match n {
        NalCodec::H264 => &[0, 0, 0, 1, 9, 0xF0],
        NalCodec::H265 => &[0, 0, 0, 1, 0x46, 1, 0x50],
    }
}

fn is_aud(n: NalCodec, b: Option<u8>) -> bool {
    match (n, b) {
        (NalCodec::H264, Some(b)) => b & 0x1F == 9,
        (NalCodec::H265, Some(b)) => (b >> 1) & 0x3F == 35,
        _ => false,
    }
}

/// Whether an Annex B access unit's first picture is an IDR (H.264) or
/// IRAP (H.265) picture: a reader of TS (ours, ffprobe) flags keyframes
/// from the payload, so an MP4 sync sample that is a non-IDR I picture
/// (an open GOP) is not a keyframe there.
fn starts_idr(n: NalCodec, au: &[u8]) -> bool {
    let mut i = 0;
    while i + 3 < au.len() {
        if au[i..i + 3] == [0, 0, 1] {
            let b = au[i + 3];
            match n {
                NalCodec::H264 if b & 0x1F == 5 => return true,
                NalCodec::H264 if b & 0x1F == 1 => return false,
                NalCodec::H265 if (16..=21).contains(&((b >> 1) & 0x3F)) => return true,
                NalCodec::H265 if (b >> 1) & 0x3F <= 9 => return false,
                _ => {}
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    false
}

/// The payload expected in the TS for `data`.
fn expected(e: &mut Expect<'_>, data: &[u8], key: bool) -> mediaslice::Result<Vec<u8>> {
    Ok(match e {
        Expect::Mpeg4(c) => {
            let own = data.len() > 3 && data[..3] == [0, 0, 1] && matches!(data[3], 0xB0 | 0xB5 | 0x00..=0x2F);
            let mut v = if key && !own { c.clone() } else { Vec::new() };
            v.extend_from_slice(data);
            v
        }
        Expect::AsIs | Expect::Adts(_) => data.to_vec(),
        Expect::AnnexB(n) => {
            let first = data.iter().position(|&b| b == 1).and_then(|i| data.get(i + 1).copied());
            let mut v = if is_aud(*n, first) {
                Vec::new()
            } else {
                aud(*n).to_vec()
            };
            v.extend_from_slice(data);
            v
        }
        Expect::Length(n, c, len_size) => {
            let mut v = if is_aud(*n, data.get(*len_size).copied()) {
                Vec::new()
            } else {
                aud(*n).to_vec()
            };
            let mut out = vec![0u8; data.len() * 2 + 4096];
            let mut k = SliceSink::new(&mut out);
            c.write_sample(&mut k, data)?;
            v.extend_from_slice(k.written());
            v
        }
    })
}

/// What our demuxer does to H.265 in TS, as ffmpeg 5.1's parser does
/// (`ts/demuxer.rs` `hevc_lead_zeros`): the zero bytes before an access
/// unit's first start code beyond two (the first byte of a four-byte start
/// code) go to the end of the access unit before; the first keeps them.
fn move_hevc_zeros(w: &mut [(Seen, Vec<u8>)]) {
    for k in 1..w.len() {
        let z = w[k].1.iter().take_while(|&&b| b == 0).count();
        if w[k].1.get(z) == Some(&1) && z > 2 {
            let n = (z - 2).min(4);
            w[k].1.drain(..n);
            w[k - 1].1.extend(std::iter::repeat_n(0, n));
        }
    }
}

/// Remuxes `bytes` to TS (at most `limit` input packets); gives the output
/// and the expected packets per output track.
/// Per output track: the ADTS fields expected where raw AAC gets a header.
type AdtsWant = Vec<Option<AdtsHeader>>;

fn remux_ts(bytes: &[u8], ext: Option<&str>, limit: usize) -> mediaslice::Result<(Vec<u8>, Vec<Vec<Seen>>, AdtsWant)> {
    let mut join = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), ext)?;
    let mut out = vec![0u8; bytes.len() * 3 + (1 << 20)];
    let mut m = Muxer::new(SliceSink::new(&mut out), MuxFormat::Ts)?;
    let map = add_tracks(&mut d, &mut m)?;
    let tracks = d.tracks().to_vec();
    let configs: Vec<Vec<u8>> = (0..tracks.len())
        .map(|i| d.codec_config(i).map(<[u8]>::to_vec))
        .collect::<mediaslice::Result<_>>()?;
    let mut expects: Vec<Expect<'_>> = Vec::new();
    for (t, c) in tracks.iter().zip(&configs) {
        expects.push(match nal_codec(t.codec) {
            Some(n) if c.first() == Some(&1) => {
                let at = if n == NalCodec::H264 { 4 } else { 21 };
                Expect::Length(
                    n,
                    ToAnnexB::with_parameter_sets(n, c).unwrap(),
                    usize::from(c[at] & 3) + 1,
                )
            }
            Some(n) => Expect::AnnexB(n),
            None if t.codec == Codec::Aac && !c.is_empty() && !AdtsHeader::has_sync(c) => {
                // The ADTS fields the AudioSpecificConfig names.
                let aot = c[0] >> 3;
                let sr = ((c[0] & 7) << 1) | (c[1] >> 7);
                let ch = (c[1] >> 3) & 0xF;
                let h = AdtsHeader::parse(&[
                    0xFF,
                    0xF1,
                    ((aot - 1) << 6) | (sr << 2) | (ch >> 2),
                    (ch & 3) << 6,
                    1,
                    0x1F,
                    0xFC,
                ]);
                Expect::Adts(h.expect("ADTS header"))
            }
            None if t.codec == Codec::Mpeg4 && !c.is_empty() => Expect::Mpeg4(c.clone()),
            None => Expect::AsIs,
        });
    }
    let mut want = vec![Vec::new(); m.tracks().len()];
    let mut shift: Option<i64> = None;
    let mut next: Vec<Option<i64>> = vec![None; tracks.len()];
    let mut n = 0;
    loop {
        let p = match d.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            // Damage or truncation: the output ends with the packets
            // before it, as `mediaslice remux` leaves it.
            Err(e) => {
                println!("note: input stops: {e}");
                break;
            }
        };
        if n >= limit {
            break;
        }
        if p.flags.truncated {
            continue;
        }
        n += 1;
        let Some(&Some(j)) = map.get(p.track) else { continue };
        let t = &tracks[p.track];
        let to90 = |v: i64| rescale_q(v, t.time_base, TS_TB);
        let sh = *shift.get_or_insert_with(|| START_OFFSET + (-p.dts.or(p.pts).map_or(0, to90)).max(0));
        let data = match expected(&mut expects[p.track], p.data, p.flags.keyframe) {
            Ok(d) => d,
            Err(e) => {
                // A sample whose NAL lengths do not parse: the muxer
                // refuses it too, and the output ends before it.
                let m2 = m.write_packet(&Packet { track: j, ..p });
                assert!(m2.is_err(), "a malformed sample was written: {e}");
                println!("note: stopped at a malformed sample: {e}");
                break;
            }
        };
        let (mut pts, dts) = (p.pts.map(|v| to90(v) + sh), p.dts.map(|v| to90(v) + sh));
        // A packet with no time: the previous one's plus its duration.
        if pts.is_none() && dts.is_none() {
            pts = Some(next[p.track].unwrap_or(sh));
        }
        let pts = pts.or(dts);
        next[p.track] = dts.or(pts).map(|t| t + p.duration.map_or(0, |d| to90(d as i64)));
        want[j].push((
            Seen {
                crc: 0,
                size: 0,
                pts,
                dts: dts.or(pts),
                key: p.flags.keyframe && nal_codec(t.codec).is_none_or(|n| starts_idr(n, &data))
                    || t.kind == TrackKind::Audio,
            },
            data,
        ));
        m.write_packet(&Packet { track: j, ..p })?;
    }
    let k = m.finish()?;
    let hevc: Vec<bool> = tracks
        .iter()
        .zip(&map)
        .filter(|(_, m)| m.is_some())
        .map(|(t, _)| t.codec == Codec::Hevc)
        .collect();
    let want = want
        .into_iter()
        .zip(hevc)
        .map(|(mut w, hevc)| {
            if hevc {
                move_hevc_zeros(&mut w);
            }
            w.into_iter()
                .map(|(s, d)| Seen {
                    crc: crc32(&d),
                    size: d.len(),
                    ..s
                })
                .collect()
        })
        .collect();
    // Keep the ADTS expectations for the read-back check.
    let adts: Vec<Option<AdtsHeader>> = expects
        .iter()
        .zip(&map)
        .filter(|(_, m)| m.is_some())
        .map(|(e, _)| match e {
            Expect::Adts(h) => Some(*h),
            _ => None,
        })
        .collect();
    Ok((k.written().to_vec(), want, adts))
}

/// Every packet of a TS per track, and how reading ended.
/// Packets read back per track, with their payloads.
type ReadBack = Vec<Vec<(Seen, Vec<u8>)>>;

fn read_ts(bytes: &[u8]) -> (ReadBack, Option<mediaslice::Error>) {
    let mut join = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), Some("ts")).unwrap();
    let mut got = vec![Vec::new(); d.tracks().len()];
    loop {
        match d.next_packet() {
            Ok(Some(p)) => got[p.track].push((
                Seen {
                    crc: crc32(p.data),
                    size: p.data.len(),
                    pts: p.pts,
                    dts: p.dts.or(p.pts),
                    key: p.flags.keyframe,
                },
                p.data.to_vec(),
            )),
            Ok(None) => return (got, None),
            Err(e) => return (got, Some(e)),
        }
    }
}

/// Checks the 188-byte structure: sync bytes, continuity counters per PID
/// on packets with payload, and PCRs at most `max_pcr_gap` apart.
fn check_structure(label: &str, ts: &[u8]) -> usize {
    assert_eq!(ts.len() % 188, 0, "{label}: not whole packets");
    let mut cc = std::collections::HashMap::new();
    let mut last_pcr: Option<u64> = None;
    let mut pcrs = 0;
    for p in ts.chunks(188) {
        assert_eq!(p[0], 0x47, "{label}: sync byte");
        let pid = (u16::from(p[1] & 0x1F) << 8) | u16::from(p[2]);
        let afc = p[3] >> 4 & 3;
        if afc & 1 == 1 {
            let c = p[3] & 0xF;
            if let Some(prev) = cc.insert(pid, c) {
                assert_eq!(c, (prev + 1) & 0xF, "{label}: continuity on PID {pid:#x}");
            }
        }
        if afc & 2 == 2 && p[4] > 0 && p[5] & 0x10 != 0 {
            let b = &p[6..12];
            let base = (u64::from(b[0]) << 25)
                | (u64::from(b[1]) << 17)
                | (u64::from(b[2]) << 9)
                | (u64::from(b[3]) << 1)
                | u64::from(b[4] >> 7);
            if let Some(l) = last_pcr {
                assert!(base >= l, "{label}: PCR went back");
            }
            last_pcr = Some(base);
            pcrs += 1;
        }
    }
    pcrs
}

fn check_file(f: &TestFile) -> Option<usize> {
    let bytes = f.read();
    let (ts, want, adts) = match remux_ts(&bytes, f.ext().as_deref(), usize::MAX) {
        Ok(x) => x,
        Err(e) => {
            println!("skip {}: {e}", f.label());
            return None;
        }
    };
    if want.iter().all(Vec::is_empty) {
        println!("skip {}: no track TS carries", f.label());
        return None;
    }
    if let Some(dir) = std::env::var_os("TSMUX_KEEP") {
        std::fs::write(std::path::Path::new(&dir).join(format!("{}.ts", f.name)), &ts).unwrap();
    }
    let label = f.label();
    check_structure(&label, &ts);
    same_packets(&label, &ts, &want, &adts);
    Some(ts.len())
}

/// Reads `ts` back and checks every packet against `want`: payload (for
/// raw AAC the ADTS header field by field, then the frame), times, key.
fn same_packets(label: &str, ts: &[u8], want: &[Vec<Seen>], adts: &AdtsWant) {
    let (got, err) = read_ts(ts);
    assert!(err.is_none(), "{label}: reading back: {err:?}");
    assert_eq!(got.len(), want.len(), "{label}: tracks");
    for (t, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "{label} track {t}: packets");
        for (k, ((g, data), w)) in g.iter().zip(w).enumerate() {
            match adts.get(t).copied().flatten() {
                Some(h) => {
                    // The header the muxer made, then the raw frame.
                    let p = AdtsHeader::parse(data).expect("ADTS header");
                    assert_eq!(
                        (
                            p.object_type,
                            p.sample_rate,
                            p.channel_config,
                            p.frame_len as usize,
                            p.crc
                        ),
                        (h.object_type, h.sample_rate, h.channel_config, w.size + 7, false),
                        "{label} track {t} packet {k}: ADTS header"
                    );
                    assert_eq!(crc32(&data[7..]), w.crc, "{label} track {t} packet {k}: payload");
                }
                None => assert_eq!(
                    (g.crc, g.size),
                    (w.crc, w.size),
                    "{label} track {t} packet {k}: payload"
                ),
            }
            assert_eq!(g.pts, w.pts, "{label} track {t} packet {k}: pts");
            assert_eq!(g.dts, w.dts, "{label} track {t} packet {k}: dts");
            assert_eq!(g.key, w.key, "{label} track {t} packet {k}: key");
        }
    }
}

#[test]
fn corpus_and_samples_round_trip_through_ts() {
    round_trip_families(FAMILIES, "TS", check_file);
}

#[test]
fn pcrs_are_close_enough_and_psi_repeats_before_keyframes() {
    for (fam, name) in [
        ("mp4", "h264_aac.mp4"),
        ("mpegts", "hevc_eac3.ts"),
        ("adts", "aac_lc.aac"),
    ] {
        let (bytes, ext) = common::mux::corpus_file(fam, name);
        let (ts, want, _) = remux_ts(&bytes, ext.as_deref(), usize::MAX).unwrap();
        let label = format!("{fam}/{name}");
        let pcrs = pcr_times(&ts);
        assert!(pcrs.len() > 2, "{label}: {} PCRs", pcrs.len());
        // 40 ms, or one frame of the PCR track when its frames are longer.
        let frame = want[0]
            .windows(2)
            .filter_map(|w| Some(w[1].dts? - w[0].dts?))
            .max()
            .unwrap_or(0)
            .max(3600);
        let gap = pcrs.windows(2).map(|w| w[1] - w[0]).max().unwrap();
        println!("{label}: {} PCRs, largest gap {gap} (limit {frame})", pcrs.len());
        assert!(gap <= frame as u64, "{label}: PCR gap {gap}");
        // The first PCR: 0.7 s before the first decode time of the PCR
        // track (track 0 in these files: the video, or the only track).
        let first = want[0][0].dts.unwrap();
        assert_eq!(pcrs[0] as i64, first - 63_000, "{label}: first PCR");
        // PAT count: the start, then one before each video keyframe and
        // every 100 ms.
        let pats = ts.chunks(188).filter(|p| p[1] & 0x1F == 0 && p[2] == 0).count();
        let keys = want
            .iter()
            .filter(|w| !w.is_empty())
            .map(|w| w.iter().filter(|s| s.key).count())
            .collect::<Vec<_>>();
        println!("{label}: {pats} PATs, keyframes per track {keys:?}");
        // Every 100 ms of packet time, with video or without (ETSI TR
        // 101 290 wants 0.5 s at most).
        let w = &want[0];
        let span = w.last().unwrap().dts.unwrap() - w[0].dts.unwrap();
        assert!(pats as i64 >= span / 9000, "{label}: {pats} PATs over {span} ticks");
        if fam != "adts" {
            // Video on PID 0x100: a PMT right before each keyframe's PES
            // (its first TS packet has the random access indicator).
            let packets: Vec<&[u8]> = ts.chunks(188).collect();
            let mut n = 0;
            for (k, p) in packets.iter().enumerate().skip(1) {
                let pid = (u16::from(p[1] & 0x1F) << 8) | u16::from(p[2]);
                if pid == 0x100 && p[1] & 0x40 != 0 && p[3] & 0x20 != 0 && p[4] > 0 && p[5] & 0x40 != 0 {
                    let before = packets[k - 1];
                    assert_eq!(
                        (before[1] & 0x1F, before[2]),
                        (0x10, 0x00),
                        "{label}: no PMT before keyframe"
                    );
                    n += 1;
                }
            }
            assert_eq!(n, keys[0], "{label}: video keyframes");
        }
    }
}

/// The PCR bases of a TS, in order.
fn pcr_times(ts: &[u8]) -> Vec<u64> {
    ts.chunks(188)
        .filter(|p| p[3] & 0x20 != 0 && p[4] > 0 && p[5] & 0x10 != 0)
        .map(|p| {
            let b = &p[6..12];
            (u64::from(b[0]) << 25)
                | (u64::from(b[1]) << 17)
                | (u64::from(b[2]) << 9)
                | (u64::from(b[3]) << 1)
                | u64::from(b[4] >> 7)
        })
        .collect()
}

#[test]
fn a_stream_sink_gives_the_same_bytes() {
    let (bytes, ext) = common::mux::corpus_file("mp4", "h264_bframes_aac.mp4");
    let (slice, _, _) = remux_ts(&bytes, ext.as_deref(), usize::MAX).unwrap();
    let mut join = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), ext.as_deref()).unwrap();
    let mut out = vec![0u8; slice.len()];
    let mut m = Muxer::new(WriterSink::new(&mut out[..]), MuxFormat::Ts).unwrap();
    let map = add_tracks(&mut d, &mut m).unwrap();
    mediaslice::mux::copy::copy_packets(&mut d, &mut m, &map).unwrap();
    let k = m.finish().unwrap();
    assert!(!k.can_patch());
    assert_eq!(k.position() as usize, slice.len());
    assert_eq!(out, slice);
}

#[test]
fn a_truncated_input_gives_a_ts_of_the_packets_before_the_damage() {
    for (fam, name) in [
        ("matroska", "h264_aac.mkv"),
        ("mpegts", "h264_aac.ts"),
        ("mp4", "h264_aac_fragmented.mp4"),
    ] {
        let (bytes, ext) = common::mux::corpus_file(fam, name);
        let cut = &bytes[..bytes.len() * 6 / 10];
        let (ts, want, adts) = remux_ts(cut, ext.as_deref(), usize::MAX).unwrap();
        let label = format!("{fam}/{name} cut");
        check_structure(&label, &ts);
        let n: usize = want.iter().map(Vec::len).sum();
        assert!(n > 10, "{label}: {n} packets");
        same_packets(&label, &ts, &want, &adts);
    }
}

#[test]
fn codecs_ts_cannot_carry_are_refused_at_add_track() {
    let mut buf = vec![0u8; 4096];
    let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Ts).unwrap();
    for codec in [Codec::Opus, Codec::Vorbis, Codec::Flac, Codec::Vp9, Codec::Av1] {
        let t = Track {
            codec,
            ..Track::default()
        };
        let e = m.add_track(&TrackSpec::new(&t)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{codec:?}");
    }
    // Raw AAC whose AudioSpecificConfig ADTS cannot express.
    let t = Track {
        codec: Codec::Aac,
        kind: TrackKind::Audio,
        ..Track::default()
    };
    let e = m
        .add_track(&TrackSpec::new(&t).with_config(&[0xF9, 0x46, 0x40]))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
}

/// ffprobe reads our output with our demuxer's packets (count, size,
/// times, keyframes) and no warning; for an MP4 input the packets are
/// those of ffmpeg's own `-c copy -f mpegts` output.
#[test]
fn ffprobe_reads_the_output_as_ours_and_as_ffmpegs() {
    let Some(dir) = ffprobe_dir("tsmux") else { return };
    let files = [
        ("mp4", "h264_aac.mp4", true),
        ("mp4", "h264_bframes_aac.mp4", true),
        ("mp4", "hevc_aac.mp4", true),
        ("matroska", "h264_aac.mkv", false),
        ("mpegts", "hevc_eac3.ts", false),
        ("ac3", "5.1.ac3", false),
        ("mp3", "vbr_xing.mp3", false),
    ];
    for (fam, name, vs_ffmpeg) in files {
        let (bytes, ext) = common::mux::corpus_file(fam, name);
        let (ts, _, _) = remux_ts(&bytes, ext.as_deref(), usize::MAX).unwrap();
        let path = dir.join(format!("{name}.ts"));
        std::fs::write(&path, &ts).unwrap();
        let label = format!("{fam}/{name}");
        let out = std::process::Command::new("ffprobe")
            .args(["-v", "warning", "-show_packets", "-of", "json"])
            .arg(&path)
            .output()
            .unwrap();
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(warnings.trim().is_empty(), "{label}: ffprobe says {warnings}");
        let probe = ffprobe_packets(&path).unwrap();
        let (got, _) = read_ts(&ts);
        assert_eq!(probe.len(), got.len(), "{label}: streams");
        for (t, (p, g)) in probe.iter().zip(&got).enumerate() {
            assert_eq!(p.len(), g.len(), "{label} stream {t}: packets");
            for (k, (p, (g, _))) in p.iter().zip(g).enumerate() {
                let secs = |v: Option<i64>| v.map(|v| (v as f64 / 90_000.0 * 1e6).round() / 1e6);
                assert_eq!(
                    (p.0, p.1, p.2),
                    (secs(g.pts), secs(g.dts), g.size),
                    "{label} stream {t} packet {k}"
                );
                assert_eq!(p.3, g.key, "{label} stream {t} packet {k}: key");
            }
        }
        if !vs_ffmpeg {
            continue;
        }
        // ffmpeg's own remux of the same input.
        let theirs = dir.join(format!("{name}.ffmpeg.ts"));
        let input = dir.join(name);
        std::fs::write(&input, &bytes).unwrap();
        let st = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-i"])
            .arg(&input)
            .args(["-map", "0", "-c", "copy", "-f", "mpegts"])
            .arg(&theirs)
            .status();
        if !st.is_ok_and(|s| s.success()) {
            println!("skip {label}: ffmpeg did not write a TS");
            continue;
        }
        // Sizes and keyframes exactly; times within one 90 kHz tick:
        // ffmpeg 5.1's `-c copy` rounds twice (the input's start offset in
        // microseconds into the input time base, then to 90 kHz), we
        // once, to nearest, from the input time base.
        let ff = ffprobe_packets(&theirs).unwrap();
        assert_eq!(probe.len(), ff.len(), "{label}: streams against ffmpeg's");
        let near = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() < 1.5 / 90_000.0,
            (a, b) => a.is_none() && b.is_none(),
        };
        for (t, (ours, theirs)) in probe.iter().zip(&ff).enumerate() {
            assert_eq!(ours.len(), theirs.len(), "{label} stream {t}: packets against ffmpeg's");
            for (k, (o, f)) in ours.iter().zip(theirs).enumerate() {
                assert_eq!(
                    (o.2, o.3),
                    (f.2, f.3),
                    "{label} stream {t} packet {k}: size, key against ffmpeg's"
                );
                assert!(
                    near(o.0, f.0) && near(o.1, f.1),
                    "{label} stream {t} packet {k}: {o:?} against ffmpeg's {f:?}"
                );
            }
        }
        println!("{label}: same packets as ffmpeg's TS");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A TS that holds only its tables (tracks declared, no packet written,
/// as a recording stopped before its first frame leaves it) is three
/// packets: SDT, PAT and PMT. Detection finds it and the reader lists its
/// tracks and no packet, as ffprobe does.
#[test]
fn a_ts_of_tables_only_is_detected_and_lists_its_tracks() {
    let (bytes, ext) = common::mux::corpus_file("mp4", "h264_aac.mp4");
    let mut join = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), ext.as_deref()).unwrap();
    let mut out = vec![0u8; 4096];
    let mut m = Muxer::new(SliceSink::new(&mut out), MuxFormat::Ts).unwrap();
    add_tracks(&mut d, &mut m).unwrap();
    let n = m.finish().unwrap().written().len();
    assert_eq!(n, 3 * 188, "SDT, PAT and PMT");
    let pids: Vec<u16> = out[..n]
        .chunks(188)
        .map(|p| u16::from(p[1] & 0x1F) << 8 | u16::from(p[2]))
        .collect();
    assert_eq!(pids, [0x11, 0, 0x1000]);
    let ts = &out[..n];
    assert_eq!(
        mediaslice::detect::detect(ts, None),
        Some(mediaslice::FormatKind::MpegTs)
    );
    let mut back = Demuxer::open(SliceSource::new(ts), None).unwrap();
    let codecs: Vec<Codec> = back.tracks().iter().map(|t| t.codec).collect();
    assert_eq!(codecs, [Codec::H264, Codec::Aac]);
    assert!(back.next_packet().unwrap().is_none());
    // Two packets that start with a PAT are taken for TS (a PAT and a
    // PMT), two that do not (here the SDT and the PAT) are not.
    assert_eq!(
        mediaslice::detect::detect(&ts[188..], None),
        Some(mediaslice::FormatKind::MpegTs)
    );
    assert_eq!(mediaslice::detect::detect(&ts[..2 * 188], None), None);
}
