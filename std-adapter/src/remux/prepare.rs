//! The tracks of a remux, prepared before any byte is written: each
//! input track's facts and the configuration its muxer needs, completed
//! from the first packets where the input keeps it in the stream (Annex B
//! parameter sets, an ADTS header, the Vorbis/Theora headers, an AV1
//! sequence header, MPEG video and audio parameters), and the choice of
//! `--streams`.

use super::RemuxError;
use mediaslice::types::rescale_q;
use mediaslice::{Codec, Demuxer, Rational, Source};

/// An input track prepared for the muxer: its facts and the configuration
/// to give it, or why it is left out.
pub struct PreparedTrack {
    /// The input's track.
    pub track: mediaslice::Track,
    /// The configuration for [`mediaslice::TrackSpec::with_config`].
    pub config: Vec<u8>,
    /// `Some(reason)` when the track is not written.
    pub skip: Option<&'static str>,
    /// The time of its first packet (pts, or dts), in microseconds.
    pub first_us: Option<i64>,
}

/// The time `remux` moves to 0, in microseconds: the least first-packet
/// time of the tracks written, as ffmpeg's `start_time`, when it is
/// positive (an MPEG-TS clock, an FLV that starts late); otherwise 0. A
/// negative start (AAC priming before an MP4 edit list) is left to the
/// Matroska muxer, which moves its first Block time to 0 in milliseconds
/// as ffmpeg's muxer does (ffmpeg's `start_time` does not count the
/// priming, so ffmpeg itself moves nothing there).
pub fn start_us(tracks: &[PreparedTrack]) -> i64 {
    start_of(tracks, false)
}

/// [`start_us`]; with `all_selected`, also over the tracks left out by
/// `--streams` alone ([`RemuxOptions::start_of_all_streams`]).
pub(super) fn start_of(tracks: &[PreparedTrack], all_selected: bool) -> i64 {
    tracks
        .iter()
        .filter(|t| t.skip.is_none() || all_selected && t.skip == Some(NOT_SELECTED))
        .filter_map(|t| t.first_us)
        .min()
        .unwrap_or(0)
        .max(0)
}

/// Why an AAC track with neither an AudioSpecificConfig nor ADTS packets
/// is refused rather than given a made-up config (docs/write-side.md).
pub(super) const AAC_WITHOUT_CONFIG: &str = "AAC without an AudioSpecificConfig (an esds with no DecoderSpecificInfo) and with raw, not ADTS, packets: its audioObjectType is in neither, so no config can be written (ISO/IEC 14496-3 1.6.2.1); ffprobe shows profile -1 for it and ffmpeg's Matroska muxer refuses it too";

/// Most packets read looking for the first packet of a track whose
/// configuration is in the stream.
pub(super) const FIRST_PACKET_SEARCH: usize = 10_000;

/// The parameter sets (H.264 SPS/PPS, H.265 VPS/SPS/PPS) among the NAL
/// units of an Annex B access unit, each with a 4-byte start code.
pub(super) fn annexb_parameter_sets(codec: Codec, au: &[u8]) -> Vec<u8> {
    use mediaslice::codec::convert::to_length::AnnexBNalUnits;
    let mut out = Vec::new();
    for nal in AnnexBNalUnits::new(au) {
        let ps = match (codec, nal.first()) {
            (Codec::H264, Some(h)) => matches!(h & 0x1F, 7 | 8),
            (Codec::Hevc, Some(h)) => matches!((h >> 1) & 0x3F, 32..=34),
            _ => false,
        };
        if ps {
            out.extend_from_slice(&[0, 0, 0, 1]);
            out.extend_from_slice(nal);
        }
    }
    out
}

/// The picture size of an MPEG-1/2 video track from the sequence header in
/// its first packet (ISO/IEC 13818-2 §6.2.2.1), for inputs whose container
/// gives none (MPEG-TS, MPEG-PS).
pub(super) fn mpeg_video_size(codec: Codec, data: &[u8]) -> Option<(u32, u32)> {
    if !matches!(codec, Codec::Mpeg1Video | Codec::Mpeg2Video) {
        return None;
    }
    let at = data.windows(4).position(|w| w == [0, 0, 1, 0xB3])?;
    let h = mediaslice::codec::mpegvideo::SequenceHeader::parse(data.get(at + 4..)?)?;
    (h.width > 0 && h.height > 0).then_some((h.width, h.height))
}

