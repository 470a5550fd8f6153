//! Element IDs, as RFC 8794 (EBML) §11.2 and RFC 9559 (Matroska) §5.1 write
//! them (marker bits included).

// EBML header, RFC 8794 §11.2.
pub(crate) const EBML: u64 = 0x1A45_DFA3;
pub(crate) const EBML_READ_VERSION: u64 = 0x42F7;
pub(crate) const EBML_MAX_ID_LENGTH: u64 = 0x42F2;
pub(crate) const EBML_MAX_SIZE_LENGTH: u64 = 0x42F3;
pub(crate) const DOC_TYPE: u64 = 0x4282;
// Global elements (Void 0xEC, CRC-32 0xBF, RFC 8794 §11.3) are skipped
// like any element not named here.

// Top level, RFC 9559 §5.1.
pub(crate) const SEGMENT: u64 = 0x1853_8067;
pub(crate) const SEEK_HEAD: u64 = 0x114D_9B74;
pub(crate) const INFO: u64 = 0x1549_A966;
pub(crate) const TRACKS: u64 = 0x1654_AE6B;
pub(crate) const CLUSTER: u64 = 0x1F43_B675;
pub(crate) const CUES: u64 = 0x1C53_BB6B;
pub(crate) const ATTACHMENTS: u64 = 0x1941_A469;
pub(crate) const CHAPTERS: u64 = 0x1043_A770;
pub(crate) const TAGS: u64 = 0x1254_C367;

// SeekHead, RFC 9559 §5.1.1.
pub(crate) const SEEK: u64 = 0x4DBB;
pub(crate) const SEEK_ID: u64 = 0x53AB;
pub(crate) const SEEK_POSITION: u64 = 0x53AC;

// Info, RFC 9559 §5.1.2.
pub(crate) const TIMESTAMP_SCALE: u64 = 0x2A_D7B1;
pub(crate) const DURATION: u64 = 0x4489;
pub(crate) const TITLE: u64 = 0x7BA9;
pub(crate) const MUXING_APP: u64 = 0x4D80;
pub(crate) const WRITING_APP: u64 = 0x5741;

// Cluster, RFC 9559 §5.1.3.
pub(crate) const TIMESTAMP: u64 = 0xE7;
pub(crate) const SIMPLE_BLOCK: u64 = 0xA3;
pub(crate) const BLOCK_GROUP: u64 = 0xA0;
pub(crate) const BLOCK: u64 = 0xA1;
pub(crate) const BLOCK_DURATION: u64 = 0x9B;
pub(crate) const DISCARD_PADDING: u64 = 0x75A2;
pub(crate) const REFERENCE_BLOCK: u64 = 0xFB;

// Tracks, RFC 9559 §5.1.4.
pub(crate) const TRACK_ENTRY: u64 = 0xAE;
pub(crate) const TRACK_NUMBER: u64 = 0xD7;
pub(crate) const TRACK_UID: u64 = 0x73C5;
pub(crate) const TRACK_TYPE: u64 = 0x83;
pub(crate) const FLAG_DEFAULT: u64 = 0x88;
pub(crate) const FLAG_FORCED: u64 = 0x55AA;
pub(crate) const DEFAULT_DURATION: u64 = 0x23_E383;
pub(crate) const NAME: u64 = 0x536E;
pub(crate) const LANGUAGE: u64 = 0x22_B59C;
pub(crate) const LANGUAGE_BCP47: u64 = 0x22_B59D;
pub(crate) const CODEC_ID: u64 = 0x86;
pub(crate) const CODEC_PRIVATE: u64 = 0x63A2;
pub(crate) const CODEC_DELAY: u64 = 0x56AA;
pub(crate) const VIDEO: u64 = 0xE0;
pub(crate) const PIXEL_WIDTH: u64 = 0xB0;
pub(crate) const PIXEL_HEIGHT: u64 = 0xBA;
pub(crate) const AUDIO: u64 = 0xE1;
pub(crate) const SAMPLING_FREQUENCY: u64 = 0xB5;
pub(crate) const OUTPUT_SAMPLING_FREQUENCY: u64 = 0x78B5;
pub(crate) const CHANNELS: u64 = 0x9F;
pub(crate) const BIT_DEPTH: u64 = 0x6264;
pub(crate) const CONTENT_ENCODINGS: u64 = 0x6D80;
pub(crate) const CONTENT_ENCODING: u64 = 0x6240;
pub(crate) const CONTENT_ENCODING_SCOPE: u64 = 0x5032;
pub(crate) const CONTENT_ENCODING_TYPE: u64 = 0x5033;
pub(crate) const CONTENT_COMPRESSION: u64 = 0x5034;
pub(crate) const CONTENT_COMP_ALGO: u64 = 0x4254;
pub(crate) const CONTENT_COMP_SETTINGS: u64 = 0x4255;

// Cues, RFC 9559 §5.1.5.
pub(crate) const CUE_POINT: u64 = 0xBB;
pub(crate) const CUE_TIME: u64 = 0xB3;
pub(crate) const CUE_TRACK_POSITIONS: u64 = 0xB7;
pub(crate) const CUE_TRACK: u64 = 0xF7;
pub(crate) const CUE_CLUSTER_POSITION: u64 = 0xF1;

// Attachments, RFC 9559 §5.1.6.
pub(crate) const ATTACHED_FILE: u64 = 0x61A7;
pub(crate) const FILE_NAME: u64 = 0x466E;
pub(crate) const FILE_MEDIA_TYPE: u64 = 0x4660;
pub(crate) const FILE_DATA: u64 = 0x465C;
pub(crate) const FILE_DESCRIPTION: u64 = 0x467E;
pub(crate) const FILE_UID: u64 = 0x46AE;

// Chapters, RFC 9559 §5.1.7.
pub(crate) const EDITION_ENTRY: u64 = 0x45B9;
pub(crate) const CHAPTER_ATOM: u64 = 0xB6;
#[cfg(feature = "chapters")]
pub(crate) const CHAPTER_UID: u64 = 0x73C4;
pub(crate) const CHAPTER_TIME_START: u64 = 0x91;
pub(crate) const CHAPTER_TIME_END: u64 = 0x92;
pub(crate) const CHAPTER_DISPLAY: u64 = 0x80;
pub(crate) const CHAP_STRING: u64 = 0x85;
#[cfg(feature = "chapters")]
pub(crate) const CHAP_LANGUAGE: u64 = 0x437C;

// Tags, RFC 9559 §5.1.8.
pub(crate) const TAG: u64 = 0x7373;
pub(crate) const TARGETS: u64 = 0x63C0;
pub(crate) const TAG_TRACK_UID: u64 = 0x63C5;
pub(crate) const TAG_EDITION_UID: u64 = 0x63C9;
pub(crate) const TAG_CHAPTER_UID: u64 = 0x63C4;
pub(crate) const TAG_ATTACHMENT_UID: u64 = 0x63C6;
pub(crate) const SIMPLE_TAG: u64 = 0x67C8;
pub(crate) const TAG_NAME: u64 = 0x45A3;
pub(crate) const TAG_STRING: u64 = 0x4487;
pub(crate) const TAG_BINARY: u64 = 0x4485;

/// Whether `id` is a Top-Level Element of a Segment (RFC 9559 §5.1) or the
/// EBML header: the IDs that end an unknown-size Cluster (RFC 8794 §6.2).
pub(crate) fn is_top_level(id: u64) -> bool {
    matches!(
        id,
        SEEK_HEAD | INFO | TRACKS | CLUSTER | CUES | ATTACHMENTS | CHAPTERS | TAGS | EBML | SEGMENT
    )
}
