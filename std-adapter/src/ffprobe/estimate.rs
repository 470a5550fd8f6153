//! ffmpeg's durations for inputs that state none
//! (`estimate_timings_from_bit_rate`, libavformat 5.1): each stream lasts
//! the input's bytes (after where the demuxer's header ends) over the bit
//! rate, the sum of the streams' (`av_rescale`, rounded to nearest), and
//! the format's bit rate is then its size over that duration.
//!
//! Where a parser sets the bit rate (AAC in ADTS, MPEG audio), it is its
//! running mean over the frames parsed so far, `rate += (frame - rate) / n`
//! in integers; what "so far" is decides the result:
//!
//! - the duration takes the mean when `avformat_find_stream_info` stops:
//!   after 50 frames (`max_ts_probe`: a raw stream's packets carry no
//!   timestamp, and it reads that many to find one), or after every frame
//!   when an attached picture is among the streams (its frame rate
//!   analysis never completes, so it reads to the end);
//! - the stream's `bit_rate` is the mean over every whole frame, since
//!   ffprobe's `-show_packets` reads them all through the parser before it
//!   prints the streams (a frame cut by the end of the input is not
//!   counted).

use super::probe::set;
use super::Timing;
use mediaslice::codec::adts::AdtsHeader;
use mediaslice::codec::mpa::{parse_vbr, MpaHeader};
use mediaslice::format::es::id3;
use mediaslice::{Codec, Source};
use serde_json::Value;

/// Frames `avformat_find_stream_info` reads of a stream whose packets
/// carry no timestamp (`max_ts_probe`).
pub const MAX_TS_PROBE: usize = 50;

/// The integer running mean of `rates` (a parser's `bit_rate`).
pub fn running_mean(rates: impl Iterator<Item = i64>) -> i64 {
    let mut mean = 0i64;
    for (n, r) in rates.enumerate() {
        mean += (r - mean) / (n as i64 + 1);
    }
    mean
}

/// `bytes` at `rate` bits a second, in ticks of `tb`, rounded to nearest.
pub fn ticks(bytes: u64, rate: u64, tb: mediaslice::Rational) -> Option<i64> {
    let div = u128::from(rate) * u128::from(tb.num);
    if div == 0 {
        return None;
    }
    i64::try_from((u128::from(bytes) * 8 * u128::from(tb.den) + div / 2) / div).ok()
}

/// Sets a stream's `duration_ts` and `duration`.
pub fn set_duration(s: &mut Value, d: i64, tb: mediaslice::Rational) {
    set(s, "duration_ts", d.into());
    set(s, "duration", super::time_string(d, tb).into());
}

/// Where an ASF file's data packets begin: after the Header Object (its
/// size at byte 16) and the Data Object's 50-byte header.
pub fn asf_data_offset<S: Source>(src: &mut S) -> u64 {
    let mut h = [0u8; 24];
    match src.read_at(0, &mut h) {
        Ok(24) => h
            .get(16..24)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, |b| u64::from_le_bytes(b).saturating_add(50)),
        _ => 0,
    }
}

/// ASF whose header states no duration ffmpeg believes (a broadcast file,
/// or one whose size disagrees with the File Properties): each stream
/// lasts the data bytes over the sum of the streams' bit rates; no sum
/// when a video stream with packets states no bit rate.
pub fn asf_bit_rate_timing(streams: &mut [Value], tracks: &[mediaslice::Track], timing: &Timing, data_bytes: u64) {
    let mut sum = 0u64;
    for (i, t) in tracks.iter().enumerate() {
        if t.bit_rate > 0 {
            sum = sum.saturating_add(t.bit_rate.into());
        } else if t.kind == mediaslice::TrackKind::Video && timing.sizes(i).len() > 1 {
            return;
        }
    }
    if data_bytes == 0 {
        return;
    }
    for (s, t) in streams.iter_mut().zip(tracks) {
        if s.get("duration_ts").is_none() {
            if let Some(d) = ticks(data_bytes, sum, t.time_base) {
                set_duration(s, d, t.time_base);
            }
        }
    }
}

