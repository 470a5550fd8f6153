//! The ASF header: the walk over its objects, the File Properties Object
//! and stream types (ASF Specification rev 1.20 §3, §4). Stream properties
//! are read in `streams.rs`, tag objects in `tags.rs` and `pictures.rs`.

use super::attributes::TagObject;
use super::data_packet::{read_small, MAX_PACKET_LENGTH};
use super::demuxer::AsfDemuxer;
use super::guids::{self, Guid};
use super::layout::{FilePropertiesBody, HeaderObject, ObjectHeader, HEADER_EXTENSION_FIXED};
use super::streams::{embedded_stream_properties, extended_stream_properties, Leak, MAX_STREAMS};
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;
use zerocopy::FromBytes;

/// Size of an object header (§3.1): GUID and size.
const OBJECT_HEADER: u64 = core::mem::size_of::<ObjectHeader>() as u64;

/// The header objects the reader acts on (§3.2–§3.4, §3.10, §3.11, §4.1,
/// §4.7, §4.8).
#[derive(Clone, Copy)]
enum Object {
    FileProperties,
    StreamProperties,
    ExtendedStreamProperties,
    HeaderExtension,
    ContentDescription,
    ExtendedContentDescription,
    /// The Metadata and the Metadata Library Object, read alike.
    Metadata,
}

/// Their GUIDs.
const HEADER_OBJECTS: [(Guid, Object); 8] = [
    (guids::FILE_PROPERTIES, Object::FileProperties),
    (guids::STREAM_PROPERTIES, Object::StreamProperties),
    (guids::EXTENDED_STREAM_PROPERTIES, Object::ExtendedStreamProperties),
    (guids::HEADER_EXTENSION, Object::HeaderExtension),
    (guids::CONTENT_DESCRIPTION, Object::ContentDescription),
    (guids::EXTENDED_CONTENT_DESCRIPTION, Object::ExtendedContentDescription),
    (guids::METADATA, Object::Metadata),
    (guids::METADATA_LIBRARY, Object::Metadata),
];

/// The File Properties Object fields the demuxer uses (§3.2).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FileProperties {
    pub file_size: u64,
    pub play_duration: u64,
    pub preroll: u64,
    pub flags: u32,
    pub min_packet_size: u32,
    pub max_packet_size: u32,
    pub max_bitrate: u32,
}

impl FileProperties {
    /// Parses the object body (after the 24-byte object header).
    pub fn parse(b: &[u8]) -> Option<Self> {
        let (f, _) = FilePropertiesBody::ref_from_prefix(b).ok()?;
        Some(FileProperties {
            file_size: f.file_size.get(),
            play_duration: f.play_duration.get(),
            preroll: f.preroll.get() & 0xFFFF_FFFF,
            flags: f.flags.get(),
            min_packet_size: f.min_packet_size.get(),
            max_packet_size: f.max_packet_size.get(),
            max_bitrate: f.max_bitrate.get(),
        })
    }

