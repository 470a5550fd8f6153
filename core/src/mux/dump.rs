//! The packet dump ([`crate::MuxFormat::Dump`]): the smallest muxer, which
//! proves the write side's driver and sinks without a real container. Every
//! field is big-endian:
//!
//! ```text
//! file    = header, track × tracks, packet × packets, trailer
//! header  = DumpHeader   magic "MSDUMP\0\x01", tracks u32, packets u64
//! track   = name length u8, codec name (ffprobe's codec_name),
//!           DumpTrackFields (time base num u32, den u32, config length
//!           u32), config bytes
//! packet  = DumpPacketHeader (track u32, pts i64, dts i64, flags u8,
//!           size u32), then `size` payload bytes
//! trailer = u32 0xFFFF_FFFF (a track no packet has), packets u64
//! ```
//!
//! An absent timestamp is `i64::MIN`. Flags: bit 0 keyframe, bit 1 discard,
//! bit 2 truncated. The header's packet count is patched when the sink can
//! patch, and is `u64::MAX` (unknown, as a Matroska unknown size) on a
//! stream, where the trailer alone gives it.
//!
//! The payload goes to the sink in one vectored write with its header: it
//! is never copied by the muxer.

use crate::error::{Error, Result};
use crate::format::mux_traits::{FormatMuxer, MuxContext};
use crate::sink::Sink;
use crate::types::Packet;
use zerocopy::byteorder::{BigEndian, I64, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The first eight bytes of a dump: name and version 1.
pub const DUMP_MAGIC: [u8; 8] = *b"MSDUMP\x00\x01";

/// The track index of the trailer, which no packet has.
pub const DUMP_TRAILER_TRACK: u32 = u32::MAX;

/// The header's packet count when the sink could not patch it.
pub const DUMP_UNKNOWN_COUNT: u64 = u64::MAX;

/// The file header.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct DumpHeader {
    /// [`DUMP_MAGIC`].
    pub magic: [u8; 8],
    /// Number of track records that follow.
    pub tracks: U32<BigEndian>,
    /// Number of packets, or [`DUMP_UNKNOWN_COUNT`].
    pub packets: U64<BigEndian>,
}

/// The fixed fields of a track record, after its codec name.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct DumpTrackFields {
    /// Numerator of the track's time base.
    pub time_base_num: U32<BigEndian>,
    /// Denominator of the track's time base.
    pub time_base_den: U32<BigEndian>,
    /// Configuration bytes that follow.
    pub config_len: U32<BigEndian>,
}

/// The header before each packet's payload (and, with track
/// [`DUMP_TRAILER_TRACK`], the start of the trailer: only `track` is read).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct DumpPacketHeader {
    /// Index of the packet's track.
    pub track: U32<BigEndian>,
    /// Presentation timestamp in the track's time base, `i64::MIN` if none.
    pub pts: I64<BigEndian>,
    /// Decoding timestamp, `i64::MIN` if none.
    pub dts: I64<BigEndian>,
    /// Bit 0 keyframe, bit 1 discard, bit 2 truncated.
    pub flags: u8,
    /// Payload bytes that follow.
    pub size: U32<BigEndian>,
}

/// Offset of [`DumpHeader::packets`] in the header.
const COUNT_OFFSET: u64 = core::mem::offset_of!(DumpHeader, packets) as u64;

/// The dump muxer's state: where its header's packet count is, to patch it.
#[derive(Debug, Clone, Copy, Default)]
pub struct DumpMuxer {
    header_at: u64,
}

fn size_u32(n: usize, pos: u64) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::unsupported(pos, &"dump: a field longer than 4 GiB"))
}

impl FormatMuxer for DumpMuxer {
    fn new() -> Self {
        DumpMuxer::default()
    }

    fn write_header<K: Sink>(&mut self, sink: &mut K, _scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        self.header_at = sink.position();
        let count = if sink.can_patch() { 0 } else { DUMP_UNKNOWN_COUNT };
        let header = DumpHeader {
            magic: DUMP_MAGIC,
            tracks: U32::new(size_u32(ctx.tracks.len(), self.header_at)?),
            packets: U64::new(count),
        };
        sink.write_all(header.as_bytes())?;
        for (i, t) in ctx.tracks.iter().enumerate() {
            let name = t.codec.ffmpeg_name().as_bytes();
            let config = ctx.config(i);
            // Codec names are short ASCII (at most 20 bytes): one length byte.
            let name_len = u8::try_from(name.len()).unwrap_or(u8::MAX);
            let name = name.get(..usize::from(name_len)).unwrap_or(name);
            let fields = DumpTrackFields {
                time_base_num: U32::new(t.time_base.num),
                time_base_den: U32::new(t.time_base.den),
                config_len: U32::new(size_u32(config.len(), sink.position())?),
            };
            sink.write_vectored(&[&[name_len], name, fields.as_bytes(), config])?;
        }
        Ok(())
    }

    fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        _scratch: &mut [u8],
        _ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        let pos = sink.position();
        let f = packet.flags;
        let header = DumpPacketHeader {
            track: U32::new(size_u32(packet.track, pos)?),
            pts: I64::new(packet.pts.unwrap_or(i64::MIN)),
            dts: I64::new(packet.dts.unwrap_or(i64::MIN)),
            flags: u8::from(f.keyframe) | u8::from(f.discard) << 1 | u8::from(f.truncated) << 2,
            size: U32::new(size_u32(packet.data.len(), pos)?),
        };
        sink.write_vectored(&[header.as_bytes(), packet.data])
    }

    fn finish<K: Sink>(&mut self, sink: &mut K, _scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        let count = ctx.packets.to_be_bytes();
        sink.write_vectored(&[&DUMP_TRAILER_TRACK.to_be_bytes(), &count])?;
        if sink.can_patch() {
            sink.patch_at(self.header_at.saturating_add(COUNT_OFFSET), &count)?;
        }
        Ok(())
    }
}