/// Raw ADTS: each frame's rate is `size * 8 * sample_rate / samples`
/// (1024 samples per raw data block, the first frame's block count taken
/// for all); the stream's `bit_rate` is the running mean over every whole
/// frame, the duration the bytes of the input over the mean when
/// `find_stream_info` stopped (see the module notes). The bytes are
/// counted from the first frame.
pub fn adts_timing(streams: &mut [Value], tracks: &[mediaslice::Track], timing: &Timing, size: u64) {
    let probed = if tracks.iter().any(|t| t.attached_picture) {
        usize::MAX
    } else {
        MAX_TS_PROBE
    };
    for (i, (s, t)) in streams.iter_mut().zip(tracks).enumerate() {
        let Some(pos) = timing.first_pos(i) else {
            continue;
        };
        let samples = AdtsHeader::parse(timing.first_packet(i)).map_or(1024, |h| i64::from(h.samples()));
        let rates = timing
            .whole_sizes(i)
            .iter()
            .map(|&b| i64::from(b) * 8 * i64::from(t.sample_rate) / samples);
        let all = running_mean(rates.clone());
        if all > 0 {
            set(s, "bit_rate", all.to_string().into());
        }
        let probe_rate = running_mean(rates.take(probed));
        let d = u64::try_from(probe_rate)
            .ok()
            .and_then(|r| ticks(size.saturating_sub(pos), r, t.time_base));
        if let Some(d) = d {
            set_duration(s, d, t.time_base);
        }
    }
}

/// Raw AMR: the codec tag `samr` (`sawb`) as 3GPP's; the stream's bit
/// rate is that of its first frame (payload bytes after the ToC byte, 50
/// frames a second), and the duration follows from it and the bytes from
/// the first frame on.
pub fn amr_timing(streams: &mut [Value], tracks: &[mediaslice::Track], timing: &Timing, size: u64) {
    for (i, (s, t)) in streams.iter_mut().zip(tracks).enumerate() {
        let tag = if t.codec == Codec::AmrWb { *b"sawb" } else { *b"samr" };
        let tag = u32::from_le_bytes(tag);
        set(s, "codec_tag_string", super::fourcc_string(tag).into());
        set(s, "codec_tag", format!("0x{tag:04x}").into());
        let first = timing.first_packet(i);
        let (Some(pos), false) = (timing.first_pos(i), first.len() < 2) else {
            continue;
        };
        let rate = (first.len() as u64 - 1) * 8 * 50;
        set(s, "bit_rate", rate.to_string().into());
        if let Some(d) = ticks(size.saturating_sub(pos), rate, t.time_base) {
            set_duration(s, d, t.time_base);
        }
    }
}

/// Whether ffmpeg estimates an MP3 file's duration from its bit rate:
/// when the first frame after the ID3v2 tags has no Xing/Info or VBRI
/// header with a frame count, or a Xing/Info header whose byte count falls
/// short of the bytes from that frame on by more than 1/16
/// (`mp3_parse_info_tag`: "invalid concatenated file", the count is
/// dropped).
pub fn mp3_by_bit_rate<S: Source>(src: &mut S) -> bool {
    let size = src.len();
    let Ok((off, _)) = id3::skip_id3v2(src, 0, id3::MAX_ID3V2_CHAIN) else {
        return false;
    };
    let mut frame = [0u8; 192];
    let n = src.read_at(off, &mut frame).unwrap_or(0);
    let frame = frame.get(..n).unwrap_or(&[]);
    let Some(v) = MpaHeader::parse_bytes(frame).and_then(|h| parse_vbr(frame, &h)) else {
        return true;
    };
    let mut frames = v.frames.unwrap_or(0);
    if let (b"Xing" | b"Info", Some(bytes)) = (&v.kind, v.bytes.filter(|&b| b > 0)) {
        let (bytes, fsize) = (u64::from(bytes), size.saturating_sub(off));
        if fsize > bytes && fsize - bytes > bytes >> 4 {
            frames = 0;
        }
    }
    frames == 0
}

