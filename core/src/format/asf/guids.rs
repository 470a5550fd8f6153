//! ASF object and media-type GUIDs (ASF Specification rev 1.20 §10.1–§10.4).
//!
//! A GUID is stored little-endian in its first three fields, so the bytes
//! here are built from the textual form with [`guid`].

/// A GUID as stored in an ASF file.
pub type Guid = [u8; 16];

/// Builds the stored bytes of GUID `d1-d2-d3-d4` (ASF Specification §10).
pub const fn guid(d1: u32, d2: u16, d3: u16, d4: [u8; 8]) -> Guid {
    let a = d1.to_le_bytes();
    let b = d2.to_le_bytes();
    let c = d3.to_le_bytes();
    [
        a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], d4[0], d4[1], d4[2], d4[3], d4[4], d4[5], d4[6], d4[7],
    ]
}

/// The value `table` pairs with `g`: one compare loop over a table in flash
/// instead of the byte-by-byte decision tree that a `match` on GUID
/// constants compiles to (about 1 KiB of code for eight GUIDs on thumbv7em).
pub fn lookup<T: Copy>(g: &Guid, table: &[(Guid, T)]) -> Option<T> {
    table.iter().find(|(t, _)| t == g).map(|&(_, v)| v)
}

/// ASF_Data_Object (§5.1).
pub const DATA: Guid = guid(
    0x75B2_2636,
    0x668E,
    0x11CF,
    [0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C],
);
/// ASF_Simple_Index_Object (§6.1).
pub const SIMPLE_INDEX: Guid = guid(
    0x3300_0890,
    0xE5B1,
    0x11CF,
    [0x89, 0xF4, 0x00, 0xA0, 0xC9, 0x03, 0x49, 0xCB],
);
/// ASF_Index_Object (§6.2).
pub const INDEX: Guid = guid(
    0xD6E2_29D3,
    0x35DA,
    0x11D1,
    [0x90, 0x34, 0x00, 0xA0, 0xC9, 0x03, 0x49, 0xBE],
);
/// ASF_File_Properties_Object (§3.2).
pub const FILE_PROPERTIES: Guid = guid(
    0x8CAB_DCA1,
    0xA947,
    0x11CF,
    [0x8E, 0xE4, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65],
);
/// ASF_Stream_Properties_Object (§3.3).
pub const STREAM_PROPERTIES: Guid = guid(
    0xB7DC_0791,
    0xA9B7,
    0x11CF,
    [0x8E, 0xE6, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65],
);
/// ASF_Header_Extension_Object (§3.4).
pub const HEADER_EXTENSION: Guid = guid(
    0x5FBF_03B5,
    0xA92E,
    0x11CF,
    [0x8E, 0xE3, 0x00, 0xC0, 0x0C, 0x20, 0x53, 0x65],
);
/// ASF_Content_Description_Object (§3.10).
pub const CONTENT_DESCRIPTION: Guid = guid(
    0x75B2_2633,
    0x668E,
    0x11CF,
    [0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C],
);
/// ASF_Extended_Content_Description_Object (§3.11).
pub const EXTENDED_CONTENT_DESCRIPTION: Guid = guid(
    0xD2D0_A440,
    0xE307,
    0x11D2,
    [0x97, 0xF0, 0x00, 0xA0, 0xC9, 0x5E, 0xA8, 0x50],
);
/// ASF_Extended_Stream_Properties_Object (§4.1).
pub const EXTENDED_STREAM_PROPERTIES: Guid = guid(
    0x14E6_A5CB,
    0xC672,
    0x4332,
    [0x83, 0x99, 0xA9, 0x69, 0x52, 0x06, 0x5B, 0x5A],
);
/// ASF_Metadata_Object (§4.7).
pub const METADATA: Guid = guid(
    0xC5F8_CBEA,
    0x5BAF,
    0x4877,
    [0x84, 0x67, 0xAA, 0x8C, 0x44, 0xFA, 0x4C, 0xCA],
);
/// ASF_Metadata_Library_Object (§4.8).
pub const METADATA_LIBRARY: Guid = guid(
    0x4423_1C94,
    0x9498,
    0x49D1,
    [0xA1, 0x41, 0x1D, 0x13, 0x4E, 0x45, 0x70, 0x54],
);

/// ASF_Audio_Media (§10.4).
pub const AUDIO_MEDIA: Guid = guid(
    0xF869_9E40,
    0x5B4D,
    0x11CF,
    [0xA8, 0xFD, 0x00, 0x80, 0x5F, 0x5C, 0x44, 0x2B],
);
/// ASF_Video_Media (§10.4).
pub const VIDEO_MEDIA: Guid = guid(
    0xBC19_EFC0,
    0x5B4D,
    0x11CF,
    [0xA8, 0xFD, 0x00, 0x80, 0x5F, 0x5C, 0x44, 0x2B],
);
/// ASF_Command_Media (§10.4).
pub const COMMAND_MEDIA: Guid = guid(
    0x59DA_CFC0,
    0x59E6,
    0x11D0,
    [0xA3, 0xAC, 0x00, 0xA0, 0xC9, 0x03, 0x48, 0xF6],
);
/// ASF_JFIF_Media (§10.4).
pub const JFIF_MEDIA: Guid = guid(
    0xB61B_E100,
    0x5B4E,
    0x11CF,
    [0xA8, 0xFD, 0x00, 0x80, 0x5F, 0x5C, 0x44, 0x2B],
);
/// ASF_Binary_Media (§10.4), used by DVR-MS for embedded audio.
pub const BINARY_MEDIA: Guid = guid(
    0x3AFB_65E2,
    0x47EF,
    0x40F2,
    [0xAC, 0x2C, 0x70, 0xA9, 0x0D, 0x71, 0xD3, 0x43],
);
/// The DVR-MS major type for audio carried as binary media.
pub const BINARY_AUDIO: Guid = guid(
    0x3117_8C9D,
    0x03E1,
    0x4528,
    [0xB5, 0x82, 0x3D, 0xF9, 0xDB, 0x22, 0xF5, 0x03],
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_guid_bytes() {
        // ASF_Header_Object (§3.1), kept in `crate::signature` for detection.
        assert_eq!(
            guid(
                0x75B2_2630,
                0x668E,
                0x11CF,
                [0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C]
            ),
            crate::signature::ASF_HEADER_GUID
        );
    }
}
