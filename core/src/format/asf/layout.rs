//! Fixed ASF layouts, little-endian (ASF Specification rev 1.20): the parts
//! of objects and data packets whose fields sit at fixed offsets. Each is
//! read with [`crate::source::Source::read`] or, from a buffer that may be
//! short, with `ref_from_prefix`.

use super::guids::Guid;
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The Header Object's fixed part (ASF Specification rev 1.20 §3.1): object
/// GUID and size, number of header objects, two reserved bytes (30 bytes).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct HeaderObject {
    /// ASF_Header_Object.
    pub guid: Guid,
    /// Object Size (not trusted: the walk goes to the Data Object).
    pub size: U64,
    /// Number of Header Objects.
    pub objects: U32,
    /// Reserved1 (0x01).
    pub reserved1: u8,
    /// Reserved2 (0x02).
    pub reserved2: u8,
}

/// The header every ASF object starts with (ASF Specification rev 1.20
/// §3.1, §5.1, §6): object GUID and size (24 bytes).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct ObjectHeader {
    /// Object ID.
    pub guid: Guid,
    /// Object Size, this header included.
    pub size: U64,
}

/// The File Properties Object body after its object header (ASF
/// Specification rev 1.20 §3.2): 80 bytes.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct FilePropertiesBody {
    /// File ID.
    pub file_id: Guid,
    /// File Size in bytes (invalid when the broadcast flag is set).
    pub file_size: U64,
    /// Creation Date (100-ns units since 1601-01-01).
    pub creation_date: U64,
    /// Data Packets Count.
    pub data_packets: U64,
    /// Play Duration (100-ns units).
    pub play_duration: U64,
    /// Send Duration (100-ns units).
    pub send_duration: U64,
    /// Preroll (ms); only the low 32 bits are used, as ffmpeg does.
    pub preroll: U64,
    /// Flags: Broadcast (bit 0), Seekable (bit 1).
    pub flags: U32,
    /// Minimum Data Packet Size.
    pub min_packet_size: U32,
    /// Maximum Data Packet Size.
    pub max_packet_size: U32,
    /// Maximum Bitrate (bits per second).
    pub max_bitrate: U32,
}

/// The Stream Properties Object body up to its flags (ASF Specification
/// rev 1.20 §3.3): 50 bytes. A reserved DWORD and the type-specific data
/// follow; the object is read when these fields are there.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct StreamPropertiesFixed {
    /// Stream Type (ASF_Audio_Media, ASF_Video_Media, ...).
    pub stream_type: Guid,
    /// Error Correction Type.
    pub error_correction_type: Guid,
    /// Time Offset (100-ns units).
    pub time_offset: U64,
    /// Type-Specific Data Length.
    pub type_specific_len: U32,
    /// Error Correction Data Length.
    pub error_correction_len: U32,
    /// Flags: stream number (bits 0-6), encrypted content (bit 15).
    pub flags: U16,
}

/// Bytes from the Stream Properties Object body to its type-specific data
/// (ASF Specification rev 1.20 §3.3): the fixed fields and the reserved
/// DWORD.
pub(super) const STREAM_PROPERTIES_FIXED: u64 = 54;

/// The audio spread error correction data (ASF Specification rev 1.20
/// §9.1.1): span, virtual packet length, virtual chunk length (the silence
/// data that may follow is not read).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct SpreadAudio {
    /// Span: virtual packets in one object.
    pub span: u8,
    /// Virtual Packet Length.
    pub packet: U16,
    /// Virtual Chunk Length.
    pub chunk: U16,
}