/// Sample rate and channels of an audio track from the frame header of its
/// first packet (ADTS, MPEG audio, AC-3/E-AC-3), for inputs whose container
/// gives none (MPEG-TS, MPEG-PS): Matroska's SamplingFrequency defaults to
/// 8000 Hz and Channels to 1 when absent (RFC 9559 §5.1.4.1.29).
pub(super) fn audio_params(codec: Codec, data: &[u8]) -> Option<(u32, u16)> {
    use mediaslice::codec::{ac3::Ac3Header, adts::AdtsHeader, mpa::MpaHeader};
    let (rate, channels) = match codec {
        Codec::Aac => {
            let h = AdtsHeader::parse(data)?;
            let ch = match h.channel_config {
                7 => 8,
                c => u16::from(c),
            };
            (h.sample_rate, ch)
        }
        Codec::Mp1 | Codec::Mp2 | Codec::Mp3 => {
            let h = MpaHeader::parse_bytes(data)?;
            (h.sample_rate, u16::from(h.channels))
        }
        Codec::Ac3 | Codec::Eac3 => {
            let h = Ac3Header::parse(data)?;
            (h.sample_rate, h.channels)
        }
        _ => return None,
    };
    (rate > 0 && channels > 0).then_some((rate, channels))
}

/// The Sequence Header OBU among the OBUs of an AV1 Temporal Unit (empty
/// when there is none), from which the muxer builds `av1C`.
pub(super) fn av1_sequence_header(tu: &[u8]) -> Vec<u8> {
    use mediaslice::codec::av1::ObuHeader;
    let mut rest = tu;
    while let Some(h) = ObuHeader::parse(rest) {
        let Some(end) = h.size.and_then(|s| usize::try_from(s).ok()).map(|s| s + h.header_len) else {
            break;
        };
        if h.obu_type == 1 {
            return rest.get(..end).map(<[u8]>::to_vec).unwrap_or_default();
        }
        rest = rest.get(end..).unwrap_or(&[]);
    }
    Vec::new()
}

/// Xiph lacing of header packets (RFC 9559 §10.4.3 / the Matroska codec
/// mapping of Vorbis and Theora): count - 1, the sizes of all but the last
/// in 255-runs, then the packets.
pub(super) fn xiph_lace(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![packets.len().saturating_sub(1) as u8];
    for p in packets.iter().take(packets.len().saturating_sub(1)) {
        let mut n = p.len();
        while n >= 255 {
            out.push(255);
            n -= 255;
        }
        out.push(n as u8);
    }
    for p in packets {
        out.extend_from_slice(p);
    }
    out
}

/// Whether track `t` with configuration `config` needs its first packet to
/// complete the configuration.
pub(super) fn needs_first_packet(t: &mediaslice::Track, config: &[u8]) -> bool {
    match t.codec {
        Codec::H264 | Codec::Hevc => config.first() != Some(&1),
        Codec::Aac | Codec::Av1 => config.is_empty(),
        _ => false,
    }
}

