//! Packets that are never joined: a payload that the container splits
//! across its own units (an MPEG-TS PES across TS packets) handed out as the
//! borrowed pieces of the input, in order, instead of copied into scratch.
//!
//! [`crate::Demuxer::next_packet_pieces`] gives a [`PacketPieces`]: the
//! packet's facts, and its payload either as one slice (every packet that
//! is stored contiguously, or that the format joins anyway) or as pieces
//! that [`PacketPieces::next_piece`] reads one at a time. A CRC, a hash, a
//! `writev` or a muxer consumes the pieces as they come;
//! [`PacketPieces::join_into`] copies them into a caller's buffer for a
//! caller that needs one slice. The bytes, in order, are those of
//! [`crate::Demuxer::next_packet`]'s `data` for the same packet.
//!
//! Which packets come in pieces (see `docs/architecture.md`): MPEG-TS PES
//! payloads of tracks that are not cut into frames, when they span TS
//! packets; Ogg packets that span pages (feature `ogg-pieces`); ASF media
//! objects whose fragments arrived in order (feature `asf-pieces`). Every
//! other format and packet gives one slice.

use crate::error::{Error, ErrorKind, Result};
use crate::source::Source;
use crate::types::Packet;

/// A format's walk over the pieces of one packet: each call reads the next
/// piece through `src`, `None` after the last.
pub(crate) trait PieceWalk<S: Source> {
    /// The next piece, borrowing the source until the next call.
    fn next_piece<'s>(&mut self, src: &'s mut S) -> Result<Option<&'s [u8]>>;
}

/// Where the payload of a [`PacketPieces`] is.
enum Payload<'a, S: Source> {
    /// One slice, `packet.data`; `true` once it was handed out.
    Whole(bool),
    /// Pieces, read one at a time by a format's walk.
    #[cfg_attr(
        not(any(feature = "ts", feature = "ogg-pieces", feature = "asf-pieces")),
        allow(dead_code, reason = "only MPEG-TS and the `*-pieces` features give pieces")
    )]
    Walk {
        src: &'a mut S,
        walk: &'a mut dyn PieceWalk<S>,
    },
}

/// One packet whose payload may be in pieces. It borrows the demuxer until
/// it is dropped.
///
/// ```
/// use mediaslice::{Demuxer, SliceSource};
/// # fn run(bytes: &[u8], scratch: &mut [u8]) -> mediaslice::Result<()> {
/// let mut demuxer = Demuxer::open(SliceSource::with_scratch(bytes, scratch), None)?;
/// let mut total = 0usize;
/// while let Some(mut p) = demuxer.next_packet_pieces()? {
///     while let Some(piece) = p.next_piece()? {
///         total += piece.len();
///     }
/// }
/// # let _ = total; Ok(()) }
/// ```
pub struct PacketPieces<'a, S: Source> {
    /// The packet's facts. `data` is the whole payload when it is one
    /// slice and empty when it is in pieces ([`PacketPieces::is_scattered`]);
    /// `pos` is the offset of the first piece and `contiguous` is false.
    pub packet: Packet<'a>,
    len: usize,
    payload: Payload<'a, S>,
}

impl<'a, S: Source> PacketPieces<'a, S> {
    /// A packet whose payload is one slice.
    pub(crate) fn whole(packet: Packet<'a>) -> Self {
        PacketPieces {
            len: packet.data.len(),
            packet,
            payload: Payload::Whole(false),
        }
    }

    /// A packet of `len` payload bytes whose pieces `walk` reads from `src`.
    #[cfg_attr(
        not(any(feature = "ts", feature = "ogg-pieces", feature = "asf-pieces")),
        allow(dead_code, reason = "only MPEG-TS and the `*-pieces` features give pieces")
    )]
    pub(crate) fn walk(packet: Packet<'a>, len: usize, src: &'a mut S, walk: &'a mut dyn PieceWalk<S>) -> Self {
        PacketPieces {
            packet: Packet {
                data: &[],
                contiguous: false,
                ..packet
            },
            len,
            payload: Payload::Walk { src, walk },
        }
    }

    /// Payload bytes in all pieces.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the payload is in pieces (`packet.data` is then empty).
    pub fn is_scattered(&self) -> bool {
        matches!(self.payload, Payload::Walk { .. })
    }

    /// The next piece of the payload, in order; `None` after the last. A
    /// piece borrows the input (slice sources) or the source's scratch
    /// (reader sources) until the next call.
    ///
    /// Errors: a read error; the input ends inside the packet.
    pub fn next_piece(&mut self) -> Result<Option<&[u8]>> {
        match &mut self.payload {
            Payload::Whole(given) => {
                if *given {
                    return Ok(None);
                }
                *given = true;
                Ok(Some(self.packet.data))
            }
            Payload::Walk { src, walk } => walk.next_piece(src),
        }
    }

    /// Copies the rest of the payload into `out`; returns the bytes copied
    /// (all of the payload when no piece was taken before).
    ///
    /// Errors: `InvalidArgument` when `out` is shorter than the payload; a
    /// read error.
    pub fn join_into(&mut self, out: &mut [u8]) -> Result<usize> {
        if out.len() < self.len {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                self.packet.pos.unwrap_or(0),
                &"join_into: the buffer is shorter than the packet (PacketPieces::len)",
            ));
        }
        let mut have = 0usize;
        while let Some(piece) = self.next_piece()? {
            let end = have.saturating_add(piece.len());
            let dst = out.get_mut(have..end).ok_or(Error::new(
                ErrorKind::InvalidArgument,
                0,
                &"join_into: the pieces hold more bytes than the packet's length",
            ))?;
            dst.copy_from_slice(piece);
            have = end;
        }
        Ok(have)
    }
}

/// The packet's facts and how its payload is held.
impl<S: Source> core::fmt::Debug for PacketPieces<'_, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PacketPieces")
            .field("packet", &self.packet)
            .field("len", &self.len)
            .field("scattered", &self.is_scattered())
            .finish()
    }
}