/// MPEG audio whose duration ffmpeg estimates ([`mp3_by_bit_rate`]): the
/// parser's running mean of the frame headers' bit rates, the duration
/// the bytes from the first audio frame to the end of the input (an ID3v1
/// or APE tag there included) over the mean when `find_stream_info`
/// stopped ([`mp3_probed_frames`]). (The parser restarts its count when a
/// frame's header changes layer, rate or mode; such streams are not
/// modelled.)
pub fn mp3_timing(streams: &mut [Value], tracks: &[mediaslice::Track], timing: &Timing, size: u64) {
    for (i, (s, t)) in streams.iter_mut().zip(tracks).enumerate() {
        if !matches!(t.codec, Codec::Mp1 | Codec::Mp2 | Codec::Mp3) {
            continue;
        }
        let Some(pos) = timing.first_pos(i) else {
            continue;
        };
        let probed = mp3_probed_frames(timing.whole_sizes(i));
        let rates = timing
            .whole_heads(i)
            .iter()
            .filter_map(|h| MpaHeader::parse_bytes(h))
            .map(|h| i64::from(h.bit_rate));
        let all = running_mean(rates.clone());
        if all > 0 {
            set(s, "bit_rate", all.to_string().into());
        }
        let d = u64::try_from(running_mean(rates.take(probed)))
            .ok()
            .and_then(|r| ticks(size.saturating_sub(pos), r, t.time_base));
        if let Some(d) = d {
            set_duration(s, d, t.time_base);
        }
    }
}