/// The tracks of the input `open` opens, with their configurations
/// completed (see the module notes). Opens the input a second time and
/// reads packets until each track that needs one has its first (at most
/// `FIRST_PACKET_SEARCH`).
///
/// Errors: the demuxer's.
pub fn prepare_tracks<S: Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
) -> mediaslice::Result<Vec<PreparedTrack>> {
    let mut d = open()?;
    let mut out = Vec::new();
    for i in 0..d.tracks().len() {
        let track = d.tracks().get(i).cloned().unwrap_or_default();
        let mut config = d.codec_config(i)?.to_vec();
        if matches!(track.codec, Codec::Vorbis | Codec::Theora) && config.first() != Some(&2) {
            let mut headers = Vec::new();
            for h in 0..3 {
                if let Some(p) = d.header_packet(i, h)? {
                    headers.push(p.to_vec());
                }
            }
            if headers.len() == 3 {
                config = xiph_lace(&headers);
            }
        }
        let skip = if track.attached_picture {
            Some("an attached picture (cover art); Matroska stores it as an attachment, this target does not")
        } else if track.codec == Codec::BinData {
            Some("binary data (bin_data): a QuickTime chapter track, whose titles go out as chapters, or data no target carries")
        } else {
            None
        };
        out.push(PreparedTrack {
            track,
            config,
            skip,
            first_us: None,
        });
    }
    // Every track's first packet: its time, and the configuration of the
    // tracks that keep it in the stream.
    let mut pending: Vec<usize> = (0..out.len()).collect();
    let mut d = open()?;
    let mut seen = 0usize;
    while let Ok(Some(p)) = d.next_packet() {
        seen += 1;
        if let Some(t) = out
            .get_mut(p.track)
            .filter(|t| t.first_us.is_none() && !p.flags.discard)
        {
            // ffprobe's start_time: packets to be discarded (before an
            // edit list's start) do not count.
            t.first_us = p
                .pts
                .or(p.dts)
                .map(|ts| rescale_q(ts, t.track.time_base, Rational::new(1, 1_000_000)));
        }
        if let Some(at) = pending.iter().position(|&i| i == p.track) {
            if let Some(t) = out.get_mut(p.track) {
                t.first_us = t.first_us.or(p
                    .pts
                    .or(p.dts)
                    .map(|ts| rescale_q(ts, t.track.time_base, Rational::new(1, 1_000_000))));
                if t.track.kind == mediaslice::TrackKind::Video && t.track.width == 0 {
                    if let Some((w, h)) = mpeg_video_size(t.track.codec, p.data) {
                        (t.track.width, t.track.height) = (w, h);
                    }
                }
                if t.track.kind == mediaslice::TrackKind::Audio && t.track.sample_rate == 0 {
                    if let Some((rate, channels)) = audio_params(t.track.codec, p.data) {
                        (t.track.sample_rate, t.track.channels) = (rate, channels);
                    }
                }
                if needs_first_packet(&t.track, &t.config) {
                    t.config = match t.track.codec {
                        // Only an ADTS header: raw AAC (an MP4 whose esds
                        // has no DecoderSpecificInfo) stays without one.
                        Codec::Aac => p
                            .data
                            .get(..7)
                            .filter(|h| mediaslice::codec::adts::AdtsHeader::parse(h).is_some())
                            .map(<[u8]>::to_vec)
                            .unwrap_or_default(),
                        Codec::Av1 => av1_sequence_header(p.data),
                        c => annexb_parameter_sets(c, p.data),
                    };
                }
            }
            pending.swap_remove(at);
        }
        if pending.is_empty() || seen >= FIRST_PACKET_SEARCH {
            break;
        }
    }
    pending.retain(|&i| out.get(i).is_some_and(|t| needs_first_packet(&t.track, &t.config)));
    for i in pending {
        if let Some(t) = out.get_mut(i) {
            t.skip = t.skip.or(Some(
                "no packet within the first 10,000 to take its codec configuration from",
            ));
        }
    }
    Ok(out)
}

/// QuickTime counts uncompressed audio in frames, with the sample rate as
/// the media time scale (QuickTime File Format, "Sound Sample
/// Descriptions"; ISO/IEC 14496-12 8.6.1.2: one `stts` tick a frame). A
/// PCM track whose input counts in another time base (Matroska's
/// milliseconds) is declared with 1/rate instead; the packet loop
/// ([`super::write_packets`]) rescales its times with the declared time
/// base. Its frames follow each other in the output whatever the input's
/// times, so only the first packet's time (the edit list) depends on the
/// rescale, which is exact for a millisecond time base.
pub(super) fn pcm_in_frames(tracks: &mut [PreparedTrack]) {
    for t in tracks.iter_mut().filter(|t| t.skip.is_none()) {
        let rate = t.track.sample_rate;
        let pcm = t.track.codec.ffmpeg_name().starts_with("pcm_");
        if pcm && rate > 0 && t.track.time_base != Rational::new(1, rate) {
            t.track.time_base = Rational::new(1, rate);
        }
    }
}

/// Why a track left out by [`select_streams`] is.
const NOT_SELECTED: &str = "not among --streams";

/// Leaves out every track whose index is not in `streams` (`--streams
/// 0,2`); `None` keeps them all.
///
/// Errors: `InvalidArgument` naming a stream the input does not have.
pub fn select_streams(tracks: &mut [PreparedTrack], streams: Option<&[usize]>) -> Result<(), RemuxError> {
    let Some(keep) = streams else {
        return Ok(());
    };
    if keep.iter().any(|&i| i >= tracks.len()) {
        return Err(RemuxError::Output(mediaslice::Error::new(
            mediaslice::ErrorKind::InvalidArgument,
            0,
            &"--streams names a stream the input does not have",
        )));
    }
    for (i, t) in tracks.iter_mut().enumerate() {
        if !keep.contains(&i) {
            t.skip = t.skip.or(Some(NOT_SELECTED));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn xiph_lacing_counts_then_sizes() {
        // Xiph lacing (RFC 5334 §3 / Matroska): the number of packets
        // minus one, then each size but the last in 255-runs.
        assert_eq!(
            super::xiph_lace(&[vec![1; 300], vec![2; 3], vec![3]])[..4],
            [2, 255, 45, 3]
        );
    }
}
