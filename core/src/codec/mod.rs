//! Codec-level parsers shared by containers. Frame scanners for codec
//! bitstreams: allocation-free functions that find and measure frames and
//! access units in a byte range, shared by the elementary-stream demuxers
//! (`format::es`), the MPEG-TS/PS readers (to split PES payloads) and the
//! containers that look inside codec headers; and the RIFF codec registry
//! that WAV, AVI, ASF and Matroska share.
//!
//! | module | what |
//! |---|---|
//! | [`bits`] | MSB-first bit reader, Exp-Golomb, RBSP without emulation prevention |
//! | [`convert`] | bitstream conversions for remuxing: Annex B ↔ length prefixes, avcC/hvcC, ADTS → raw AAC |
//! | [`mpa`] | MPEG audio frame header, Xing/Info/LAME/VBRI |
//! | [`adts`] | ADTS header (AAC) |
//! | [`ac3`] | AC-3 / E-AC-3 sync frame header, CRC-16 |
//! | [`annexb`] | Annex B start codes and NAL units |
//! | [`h264`] | H.264 SPS, access-unit splitter |
//! | [`hevc`] | H.265 SPS, access-unit splitter |
//! | [`hevc_vui`] | the H.265 SPS after the bit depth, walked to its VUI head |
//! | [`vui`] | the VUI head H.264 and H.265 share: sample aspect ratio, video signal range |
//! | [`av1`] | AV1 leb128, OBU header, sequence header, frame type |
//! | [`mpegvideo`] | MPEG-1/2 video sequence header, frame splitter |
//! | [`mpeg4v`] | MPEG-4 Part 2 VOL/VOP timing, frame splitter |
//! | `opus` | Opus packet durations from the TOC byte (Ogg times, Matroska DiscardPadding) |
//! | [`picture`] | attached-picture types and media-type codecs (ID3v2, FLAC, ASF) |
//! | [`riff_tags`] | the RIFF codec registry: WAVE format tags, BITMAPINFOHEADER FourCCs, INFO ids (WAV, AVI, ASF, Matroska) |
//! | [`riff_layout`] | WAVEFORMATEX, WAVEFORMATEXTENSIBLE, BITMAPINFOHEADER layouts |

pub mod ac3;
pub mod adts;
pub mod annexb;
pub mod av1;
pub mod bits;
pub mod convert;
pub mod facts;
pub mod h264;
pub mod hevc;
pub mod hevc_vui;
pub mod image;
pub mod mpa;
pub mod mpeg4v;
pub mod mpegvideo;
#[cfg(any(feature = "ogg", feature = "mkv"))]
pub(crate) mod opus;
pub mod picture;
#[cfg(any(feature = "riff", feature = "avi", feature = "asf", feature = "mkv"))]
pub mod riff_layout;
#[cfg(any(feature = "riff", feature = "avi", feature = "asf", feature = "mkv"))]
pub mod riff_tags;
pub mod vui;