/// A video stream's type-specific data up to the BITMAPINFOHEADER's
/// compression FourCC (ASF Specification rev 1.20 §9.2): 31 bytes. The rest
/// of the 40-byte BITMAPINFOHEADER and codec-specific data follow.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct VideoTypeSpecific {
    /// Encoded Image Width.
    pub encoded_width: U32,
    /// Encoded Image Height.
    pub encoded_height: U32,
    /// Reserved Flags.
    pub reserved: u8,
    /// Format Data Size.
    pub format_data_size: U16,
    /// BITMAPINFOHEADER biSize: 40 plus the codec-specific bytes.
    pub bi_size: U32,
    /// biWidth.
    pub width: U32,
    /// biHeight.
    pub height: U32,
    /// biPlanes.
    pub planes: U16,
    /// biBitCount.
    pub bit_count: U16,
    /// biCompression, the FourCC as stored.
    pub compression: [u8; 4],
}

/// Bytes from a video stream's type-specific data to its codec-specific
/// data (ASF Specification rev 1.20 §9.2): 11 bytes, then the 40-byte
/// BITMAPINFOHEADER.
pub(super) const VIDEO_TYPE_SPECIFIC: u64 = 51;

/// The Extended Stream Properties Object's fixed part (ASF Specification
/// rev 1.20 §4.1): 64 bytes, then stream names, payload extension systems
/// and an optional Stream Properties Object.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct ExtendedStreamPropertiesFixed {
    /// Start Time (ms).
    pub start_time: U64,
    /// End Time (ms).
    pub end_time: U64,
    /// Data Bitrate (leak rate, bits per second).
    pub data_bitrate: U32,
    /// Buffer Size, Initial Buffer Fullness, Alternate Data Bitrate,
    /// Alternate Buffer Size, Alternate Initial Buffer Fullness.
    pub buffers: [U32; 5],
    /// Maximum Object Size.
    pub max_object_size: U32,
    /// Flags.
    pub flags: U32,
    /// Stream Number.
    pub stream_number: U16,
    /// Stream Language ID Index.
    pub language: U16,
    /// Average Time Per Frame (100-ns units).
    pub avg_time_per_frame: U64,
    /// Stream Name Count.
    pub name_count: U16,
    /// Payload Extension System Count.
    pub extension_count: U16,
}

/// One Stream Name entry's fixed part (ASF Specification rev 1.20 §4.1):
/// language index and name length, then the name.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct StreamName {
    /// Language ID Index.
    pub language: U16,
    /// Stream Name Length in bytes.
    pub len: U16,
}

/// One Payload Extension System entry's fixed part (ASF Specification rev
/// 1.20 §4.1): 22 bytes, then the extension system info.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct PayloadExtensionSystem {
    /// Extension System ID.
    pub id: Guid,
    /// Extension Data Size.
    pub data_size: U16,
    /// Extension System Info Length.
    pub info_len: U32,
}

/// Bytes of the Header Extension Object body before its objects (ASF
/// Specification rev 1.20 §3.4): reserved GUID, reserved WORD, data size.
pub(super) const HEADER_EXTENSION_FIXED: u64 = 22;

/// The Data Object header (ASF Specification rev 1.20 §5.1): 50 bytes,
/// then the data packets.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct DataObjectHeader {
    /// ASF_Data_Object.
    pub guid: Guid,
    /// Object Size, this header and the data packets included.
    pub size: U64,
    /// File ID.
    pub file_id: Guid,
    /// Total Data Packets (invalid when the broadcast flag is set).
    pub total_packets: U64,
    /// Reserved (0x0101).
    pub reserved: U16,
}

/// Size of the Data Object header (§5.1).
pub(super) const DATA_HEADER: u64 = core::mem::size_of::<DataObjectHeader>() as u64;

/// The send time and duration that end a data packet's payload parsing
/// information (ASF Specification rev 1.20 §5.2.2), after its
/// variable-width fields.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct PacketTimes {
    /// Send Time (ms).
    pub send_time: U32,
    /// Duration (ms).
    pub duration: U16,
}

/// The first eight bytes of a payload's replicated data (ASF Specification
/// rev 1.20 §5.2.3.1): the media object's size and presentation time; any
/// payload extension data follows.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct ReplicatedData {
    /// Size of the whole media object.
    pub object_size: U32,
    /// Presentation time (ms, preroll included).
    pub presentation_time: U32,
}