/// ffmpeg's MP3 demuxer reads the input in 1024-byte chunks
/// (`MP3_PACKET_SIZE`) and its parser takes each chunk whole: when
/// `find_stream_info` has the [`MAX_TS_PROBE`]th frame, the parser has
/// also read the headers of the frames that begin in the rest of that
/// chunk. The frames counted, for frames of these sizes laid end to end
/// from the first.
pub fn mp3_probed_frames(sizes: &[u32]) -> usize {
    const CHUNK: u64 = 1024;
    let Some(first) = sizes.get(..MAX_TS_PROBE) else {
        return sizes.len();
    };
    let end: u64 = first.iter().map(|&b| u64::from(b)).sum();
    let limit = (end.saturating_sub(1) / CHUNK + 1) * CHUNK;
    let mut at = 0u64;
    sizes
        .iter()
        .take_while(|&&b| {
            let header_in = at + 4 <= limit;
            at += u64::from(b);
            header_in
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaslice::Rational;

    #[test]
    fn running_mean_is_integer_and_incremental() {
        assert_eq!(running_mean([100, 200].into_iter()), 150);
        // 100, then 100 + (51 - 100) / 2 = 76 (truncated toward zero).
        assert_eq!(running_mean([100, 51].into_iter()), 76);
        assert_eq!(running_mean(core::iter::empty()), 0);
    }

    #[test]
    fn duration_from_bytes_and_rate_rounds_to_nearest() {
        // 20480 bytes at 139894 b/s in 1/28224000: 33055171.4 ticks.
        assert_eq!(ticks(20_480, 139_894, Rational::new(1, 28_224_000)), Some(33_055_171));
        assert_eq!(ticks(1, 0, Rational::new(1, 1000)), None);
    }

    fn adts_track() -> mediaslice::Track {
        mediaslice::Track {
            kind: mediaslice::TrackKind::Audio,
            codec: Codec::Aac,
            sample_rate: 44_100,
            time_base: Rational::new(1, 28_224_000),
            ..mediaslice::Track::default()
        }
    }

    fn feed(timing: &mut Timing, track: usize, sizes: &[usize], cut_last: bool) {
        let data = vec![0u8; 1024];
        let mut pos = 0u64;
        for (k, &n) in sizes.iter().enumerate() {
            let mut p = mediaslice::Packet::contiguous(track, pos, &data[..n]);
            p.flags.truncated = cut_last && k + 1 == sizes.len();
            timing.observe(&p);
            pos += n as u64;
        }
    }

    #[test]
    fn adts_duration_takes_the_first_fifty_frames_rate() {
        // 50 frames of 128 bytes (44100 b/s each), then 50 of 256.
        let mut sizes = vec![128; 50];
        sizes.extend([256; 50]);
        let mut timing = Timing::new(1);
        feed(&mut timing, 0, &sizes, false);
        let mut streams = vec![serde_json::json!({})];
        adts_timing(&mut streams, &[adts_track()], &timing, 19_200);
        // The bit rate states every frame; the duration the first 50.
        assert_eq!(streams[0]["bit_rate"], "66130");
        assert_eq!(streams[0]["duration"], "3.482993");
    }

    #[test]
    fn adts_with_a_picture_takes_every_frame_and_skips_a_cut_one() {
        let mut sizes = vec![128; 50];
        sizes.extend([256; 50]);
        sizes.push(10);
        let mut timing = Timing::new(2);
        feed(&mut timing, 0, &sizes, true);
        let picture = mediaslice::Track {
            kind: mediaslice::TrackKind::Video,
            attached_picture: true,
            ..mediaslice::Track::default()
        };
        let mut streams = vec![serde_json::json!({}), serde_json::json!({})];
        adts_timing(&mut streams, &[adts_track(), picture], &timing, 19_210);
        assert_eq!(streams[0]["bit_rate"], "66130");
        // 19210 bytes over 66130 b/s (the mean truncates at each step).
        assert_eq!(streams[0]["duration"], "2.323907");
    }

    #[test]
    fn mp3_frame_counts_ffmpeg_believes() {
        // MPEG-2 Layer III, 64 kb/s, 24 kHz, joint stereo: Xing at 4 + 17.
        let mut b = vec![0u8; 488];
        b[..4].copy_from_slice(&[0xFF, 0xF3, 0x84, 0x64]);
        b[21..25].copy_from_slice(b"Xing");
        b[25..29].copy_from_slice(&3u32.to_be_bytes());
        b[29..33].copy_from_slice(&7u32.to_be_bytes());
        // 360 bytes stated, 488 there: 128 more than 360 / 16, dropped.
        b[33..37].copy_from_slice(&360u32.to_be_bytes());
        assert!(mp3_by_bit_rate(&mut mediaslice::SliceSource::new(&b)));
        // 470 stated: within 1/16, the count holds.
        b[33..37].copy_from_slice(&470u32.to_be_bytes());
        assert!(!mp3_by_bit_rate(&mut mediaslice::SliceSource::new(&b)));
        // No VBR header at all.
        b[21..25].copy_from_slice(b"Junk");
        assert!(mp3_by_bit_rate(&mut mediaslice::SliceSource::new(&b)));
    }

    #[test]
    fn mp3_duration_counts_the_bytes_to_the_end() {
        let mpa = mediaslice::Track {
            kind: mediaslice::TrackKind::Audio,
            codec: Codec::Mp3,
            sample_rate: 32_000,
            time_base: Rational::new(1, 14_112_000),
            ..mediaslice::Track::default()
        };
        // Two 64 kb/s frames of 288 bytes, then a 128-byte ID3v1 tag.
        let mut frame = [0u8; 288];
        frame[..4].copy_from_slice(&[0xFF, 0xFB, 0x58, 0x00]);
        let mut timing = Timing::new(1);
        timing.observe(&mediaslice::Packet::contiguous(0, 0, &frame));
        timing.observe(&mediaslice::Packet::contiguous(0, 288, &frame));
        let mut streams = vec![serde_json::json!({})];
        mp3_timing(&mut streams, &[mpa], &timing, 704);
        assert_eq!(streams[0]["bit_rate"], "64000");
        // 704 bytes at 64 kb/s: 0.088 s, the tag included as ffmpeg does.
        assert_eq!(streams[0]["duration"], "0.088000");
    }

    #[test]
    fn mp3_parser_reads_to_the_end_of_the_chunk() {
        // 50 frames of 300 bytes end at 15000, inside the chunk that ends
        // at 15360: the frames beginning at 15000 and 15300 have their
        // headers there too (15300 + 4 <= 15360); the next begins at 15600.
        assert_eq!(mp3_probed_frames(&[300; 60]), 52);
        // A header cut by the chunk's end is not read.
        assert_eq!(mp3_probed_frames(&[1024; 60]), 50);
        assert_eq!(mp3_probed_frames(&[300; 20]), 20);
    }
}
