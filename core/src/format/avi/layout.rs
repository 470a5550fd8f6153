//! Fixed AVI and OpenDML layouts, little-endian (Microsoft "AVI RIFF File
//! Reference"; OpenDML "AVI File Format Extensions" 1.02).

use zerocopy::little_endian::{I32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// A RIFF chunk header (AVI RIFF reference, "RIFF File Format"): ckID and
/// ckSize, the size of the data that follows (without the pad byte).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct ChunkHeader {
    /// ckID: a FourCC (`LIST`, `strh`, `00dc`, ...).
    pub id: [u8; 4],
    /// ckSize.
    pub size: U32,
}

/// `avih`: AVIMAINHEADER (AVI RIFF reference, "AVI Main Header").
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct MainHeader {
    /// dwMicroSecPerFrame.
    pub micro_sec_per_frame: U32,
    /// dwMaxBytesPerSec.
    pub max_bytes_per_sec: U32,
    /// dwPaddingGranularity.
    pub padding_granularity: U32,
    /// dwFlags (AVIF_HASINDEX 0x10, AVIF_MUSTUSEINDEX 0x20, ...).
    pub flags: U32,
    /// dwTotalFrames (of the first RIFF only in OpenDML files).
    pub total_frames: U32,
    /// dwInitialFrames.
    pub initial_frames: U32,
    /// dwStreams.
    pub streams: U32,
    /// dwSuggestedBufferSize.
    pub suggested_buffer_size: U32,
    /// dwWidth.
    pub width: U32,
    /// dwHeight.
    pub height: U32,
}

/// `strh`: the first 48 bytes of AVISTREAMHEADER (AVI RIFF reference,
/// "AVI Stream Headers"); the frame rectangle that may follow is not used.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct StreamHeader {
    /// fccType: `vids`, `auds`, `txts`, `dats`, `iavs`, `pads`.
    pub fcc_type: [u8; 4],
    /// fccHandler.
    pub fcc_handler: [u8; 4],
    /// dwFlags.
    pub flags: U32,
    /// wPriority.
    pub priority: U16,
    /// wLanguage.
    pub language: U16,
    /// dwInitialFrames.
    pub initial_frames: U32,
    /// dwScale: time base numerator.
    pub scale: U32,
    /// dwRate: time base denominator.
    pub rate: U32,
    /// dwStart, in time-base units.
    pub start: U32,
    /// dwLength, in time-base units.
    pub length: U32,
    /// dwSuggestedBufferSize.
    pub suggested_buffer_size: U32,
    /// dwQuality.
    pub quality: U32,
    /// dwSampleSize: bytes per sample, 0 when samples vary in size.
    pub sample_size: U32,
}

/// `strf` of a video stream: BITMAPINFOHEADER.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct BitmapInfoHeader {
    /// biSize.
    pub size: U32,
    /// biWidth.
    pub width: I32,
    /// biHeight (negative for top-down).
    pub height: I32,
    /// biPlanes.
    pub planes: U16,
    /// biBitCount.
    pub bit_count: U16,
    /// biCompression: a FourCC, or BI_RGB (0), BI_RLE8 (1), BI_RLE4 (2), BI_BITFIELDS (3).
    pub compression: [u8; 4],
    /// biSizeImage.
    pub size_image: U32,
    /// biXPelsPerMeter.
    pub x_pels_per_meter: I32,
    /// biYPelsPerMeter.
    pub y_pels_per_meter: I32,
    /// biClrUsed.
    pub clr_used: U32,
    /// biClrImportant.
    pub clr_important: U32,
}

/// One `idx1` entry: AVIOLDINDEX.aIndex (AVI RIFF reference, "AVI Index Entries").
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct Idx1Entry {
    /// dwChunkId (`00dc`, `01wb`, `rec `, ...).
    pub chunk_id: [u8; 4],
    /// dwFlags (AVIIF_LIST 0x01, AVIIF_KEYFRAME 0x10, AVIIF_NO_TIME 0x100).
    pub flags: U32,
    /// dwOffset: of the chunk header, from the file start or from the `movi` FourCC.
    pub offset: U32,
    /// dwSize of the chunk's data.
    pub size: U32,
}

/// The 24-byte head shared by `indx` (super index) and `ix##` (standard
/// index) chunks: AVIMETAINDEX (OpenDML 1.02 §"Index Chunks").
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct IndexHeader {
    /// wLongsPerEntry: 4 for a super index, 2 for a standard index.
    pub longs_per_entry: U16,
    /// bIndexSubType (0, or AVI_INDEX_2FIELD).
    pub sub_type: u8,
    /// bIndexType: AVI_INDEX_OF_INDEXES (0) or AVI_INDEX_OF_CHUNKS (1).
    pub index_type: u8,
    /// nEntriesInUse.
    pub entries: U32,
    /// dwChunkId of the indexed stream.
    pub chunk_id: [u8; 4],
    /// qwBaseOffset (standard index; reserved in a super index).
    pub base_offset: U64,
    /// dwReserved3.
    pub reserved: U32,
}

/// One super-index entry (OpenDML 1.02 AVISUPERINDEX.aIndex).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct SuperIndexEntry {
    /// qwOffset of the `ix##` chunk.
    pub offset: U64,
    /// dwSize of that chunk.
    pub size: U32,
    /// dwDuration covered, in stream ticks.
    pub duration: U32,
}

/// One standard-index entry (OpenDML 1.02 AVISTDINDEX.aIndex).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct StdIndexEntry {
    /// dwOffset of the chunk's data, from the index's qwBaseOffset.
    pub offset: U32,
    /// dwSize of the chunk's data; bit 31 (AVISTDINDEX_DELTAFRAME) set for
    /// a non-key frame.
    pub size: U32,
}

/// AVIIF_KEYFRAME in an `idx1` entry.
pub const AVIIF_KEYFRAME: u32 = 0x10;
/// AVISTDINDEX_DELTAFRAME: bit 31 of a standard-index size marks a non-key frame.
pub const STDINDEX_DELTAFRAME: u32 = 0x8000_0000;
/// AVI_INDEX_OF_INDEXES.
pub const INDEX_OF_INDEXES: u8 = 0;
/// AVI_INDEX_OF_CHUNKS.
pub const INDEX_OF_CHUNKS: u8 = 1;
