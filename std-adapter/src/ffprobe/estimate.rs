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
}