    /// The Broadcast flag: sizes and durations are not valid (§3.2).
    pub fn broadcast(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// What a Stream Properties Object's Stream Type GUID says (§3.3, §10.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamType {
    Audio,
    Video,
    Jfif,
    Command,
    Binary,
}

/// Classifies a stream type GUID; `None` for types ffmpeg does not read.
pub(super) fn stream_type(g: &Guid) -> Option<StreamType> {
    const TYPES: [(Guid, StreamType); 5] = [
        (guids::AUDIO_MEDIA, StreamType::Audio),
        (guids::VIDEO_MEDIA, StreamType::Video),
        (guids::JFIF_MEDIA, StreamType::Jfif),
        (guids::COMMAND_MEDIA, StreamType::Command),
        (guids::BINARY_MEDIA, StreamType::Binary),
    ];
    guids::lookup(g, &TYPES)
}

/// What the header walk found besides tracks, tags and pictures.
pub(super) struct HeaderWalk {
    pub props: Option<FileProperties>,
    /// Leak rates and Maximum Object Sizes of the extended stream
    /// properties, by stream number.
    pub leaks: heapless::Vec<Leak, MAX_STREAMS>,
    /// Where the Data Object starts.
    pub data_at: u64,
}

/// Checks the Header Object (§3.1) at the start of the input.
pub(super) fn check_header_object<S: Source>(src: &mut S) -> Result<()> {
    let head = src.read::<HeaderObject>(0)?;
    if head.guid != crate::signature::ASF_HEADER_GUID {
        return Err(Error::malformed(
            0,
            &"asf header: no Header Object GUID (ASF 1.20 §3.1)",
        ));
    }
    Ok(())
}

/// Reads the File Properties Object body at `body` (§3.2).
fn file_properties<S: Source>(src: &mut S, body: u64) -> Result<FileProperties> {
    let (b, n) = read_small::<S, 80>(src, body)?;
    let p = FileProperties::parse(b.get(..n).unwrap_or(&[])).ok_or(Error::truncated(
        body,
        &"asf file properties: shorter than its fields (ASF 1.20 §3.2)",
    ))?;
    if p.min_packet_size >= MAX_PACKET_LENGTH {
        return Err(Error::malformed(
            body,
            &"asf file properties: minimum data packet size of 512 MiB or more (ASF 1.20 §3.2)",
        ));
    }
    Ok(p)
}

impl AsfDemuxer {
    /// Walks the objects flat from the first child of the Header Object
    /// (§3.1), entering the Header Extension (§3.4), up to the Data Object
    /// (§5.1), like ffmpeg: tracks, tags and pictures go into `self` and
    /// `ctx`, the rest into the returned [`HeaderWalk`].
    pub(super) fn walk_header<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<HeaderWalk> {
        let file_len = src.len();
        let mut w = HeaderWalk {
            props: None,
            leaks: heapless::Vec::new(),
            data_at: 0,
        };
        let mut at = core::mem::size_of::<HeaderObject>() as u64;
        let mut walked = 0u32;
        loop {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                return Err(Error::limit(
                    at,
                    &"asf header: more objects than Limits::max_top_level (ASF 1.20 §3.1)",
                ));
            }
            if at.saturating_add(OBJECT_HEADER) > file_len {
                return Err(Error::truncated(
                    at,
                    &"asf header: no Data Object before the end of input (ASF 1.20 §5.1)",
                ));
            }
            let h = src.read::<ObjectHeader>(at)?;
            if h.guid == guids::DATA {
                w.data_at = at;
                return Ok(w);
            }
            let size = h.size.get();
            if size < OBJECT_HEADER {
                return Err(Error::malformed(
                    at,
                    &"asf header: object smaller than its 24-byte header (ASF 1.20 §3.1)",
                ));
            }
            at = self.header_object(src, ctx, &mut w, &h.guid, at, size)?;
        }
    }

    /// Acts on the header object `g` of `size` bytes at `at`. Returns where
    /// the walk goes next: the object's end, the first object inside a
    /// Header Extension, or the Stream Properties Object embedded in an
    /// Extended Stream Properties Object.
    fn header_object<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        w: &mut HeaderWalk,
        g: &Guid,
        at: u64,
        size: u64,
    ) -> Result<u64> {
        let file_len = src.len();
        let body = at + OBJECT_HEADER;
        let end = at.saturating_add(size);
        match guids::lookup(g, &HEADER_OBJECTS) {
            Some(Object::FileProperties) => w.props = Some(file_properties(src, body)?),
            Some(Object::StreamProperties) => self.stream_properties(src, ctx, body, size)?,
            Some(Object::ExtendedStreamProperties) => {
                // §4.1: fixed part, stream names, payload extension systems,
                // then an optional Stream Properties Object, which ffmpeg
                // reads as the next object.
                let ext = extended_stream_properties(src, body)?;
                if ext.number < 128 && w.leaks.push(ext.leak).is_err() {
                    ctx.diags.report("asf.stream-capacity", at);
                }
                let p = embedded_stream_properties(src, body, &ext)?;
                if p > at && p < end {
                    return Ok(p);
                }
            }
            // §3.4: reserved GUID, reserved WORD, data size, objects.
            Some(Object::HeaderExtension) => return Ok(body + HEADER_EXTENSION_FIXED),
            Some(Object::ContentDescription) => {
                self.remember_tags(ctx, TagObject::Content, body, end, file_len, at);
            }
            Some(Object::ExtendedContentDescription) => {
                self.remember_tags(ctx, TagObject::Extended, body, end, file_len, at);
                self.find_pictures(src, ctx, TagObject::Extended, body, end)?;
            }
            Some(Object::Metadata) => {
                self.remember_tags(ctx, TagObject::Metadata, body, end, file_len, at);
                self.find_pictures(src, ctx, TagObject::Metadata, body, end)?;
            }
            None => {}
        }
        if end <= at {
            return Err(Error::malformed(at, &"asf header: object size wraps (ASF 1.20 §3.1)"));
        }
        Ok(end)
    }
}