/// The Simple Index Object body's fixed part (ASF Specification rev 1.20
/// §6.1): 32 bytes, then `entries` entries of 6 bytes (packet number DWORD,
/// packet count WORD).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct SimpleIndexFixed {
    /// File ID.
    pub file_id: Guid,
    /// Index Entry Time Interval (100-ns units).
    pub interval: U64,
    /// Maximum Packet Count.
    pub max_packet_count: U32,
    /// Index Entries Count.
    pub entries: U32,
}

/// Bytes of the Simple Index Object body's fixed part (§6.1).
pub(super) const SIMPLE_INDEX_FIXED: u64 = 32;
/// Bytes of one Simple Index entry (§6.1).
pub(super) const SIMPLE_INDEX_ENTRY: u64 = 6;

/// The Index Object body's fixed part (ASF Specification rev 1.20 §6.2):
/// 10 bytes, then `specifiers` index specifiers of 4 bytes and the blocks.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct IndexFixed {
    /// Index Entry Time Interval (ms).
    pub interval: U32,
    /// Index Specifiers Count.
    pub specifiers: U16,
    /// Index Blocks Count.
    pub blocks: U32,
}

/// A Metadata (Library) Object description record's fixed part (ASF
/// Specification rev 1.20 §4.7, §4.8): 12 bytes, then the name and data.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct MetadataRecord {
    /// Language List Index (Reserved in §4.7).
    pub language: U16,
    /// Stream Number.
    pub stream: U16,
    /// Name Length in bytes.
    pub name_len: U16,
    /// Data Type.
    pub kind: U16,
    /// Data Length in bytes.
    pub data_len: U32,
}

/// The value header of an Extended Content Description descriptor (ASF
/// Specification rev 1.20 §3.11), after its name: type and length.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct DescriptorValue {
    /// Descriptor Value Data Type.
    pub kind: U16,
    /// Descriptor Value Length in bytes.
    pub len: U16,
}

/// The Content Description Object's fixed part (ASF Specification rev 1.20
/// §3.10): five WORD lengths (title, author, copyright, description,
/// rating), then the strings in that order.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct ContentDescriptionFixed {
    /// The string lengths in bytes.
    pub lens: [U16; 5],
}

/// A `WM/Picture` value's fixed part (the WM_PICTURE structure of the
/// Windows Media Format SDK, as ASF Specification rev 1.20 §3.11 stores
/// it): picture type and data length, then MIME type, description, data.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(super) struct PictureFixed {
    /// Picture type (ID3v2 APIC types).
    pub kind: u8,
    /// Picture data length in bytes.
    pub data_len: U32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::size_of;

    #[test]
    fn sizes_match_the_specification() {
        assert_eq!(size_of::<HeaderObject>(), 30);
        assert_eq!(size_of::<ObjectHeader>(), 24);
        assert_eq!(size_of::<FilePropertiesBody>(), 80);
        assert_eq!(size_of::<StreamPropertiesFixed>(), 50);
        assert_eq!(size_of::<SpreadAudio>(), 5);
        assert_eq!(size_of::<VideoTypeSpecific>(), 31);
        assert_eq!(size_of::<ExtendedStreamPropertiesFixed>(), 64);
        assert_eq!(size_of::<PayloadExtensionSystem>(), 22);
        assert_eq!(DATA_HEADER, 50);
        assert_eq!(size_of::<PacketTimes>(), 6);
        assert_eq!(size_of::<ReplicatedData>(), 8);
        assert_eq!(size_of::<SimpleIndexFixed>() as u64, SIMPLE_INDEX_FIXED);
        assert_eq!(size_of::<IndexFixed>(), 10);
        assert_eq!(size_of::<MetadataRecord>(), 12);
        assert_eq!(size_of::<ContentDescriptionFixed>(), 10);
        assert_eq!(size_of::<PictureFixed>(), 5);
    }
}
